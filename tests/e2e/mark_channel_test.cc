// guard mark without the tracer (--mode preload): the mark reaches the
// supervisor over its socket (supervisor/session/mark_channel.h). Each mark
// follows, in the journal, every change its process made before asking,
// however far behind the ring's reader is; a process that is not one of the
// session's, asking on the session's own socket, is refused and marks
// nothing. (mark_test runs the marks' whole use, undo --to and --turns,
// under preload too; unit twin: tests/unit/session/mark_channel_test.cc.)
#define BOOST_TEST_MODULE mark_channel
#include <boost/test/unit_test.hpp>

#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/coding.h"
#include "supervisor/session/mark_channel.h"
#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

constexpr int kTimeoutSeconds = 120;

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

GuardRun Preload(const std::string& script) {
  GuardRun run;
  run.command = {"bash", "-c", script};
  run.guard_options = {"--mode", "preload"};
  run.timeout_seconds = kTimeoutSeconds;
  return run;
}

// (op, path or label) of the session's operations, in order.
std::vector<std::string> Operations(const Workspace& ws, const std::string& id) {
  GuardResult show = RunGuardCommand(ws, {"show", "--session", id, "--json"});
  BOOST_REQUIRE_MESSAGE(show.exit_code == 0, DescribeResult(show));
  std::vector<std::string> out;
  for (const auto& e : nlohmann::json::parse(show.out)) {
    if (e["op"] == "mark") out.push_back("mark " + e["label"].get<std::string>());
    else if (e["op"] == "create" && e["outside_root"] == false) out.push_back(e["path"].get<std::string>());
  }
  return out;
}

BOOST_AUTO_TEST_CASE(EachMarkFollowsEveryChangeItsProcessMadeBeforeAsking) {
  Workspace ws;
  const std::string g = Quoted(GuardBinary());
  GuardResult r = RunGuard(ws, Preload("set -e; for i in $(seq 1 40); do echo $i > f$i; " + g +
                                       " mark m$i; done"));
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  std::vector<std::string> expected;
  for (int i = 1; i <= 40; ++i) {
    expected.push_back("f" + std::to_string(i));
    expected.push_back("mark m" + std::to_string(i));
  }
  std::vector<std::string> seen = Operations(ws, r.new_sessions.at(0));
  BOOST_TEST(seen == expected, nlohmann::json(seen).dump());
}

// What the test process (no descendant of the session's guard) gets when
// it asks on the session's socket: the supervisor's answer, or -errno.
long AskAsAStranger(pid_t supervisor, const std::string& request) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  BOOST_REQUIRE(fd >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string name = MarkSocketName(supervisor);
  std::memcpy(addr.sun_path, name.data(), name.size());
  long answer = -ECONNREFUSED;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr),
              static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size())) == 0) {
    (void)!write(fd, request.data(), request.size());
    char bytes[8];
    answer = read(fd, bytes, sizeof bytes) == static_cast<ssize_t>(sizeof bytes)
                 ? static_cast<long>(static_cast<int64_t>(DecodeFixed64(bytes)))
                 : -EPIPE;
  }
  close(fd);
  return answer;
}

BOOST_AUTO_TEST_CASE(AProcessOutsideTheSessionIsRefusedOnItsSocketAndMarksNothing) {
  Workspace ws;
  const std::string g = Quoted(GuardBinary());
  const std::string ready = ws.outside() + "/ready", go = ws.outside() + "/go";
  GuardRun run = Preload("set -e; echo a > a; " + g + " mark inside; echo $PPID > " + Quoted(ready) +
                         ".tmp; mv " + Quoted(ready) + ".tmp " + Quoted(ready) + "; while [ ! -e " + Quoted(go) +
                         " ]; do sleep 0.05; done; echo b > b; " + g + " mark end");
  ChildProcess guard(GuardSpec(ws, run));
  for (int i = 0; i < 2400 && !PathExists(ready); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  BOOST_REQUIRE_MESSAGE(PathExists(ready), "the session's command did not start");
  // bash's parent: the supervisor, which listens.
  const pid_t supervisor = static_cast<pid_t>(std::stol(ReadFile(ready)));

  MarkRequest forged;
  forged.label = "forged";
  BOOST_TEST(AskAsAStranger(supervisor, EncodeMarkRequest(forged)) == -EPERM);
  BOOST_TEST(AskAsAStranger(supervisor, "not a request at all, longer than a header") == -EPERM);
  // guard mark itself, from outside, with the session's id in its
  // environment: it is no descendant of a supervisor.
  ProcessSpec outsider;
  outsider.argv = {GuardBinary(), "mark", "from outside"};
  outsider.env = GuardEnv(ws);
  outsider.env["GUARD_SESSION"] = ws.SessionIds().at(0);
  outsider.env["GUARD_SHIM_ALONE"] = "1";
  ProcessResult o = RunProcess(outsider);
  BOOST_TEST(o.exit_code == 1, DescribeResult(o));
  BOOST_TEST(o.err == "guard: mark: not inside a guard session; nothing marked\n");

  WriteFile(go, "");
  ProcessResult done = guard.Wait();
  BOOST_REQUIRE_MESSAGE(done.exit_code == 0, DescribeResult(done));
  std::vector<std::string> expected = {"a", "mark inside", "b", "mark end"};
  std::vector<std::string> seen = Operations(ws, ws.SessionIds().at(0));
  BOOST_TEST(seen == expected, nlohmann::json(seen).dump());
}

}  // namespace
}  // namespace guard::e2e
