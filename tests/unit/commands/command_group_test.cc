// How the macOS session finds its command (commands/command_group.h,
// FindOnPath: as execvp would): a name with a slash is taken as it is; PATH's
// entries in order, an empty one the current directory; a file that is not
// executable, or a directory, is passed over. The command's run itself:
// tests/e2e/watch_launch_test.cc.
#define BOOST_TEST_MODULE command_group
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "supervisor/commands/command_group.h"
#include "tests/unit/support/temp_dir.h"

namespace guard {
namespace {

BOOST_AUTO_TEST_CASE(ACommandIsFoundOnPathAsExecvpWouldFindIt) {
  testing::TempDir dir;
  for (const char* d : {"a", "b", "c"}) BOOST_REQUIRE(mkdir(dir.File(d).c_str(), 0755) == 0);
  auto file = [&](const std::string& rel, mode_t mode) {
    std::ofstream(dir.File(rel)) << "#!/bin/sh\n";
    BOOST_REQUIRE(chmod(dir.File(rel).c_str(), mode) == 0);
  };
  file("a/tool", 0644);  // not executable: passed over
  file("b/tool", 0755);
  file("c/tool", 0755);
  BOOST_REQUIRE(mkdir(dir.File("a/dir").c_str(), 0755) == 0);  // a directory: passed over
  file("c/dir", 0755);
  file("here", 0755);
  BOOST_REQUIRE(chdir(dir.path.c_str()) == 0);
  struct Case {
    std::string name, path;
    bool found;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"tool", dir.File("a") + ":" + dir.File("b") + ":" + dir.File("c"), true, dir.File("b") + "/tool"},
      {"tool", dir.File("c") + ":" + dir.File("b"), true, dir.File("c") + "/tool"},
      {"dir", dir.File("a") + ":" + dir.File("c"), true, dir.File("c") + "/dir"},
      {"here", dir.File("a") + "::" + dir.File("b"), true, "./here"},
      {"here", dir.File("a"), false, ""},
      {"./not-there", "", true, "./not-there"},  // with a slash: as it is, as execvp takes it
      {"tool", "", false, ""},
      {"", dir.File("b"), false, ""},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.name << " in " << c.path) {
      std::string out;
      Status s = FindOnPath(c.name, c.path, &out);
      BOOST_TEST(s.ok() == c.found, s.ToString());
      if (c.found) BOOST_TEST(out == c.expected);
      if (!c.found) BOOST_TEST(s.IsNotFound());
    }
  }
}

}  // namespace
}  // namespace guard
