// The words of the command line that are not guard's (command_words.h) and
// the width of help (help_format.h): git's suggestions for a misspelt
// subcommand, `guard -- WORD` for a program, the first word found past
// guard's own options, and help wrapped under its description column.
#define BOOST_TEST_MODULE command_words
#include <boost/test/unit_test.hpp>

#include <CLI/CLI.hpp>
#include <stdlib.h>

#include "supervisor/commands/command_words.h"
#include "supervisor/commands/help_format.h"

namespace guard {
namespace {

const std::vector<std::string> kNames = {"sessions", "status", "show",   "diff",  "export", "undo",
                                         "replay",   "gc",     "forget", "config", "shell-init", "help"};

using Words = std::vector<std::string>;

BOOST_AUTO_TEST_CASE(SimilarCommandsAreGitsSuggestions) {
  BOOST_TEST(SimilarCommands("dif", kNames) == Words{"diff"});         // a prefix
  BOOST_TEST(SimilarCommands("stauts", kNames) == Words{"status"});    // a swap
  BOOST_TEST(SimilarCommands("udno", kNames) == Words{"undo"});
  BOOST_TEST(SimilarCommands("replya", kNames) == Words{"replay"});
  BOOST_TEST(SimilarCommands("sh", kNames) == (Words{"show", "shell-init"}));  // every prefix
  BOOST_TEST(SimilarCommands("xyzzy", kNames).empty());
  BOOST_TEST(SimilarCommands("configure", kNames).empty());  // three deletions: past the floor
}

BOOST_AUTO_TEST_CASE(NotACommandSuggestsDashDashForAProgram) {
  setenv("PATH", "/usr/bin:/bin", 1);
  BOOST_TEST(NotACommand("ls", kNames) == "'ls' is not a guard command; did you mean 'guard -- ls'?");
  BOOST_TEST(NotACommand("./x", kNames) == "'./x' is not a guard command; did you mean 'guard -- ./x'?");
  BOOST_TEST(NotACommand("dif", kNames) == "'dif' is not a guard command; did you mean 'diff'?");
  BOOST_TEST(NotACommand("xyzzy", kNames) == "'xyzzy' is not a guard command; see 'guard help'");
  BOOST_TEST(NotACommand("s", {"show", "status"}) ==
             "'s' is not a guard command; did you mean one of 'show', 'status'?");
}

BOOST_AUTO_TEST_CASE(TheFirstWordSkipsGuardsOptionsAndTheirValues) {
  CLI::App app{"guard", "guard"};
  std::string root, mode;
  bool quiet = false;
  app.add_option("--root", root);
  app.add_option("--mode", mode);
  app.add_flag("-q,--quiet", quiet);
  auto first = [&](std::vector<const char*> argv) {
    argv.insert(argv.begin(), "guard");
    return FirstWord(app, static_cast<int>(argv.size()), argv.data());
  };
  BOOST_TEST(first({"ls", "-la"}) == "ls");
  BOOST_TEST(first({"--root", "dir", "-q", "undo"}) == "undo");
  BOOST_TEST(first({"--root=dir", "ls"}) == "ls");
  BOOST_TEST(first({"-q", "--mode", "trace", "--", "ls"}) == "");
  BOOST_TEST(first({"--mode"}) == "");
  BOOST_TEST(first({}) == "");
}

BOOST_AUTO_TEST_CASE(HelpIsWrappedUnderItsDescriptionColumn) {
  std::string line = "  --root DIR                  " + std::string(30, 'a') + " " + std::string(30, 'b') + " " +
                     std::string(30, 'c');
  BOOST_TEST(WrapHelp(line + "\n", 80) == "  --root DIR                  " + std::string(30, 'a') + "\n" +
                                             std::string(30, ' ') + std::string(30, 'b') + "\n" +
                                             std::string(30, ' ') + std::string(30, 'c') + "\n");
  BOOST_TEST(WrapHelp("short\n", 80) == "short\n");
  std::string word(100, 'x');  // longer than the room: left whole
  BOOST_TEST(WrapHelp("  " + word + "\n", 80) == "  " + word + "\n");
  std::string text = "guard: runs a command so that every file change it makes is saved first and can be undone "
                     "later on.\n";
  for (const std::string& wrapped : {WrapHelp(text, 40), WrapHelp(text, 80)}) {
    std::istringstream lines(wrapped);
    for (std::string l; std::getline(lines, l);) BOOST_TEST(l.size() <= 80u, l);
  }
}

}  // namespace
}  // namespace guard
