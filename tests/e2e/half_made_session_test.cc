// Half-made session directories (supervisor/session/half_made_session.h):
// a full state directory, or a power loss, can leave a session's directory
// without its meta.json. Before, every command then warned
// "session ...: .../meta.json: No such file or directory" for ever, gc did
// not remove it, and starting a session on the full disk named a temporary
// file in its error. Now recovery removes one that recorded nothing and
// rebuilds the meta.json of one that recorded something, and the error
// says what the user can do.
#define BOOST_TEST_MODULE half_made_session
#include <sys/stat.h>
#include <sys/time.h>

#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/tmpfs_mount.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

// The directory was last changed an hour ago: no session is being made in it.
void Age(const std::string& dir) {
  struct timeval old[2] = {{time(nullptr) - 3600, 0}, {time(nullptr) - 3600, 0}};
  BOOST_REQUIRE(utimes(dir.c_str(), old) == 0);
}

bool IsDir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

BOOST_AUTO_TEST_CASE(ASessionDirectoryWithNothingRecordedIsRemovedAndNoLongerWarnedOf) {
  Workspace ws;
  GuardResult first = RunGuardBash(ws, "echo x > a");
  BOOST_REQUIRE_MESSAGE(first.exit_code == 0, DescribeResult(first));
  const std::string dir = ws.home() + "/sessions/20260101-000000-0001234";
  BOOST_REQUIRE(mkdir(dir.c_str(), 0700) == 0);
  Age(dir);
  GuardResult listed = RunGuardCommand(ws, {"sessions"});
  BOOST_TEST(listed.exit_code == 0, DescribeResult(listed));
  BOOST_TEST(listed.err.find("meta.json") == std::string::npos, DescribeResult(listed));
  BOOST_TEST(!IsDir(dir), "the half-made session is still there");
  GuardResult gc = RunGuardCommand(ws, {"gc"});
  BOOST_TEST(gc.err.find("meta.json") == std::string::npos, DescribeResult(gc));
}

BOOST_AUTO_TEST_CASE(ASessionWithRecordsButNoMetaIsRebuiltRecoveredAndUndoable) {
  Workspace ws;
  ws.Write("a", "before\n");
  GuardResult run = RunGuardBash(ws, "echo after > a && echo new > b");
  BOOST_REQUIRE_MESSAGE(run.exit_code == 0 && run.new_sessions.size() == 1, DescribeResult(run));
  const std::string id = run.new_sessions[0];
  const std::string dir = ws.home() + "/sessions/" + id;
  BOOST_REQUIRE(unlink((dir + "/meta.json").c_str()) == 0);
  Age(dir);
  GuardResult listed = RunGuardCommand(ws, {"sessions", "--json"});
  BOOST_TEST(listed.exit_code == 0, DescribeResult(listed));
  BOOST_TEST(listed.err.find("No such file") == std::string::npos, DescribeResult(listed));
  nlohmann::json all = nlohmann::json::parse(listed.out);
  BOOST_REQUIRE_EQUAL(all.size(), 1u);
  BOOST_TEST(all[0]["id"] == id);
  BOOST_TEST(all[0]["state"] == "recovered", all[0].dump());
  GuardResult undo = RunGuardCommand(ws, {"undo", "--yes"});
  BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
  BOOST_TEST(ws.Read("a") == "before\n");
  BOOST_TEST(!ws.Exists("b"));
}

struct CanMount {
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) {
    std::string why;
    boost::test_tools::assertion_result r(CanMountTmpfs(&why));
    if (!r) r.message() << "skipped: " << why;
    return r;
  }
};

// GUARD_HOME on a 1 MiB tmpfs, filled to the last byte.
BOOST_AUTO_TEST_CASE(AFullStateDirectoryIsNamedAndItsHalfMadeSessionsGoOnceThereIsSpace,
                     *boost::unit_test::precondition(CanMount())) {
  Workspace ws;
  auto mount = std::make_unique<TmpfsMount>(ws.home(), 1 << 20);
  GuardResult first = RunGuardBash(ws, "echo x > a");  // the state directory made, with one session
  BOOST_REQUIRE_MESSAGE(first.exit_code == 0, DescribeResult(first));
  const std::string filler = ws.home() + "/filler";
  FILE* f = std::fopen(filler.c_str(), "w");
  BOOST_REQUIRE(f != nullptr);
  std::string block(4096, 'f');
  while (std::fwrite(block.data(), 1, block.size(), f) == block.size() && std::fflush(f) == 0) {
  }
  std::fclose(f);
  for (int i = 0; i < 3; ++i) {
    GuardResult full = RunGuardBash(ws, "echo y > b");
    BOOST_TEST(full.exit_code != 0, DescribeResult(full));
    BOOST_TEST(full.err.find("the state directory is full (" + ws.home()) != std::string::npos, DescribeResult(full));
    BOOST_TEST(full.err.find("guard gc") != std::string::npos, DescribeResult(full));
    BOOST_TEST(full.err.find(".tmp.") == std::string::npos, DescribeResult(full));
  }
  BOOST_REQUIRE(unlink(filler.c_str()) == 0);
  std::vector<std::string> ids = ws.SessionIds();
  for (const std::string& id : ids) Age(ws.home() + "/sessions/" + id);
  GuardResult listed = RunGuardCommand(ws, {"sessions"});
  BOOST_TEST(listed.exit_code == 0, DescribeResult(listed));
  BOOST_TEST(listed.err.find("meta.json") == std::string::npos, DescribeResult(listed));
  BOOST_TEST(ws.SessionIds().size() == 1u, "the half-made sessions are still there: " << DescribeResult(listed));
  GuardResult again = RunGuardBash(ws, "echo z > c");
  BOOST_TEST(again.exit_code == 0, DescribeResult(again));
  BOOST_TEST(again.err.find("meta.json") == std::string::npos, DescribeResult(again));
  mount.reset();
}

}  // namespace
}  // namespace guard::e2e
