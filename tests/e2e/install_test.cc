// `cmake --install` into a staging directory (DESTDIR) installs everything a
// user gets: the program, stripped, which then records and undoes a session
// on its own; the man page, which names every subcommand and option --help
// does and has its ENVIRONMENT, EXIT STATUS and EXAMPLES within 80 columns;
// the copyright file; and the bash, zsh and fish completions, which offer
// them all, where Debian's shells look under /usr and under /usr/local
// (each shell runs them in tests/completion/). A file the install rules
// leave out fails here.
#define BOOST_TEST_MODULE install
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <regex>
#include <set>
#include <sstream>

#include "tests/e2e/support/guard_command.h"

#if !defined(GUARD_CMAKE_COMMAND) || !defined(GUARD_BUILD_DIR)
#error "tests/CMakeLists.txt defines GUARD_CMAKE_COMMAND and GUARD_BUILD_DIR"
#endif

namespace guard::e2e {
namespace {

// A tree staged by `cmake --install --prefix PREFIX` with DESTDIR.
std::string Stage(const std::string& prefix) {
  static Workspace ws;
  std::string dir = ws.dir() + "/stage" + (prefix == "/usr" ? "" : "-local");
  ProcessSpec spec;
  spec.argv = {GUARD_CMAKE_COMMAND, "--install", GUARD_BUILD_DIR, "--prefix", prefix};
  spec.env["DESTDIR"] = dir;
  ProcessResult r = RunProcess(spec);
  if (r.exit_code != 0) throw std::runtime_error("cmake --install failed: " + DescribeResult(r));
  return dir;
}

// The staged trees, installed once for every test case.
const std::string& Staged() {
  static std::string stage = Stage("/usr");
  return stage;
}
const std::string& StagedLocal() {
  static std::string stage = Stage("/usr/local");
  return stage;
}

std::string Installed() { return Staged() + "/usr/bin/guard"; }

ProcessResult RunInstalled(const Workspace& ws, const std::vector<std::string>& args) {
  ProcessSpec spec;
  spec.argv = {Installed()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.cwd = ws.tree();
  spec.env = GuardEnv(ws);
  return RunProcess(spec);
}

// Subcommands and options as --help lists them: "gc" -> {"--dry-run", ...};
// "" holds the subcommand names and the top-level options.
std::map<std::string, std::set<std::string>> HelpWords(const Workspace& ws) {
  std::map<std::string, std::set<std::string>> out;
  std::regex option(R"((^|[ ,])(--?[a-z][a-z-]*))");
  auto options_of = [&](const std::string& help, std::set<std::string>* into) {
    bool in_options = false;
    std::istringstream lines(help);
    for (std::string line; std::getline(lines, line);) {
      if (line == "Options:") in_options = true;
      else if (!line.empty() && line[0] != ' ') in_options = false;
      if (!in_options || line.rfind("  -", 0) != 0) continue;
      std::string head = line.substr(0, line.find("  ", 2));
      for (std::sregex_iterator it(head.begin(), head.end(), option), end; it != end; ++it) into->insert((*it)[2]);
    }
  };
  ProcessResult top = RunInstalled(ws, {"--help"});
  BOOST_REQUIRE(top.exit_code == 0);
  options_of(top.out, &out[""]);
  std::string subs = top.out.substr(top.out.find("Subcommands:"));
  std::regex sub(R"(\n  ([a-z][a-z-]*))");
  std::vector<std::string> names;
  for (std::sregex_iterator it(subs.begin(), subs.end(), sub), end; it != end; ++it) names.push_back((*it)[1]);
  BOOST_REQUIRE(names.size() >= 12u);
  for (const std::string& name : names) {
    out[""].insert(name);
    ProcessResult r = RunInstalled(ws, {name, "--help"});
    BOOST_REQUIRE(r.exit_code == 0);
    options_of(r.out, &out[name]);
  }
  return out;
}

BOOST_AUTO_TEST_CASE(InstallPutsEveryFileInItsStandardPlace) {
  for (const char* rel : {"/usr/bin/guard", "/usr/lib/guard/libguard-shim.so", "/usr/share/man/man1/guard.1.gz",
                          "/usr/share/bash-completion/completions/guard", "/usr/share/zsh/vendor-completions/_guard_cmd",
                          "/usr/share/fish/vendor_completions.d/guard.fish", "/usr/share/doc/guard/copyright"}) {
    BOOST_TEST(PathExists(Staged() + rel), rel << " is not installed");
  }
  // Under /usr/local, zsh's fpath has site-functions, not vendor-completions.
  for (const char* rel : {"/usr/local/bin/guard", "/usr/local/share/bash-completion/completions/guard",
                          "/usr/local/share/zsh/site-functions/_guard_cmd",
                          "/usr/local/share/fish/vendor_completions.d/guard.fish"}) {
    BOOST_TEST(PathExists(StagedLocal() + rel), rel << " is not installed");
  }
  // zsh's own helper _guard (used by _seq, _tmux, _git...) is never shadowed.
  BOOST_TEST(!PathExists(Staged() + "/usr/share/zsh/vendor-completions/_guard"));
  BOOST_TEST(!PathExists(StagedLocal() + "/usr/local/share/zsh/site-functions/_guard"));
  std::string zsh = ReadFile(Staged() + "/usr/share/zsh/vendor-completions/_guard_cmd");
  BOOST_TEST(zsh.rfind("#compdef guard\n", 0) == 0, zsh.substr(0, 40));
  BOOST_TEST(zsh.find("_guard()") == std::string::npos, "the file defines zsh's _guard");
  std::string copyright = ReadFile(Staged() + "/usr/share/doc/guard/copyright");
  BOOST_TEST(copyright.rfind("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/", 0) == 0);
}

// readelf's section names of `binary`.
std::string Sections(const std::string& binary) {
  ProcessResult r = RunProcess(ProcessSpec{.argv = {"readelf", "-S", "-W", binary}});
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  return r.out;
}

BOOST_AUTO_TEST_CASE(TheInstalledBinaryIsStripped) {
  std::string built = Sections(GuardBinary());
  BOOST_REQUIRE(built.find(" .debug_info ") != std::string::npos);  // what there is to strip
  std::string installed = Sections(Installed());
  BOOST_TEST(installed.find(" .debug_info ") == std::string::npos, installed);
  BOOST_TEST(installed.find(" .symtab ") == std::string::npos, installed);
  struct stat installed_st {}, built_st {};
  BOOST_REQUIRE(stat(Installed().c_str(), &installed_st) == 0 && stat(GuardBinary().c_str(), &built_st) == 0);
  BOOST_TEST(installed_st.st_size * 4 < built_st.st_size);
}

BOOST_AUTO_TEST_CASE(ManPageHasItsSectionsWithin80Columns) {
  ProcessSpec spec{.argv = {"man", "-l", Staged() + "/usr/share/man/man1/guard.1.gz"}};
  spec.env["MANWIDTH"] = "80";
  spec.env["MANPAGER"] = "cat";
  spec.env["PAGER"] = "cat";
  ProcessResult man = RunProcess(spec);
  BOOST_REQUIRE_MESSAGE(man.exit_code == 0, DescribeResult(man));
  std::istringstream lines(man.out);
  size_t longest = 0;
  std::set<std::string> sections;
  for (std::string line; std::getline(lines, line);) {
    // Columns: UTF-8 sequences count once (groff writes a hyphen as U+2010).
    size_t columns = 0;
    for (unsigned char c : line) columns += (c & 0xC0) != 0x80;
    BOOST_TEST(columns <= 80u, "over 80 columns: " << line);
    longest = std::max(longest, columns);
    if (!line.empty() && line[0] >= 'A' && line[0] <= 'Z') sections.insert(line);
  }
  BOOST_TEST(longest > 60u);  // the page was rendered
  for (const char* section : {"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "SUBCOMMANDS", "ENVIRONMENT", "EXIT STATUS",
                              "EXAMPLES", "FILES"}) {
    BOOST_TEST(sections.count(section) == 1u, "man page lacks " << section);
  }
  for (const char* word : {"GUARD_HOME", "GUARD_MODE", "GUARD_PAGER", "NO_COLOR", "GUARD_NO_PROGRESS", "XDG_CONFIG_HOME",
                           "XDG_STATE_HOME", "125", "126", "127", "guard -- claude", "guard help undo"}) {
    BOOST_TEST(man.out.find(word) != std::string::npos, "man page lacks " << word);
  }
}

BOOST_AUTO_TEST_CASE(InstalledGuardRecordsAndUndoesASession) {
  Workspace ws;
  ws.Write("notes.txt", "before\n");
  ProcessResult version = RunInstalled(ws, {"--version"});
  BOOST_TEST(version.exit_code == 0);
  BOOST_TEST(version.out.find("guard 0.1.0 (commit ") == 0, version.out);
  ProcessResult run = RunInstalled(ws, {"--quiet", "--", "bash", "-c", "echo after > notes.txt; rm -f gone"});
  BOOST_TEST(run.exit_code == 0, DescribeResult(run));
  BOOST_TEST(ws.Read("notes.txt") == "after\n");
  ProcessResult undo = RunInstalled(ws, {"undo", "--yes"});
  BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
  BOOST_TEST(ws.Read("notes.txt") == "before\n");
  BOOST_TEST(ws.SessionIds().size() == 2u);  // the session and its undo
  // The installed guard found its shim (../lib/guard beside the binary).
  std::string log = ReadFile(ws.home() + "/sessions/" + ws.SessionIds().front() + "/guard.log");
  BOOST_TEST(log.find("capture mode auto (shim and tracer)") != std::string::npos, log);
}

BOOST_AUTO_TEST_CASE(ManPageNamesEverySubcommandAndOptionOfHelp) {
  Workspace ws;
  ProcessResult man = RunProcess(ProcessSpec{.argv = {"gzip", "-dc", Staged() + "/usr/share/man/man1/guard.1.gz"}});
  BOOST_REQUIRE(man.exit_code == 0);
  // roff writes a minus as \- and a backslash as \e.
  std::string text = std::regex_replace(man.out, std::regex(R"(\\-)"), "-");
  for (const auto& [sub, words] : HelpWords(ws)) {
    if (!sub.empty()) BOOST_TEST(text.find("guard " + sub) != std::string::npos, "man page lacks guard " << sub);
    for (const std::string& w : words)
      BOOST_TEST(text.find(w) != std::string::npos, "man page lacks " << w << " (" << (sub.empty() ? "guard" : sub) << ")");
  }
}

BOOST_AUTO_TEST_CASE(CompletionsOfferEverySubcommandAndOption) {
  Workspace ws;
  for (const char* rel : {"/usr/share/bash-completion/completions/guard", "/usr/share/zsh/vendor-completions/_guard_cmd",
                          "/usr/share/fish/vendor_completions.d/guard.fish"}) {
    std::string script = ReadFile(Staged() + rel);
    BOOST_TEST(script.find("__complete sessions") != std::string::npos, rel << " does not complete session ids");
    for (const auto& [sub, words] : HelpWords(ws)) {
      if (!sub.empty()) BOOST_TEST(script.find(sub) != std::string::npos, rel << " lacks " << sub);
      for (const std::string& w : words) {
        if (w == "-h" || w == "--help") continue;
        // fish spells options as -l NAME / -s X.
        std::string fish = w.rfind("--", 0) == 0 ? "-l " + w.substr(2) : "-s " + w.substr(1);
        BOOST_TEST((script.find(w) != std::string::npos || script.find(fish) != std::string::npos),
                   rel << " lacks " << w << " of " << (sub.empty() ? "guard" : sub));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(SessionIdsAreCompletedForTheCurrentRoot) {
  Workspace ws;
  ProcessResult run = RunInstalled(ws, {"--quiet", "--", "true"});
  BOOST_REQUIRE(run.exit_code == 0);
  ProcessResult ids = RunInstalled(ws, {"__complete", "sessions"});
  BOOST_TEST(ids.exit_code == 0);
  BOOST_TEST(ids.out == ws.SessionIds()[0] + "\nlast\n");
}

}  // namespace
}  // namespace guard::e2e
