// What the shim believes, and what one session can reach of another's
// (issue 36, findings 2 and 5; docs/security.md, "The shim's environment"
// and "Rings and inboxes of other sessions").
//
// - Session B's process finds session A's ring name (in A's meta.json,
//   which any session reads) and cannot open the segment read-write, by
//   name or through the supervisor's /proc/PID/root: the command's
//   /dev/shm holds its own ring alone. A's changes are recorded.
// - Under --mode auto a static `env` that rewrites a dynamic child's
//   GUARD_ROOT, GUARD_SHIM_PENDING or GUARD_SHIM_RING (a ring the session
//   made itself) no longer hides the child's changes: the tracer refuses
//   its shim's handshake, and records its calls.
// - Under --mode preload nothing can check the shim's environment: the
//   decoy root's delete runs unrecorded, as docs/security.md says.
// - A process that closes its inherited fds (Python's subprocess) still
//   finds its ring by name and is captured by its shim.
// Each mode is named by the run itself: the test is modeless.
#define BOOST_TEST_MODULE shim_trust
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "tests/e2e/support/durability_checks.h"
#include "tests/e2e/support/expect_capture.h"
#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_stats.h"

namespace guard::e2e {
namespace {

constexpr int kTimeoutSeconds = 120;
const char kBusybox[] = "/usr/bin/busybox";

GuardRun InMode(const std::string& mode, const std::string& script) {
  GuardRun run;
  run.guard_options = {"--mode", mode};
  run.command = {"bash", "-c", script};
  run.timeout_seconds = kTimeoutSeconds;
  return run;
}

std::string RingOf(const Workspace& ws, const std::string& id) {
  std::ifstream in(ws.home() + "/sessions/" + id + "/meta.json");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  return j.is_object() && j.contains("ring") ? j["ring"].get<std::string>() : "";
}

// Session A waits while session B's ring_thief tries A's ring, then removes
// a file and overwrites another.
void CrossSessionRingIsOutOfReach(const std::string& mode) {
  Workspace a, b;
  a.Write("a", "session A's file, removed after the attempt\n");
  a.Write("b", "session A's file, overwritten after the attempt\n");
  TreeSnapshot before = SnapshotTree(a.tree());
  const std::string go = a.outside() + "/go";
  std::vector<std::string> earlier = a.SessionIds();
  ChildProcess session_a(
      GuardSpec(a, InMode(mode, "while [ ! -e " + go + " ]; do sleep 0.05; done; rm a; echo evil > b")));
  // Its ring is named in its meta.json before the command starts.
  std::vector<std::string> ids;
  std::string ring;
  for (int i = 0; i < 1200 && ring.empty(); ++i) {
    ids = a.SessionIds();
    std::erase_if(ids, [&](const std::string& id) { return std::count(earlier.begin(), earlier.end(), id) > 0; });
    if (ids.size() == 1) ring = RingOf(a, ids[0]);
    if (ring.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  BOOST_REQUIRE(!ring.empty());

  GuardRun thief;
  thief.guard_options = {"--mode", mode};
  thief.command = {TestProgram("ring_thief")};
  thief.env["GUARD_HOME"] = a.home();  // where every session of the user is
  ProcessSpec spec = GuardSpec(b, thief);
  spec.env["GUARD_HOME"] = a.home();
  ProcessResult t = RunProcess(spec);
  WriteFile(go, "");
  ProcessResult done = session_a.Wait();

  BOOST_REQUIRE_MESSAGE(t.exit_code == 0, DescribeResult(t));
  // It found A's ring by its name, and could open it by no path.
  BOOST_TEST(t.out.find("/dev/shm/" + ring + ": ") != std::string::npos, t.out);
  std::istringstream lines(t.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(ring) != std::string::npos) BOOST_TEST(line.find(": opened") == std::string::npos, line);
  }
  // It tried A's processes too (their private /dev/shm holds the ring).
  BOOST_TEST(t.out.find("through other processes: 0 tried") == std::string::npos, t.out);
  GuardResult r;
  static_cast<ProcessResult&>(r) = done;
  r.new_sessions = ids;
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  SessionView s = ExpectCapture(a, r, before, {{OpKind::kDelete, "a"}, {OpKind::kModify, "b"}});
  ExpectPreImagesOf(s, before, {"a", "b"});
  UndoGivesBack(a, r, before, kTimeoutSeconds);
}

BOOST_AUTO_TEST_CASE(AnotherSessionsRingCannotBeOpenedUnderAuto) { CrossSessionRingIsOutOfReach("auto"); }
BOOST_AUTO_TEST_CASE(AnotherSessionsRingCannotBeOpenedUnderPreload) { CrossSessionRingIsOutOfReach("preload"); }

// Whether a process whose environment names session `id` runs (its
// command has started).
bool SessionHasProcess(const std::string& id) {
  const std::string needle = std::string("GUARD_SESSION=") + id + '\0';
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "environ", std::ios::binary);
    std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (env.find(needle) != std::string::npos) return true;
  }
  return false;
}

// Session A waits (its inbox made, its command in its own namespaces)
// while session B's inbox_thief looks for A's inbox by every way a process
// has: by name, through /proc/PID/root and /proc/PID/fd of A's processes.
BOOST_AUTO_TEST_CASE(AnotherSessionsInboxIsOutOfReachUnderAuto) {
  Workspace a, b;
  a.Write("a", "session A's file, removed after the attempt\n");
  TreeSnapshot before = SnapshotTree(a.tree());
  const std::string go = a.outside() + "/go";
  std::vector<std::string> earlier = a.SessionIds();
  ChildProcess session_a(GuardSpec(a, InMode("auto", "while [ ! -e " + go + " ]; do sleep 0.05; done; rm a")));
  std::vector<std::string> ids;
  for (int i = 0; i < 1200; ++i) {
    ids = a.SessionIds();
    std::erase_if(ids, [&](const std::string& id) { return std::count(earlier.begin(), earlier.end(), id) > 0; });
    if (ids.size() == 1 && SessionHasProcess(ids[0])) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  BOOST_REQUIRE_EQUAL(ids.size(), 1u);
  BOOST_REQUIRE(SessionHasProcess(ids[0]));
  // From outside every session, A's inbox is there (so the thief's
  // failure below is the isolation's doing, not an absent inbox).
  BOOST_REQUIRE(PathExists(a.home() + "-inbox/" + ids[0]));

  GuardRun thief;
  thief.guard_options = {"--mode", "auto"};
  thief.command = {TestProgram("inbox_thief")};
  thief.env["GUARD_HOME"] = a.home();
  ProcessSpec spec = GuardSpec(b, thief);
  spec.env["GUARD_HOME"] = a.home();
  ProcessResult t = RunProcess(spec);
  WriteFile(go, "");
  ProcessResult done = session_a.Wait();

  BOOST_REQUIRE_MESSAGE(t.exit_code == 0, DescribeResult(t));
  BOOST_TEST(t.out.find("sessions: 0") == std::string::npos, t.out);
  BOOST_TEST(t.out.find("tried: 0") == std::string::npos, t.out);
  std::istringstream lines(t.out);
  for (std::string line; std::getline(lines, line);) {
    BOOST_TEST(line.find(": reached") == std::string::npos, line);
  }
  GuardResult r;
  static_cast<ProcessResult&>(r) = done;
  r.new_sessions = ids;
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  SessionView s = ExpectCapture(a, r, before, {{OpKind::kDelete, "a"}});
  ExpectPreImagesOf(s, before, {"a"});
  UndoGivesBack(a, r, before, kTimeoutSeconds);
}

struct StatsRun {
  GuardResult result;
  std::map<std::string, long long> stats;
};

StatsRun RunWithStats(const Workspace& ws, const GuardRun& run) {
  GuardRun with = run;
  const std::string path = ws.outside() + "/stats";
  with.env["GUARD_STATS_FILE"] = path;
  StatsRun out;
  out.result = RunGuard(ws, with);
  out.stats = ReadGuardStats(path);
  return out;
}

// A static env (nothing puts guard's variables back) starts dynamic
// programs whose shims are told another root, another inbox, a ring the
// session copied itself: each delete and truncation is recorded all the
// same, and undo gives every byte back.
BOOST_AUTO_TEST_CASE(AForgedEnvironmentUnderAutoHidesNoChange) {
  BOOST_REQUIRE(PathExists(kBusybox));
  Workspace ws;
  ws.Mkdir("decoy");
  ws.Write("rooted", "removed under a decoy root\n");
  ws.Write("pended", "removed with its pre-image sent elsewhere\n");
  ws.Write("truncated", std::string(300 << 10, 't'));  // over 256 KiB: its pre-image is a copy in the inbox
  ws.Write("ringed", "removed with records put into a ring of the session's own\n");
  // Shaped as an inbox (its shard directories), on the tree's mount.
  MakeDir(ws.outside() + "/elsewhere");
  for (int shard = 0; shard < 8; ++shard) MakeDir(ws.outside() + "/elsewhere/" + std::to_string(shard));
  TreeSnapshot before = SnapshotTree(ws.tree());
  const std::string script = std::string(kBusybox) + " env GUARD_ROOT=$PWD/decoy /bin/rm rooted\n" + kBusybox +
                             " env GUARD_SHIM_PENDING=" + ws.outside() +
                             "/elsewhere bash -c 'rm pended; : > truncated'\n"
                             "cp /dev/shm/$GUARD_SHIM_RING /dev/shm/mine-$$ && " + kBusybox +
                             " env GUARD_SHIM_RING=mine-$$ /bin/rm ringed; rm -f /dev/shm/mine-$$\n";
  StatsRun run = RunWithStats(ws, InMode("auto", script));
  BOOST_REQUIRE_MESSAGE(run.result.exit_code == 0, DescribeResult(run.result));
  BOOST_TEST(run.stats["shim_hellos_refused"] >= 3, run.stats["shim_hellos_refused"] << " refused");
  SessionView s = ExpectCapture(ws, run.result, before,
                                {{OpKind::kDelete, "rooted"}, {OpKind::kDelete, "pended"},
                                 {OpKind::kModify, "truncated"}, {OpKind::kDelete, "ringed"}});
  ExpectPreImagesOf(s, before, {"rooted", "pended", "truncated", "ringed"});
  UndoGivesBack(ws, run.result, before, kTimeoutSeconds);
}

// The same rewrite under --mode preload: no tracer stands behind the shim,
// so nothing can hold its environment to the truth. The decoy root's
// delete runs with no pre-image: guard sees it go and says it was not
// captured, and undo cannot give it back (docs/security.md: under preload
// the shim believes its environment).
BOOST_AUTO_TEST_CASE(UnderPreloadTheShimBelievesItsEnvironment) {
  BOOST_REQUIRE(PathExists(kBusybox));
  Workspace ws;
  ws.Mkdir("decoy");
  ws.Write("rooted", "removed under a decoy root\n");
  ws.Write("kept", "removed under the real root\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  GuardRun run = InMode("preload", std::string(kBusybox) + " env GUARD_ROOT=$PWD/decoy /bin/rm rooted; rm kept");
  run.quiet = false;
  GuardResult r = RunGuard(ws, run);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(!ws.Exists("rooted"));
  BOOST_TEST(r.err.find("1 changes not captured") != std::string::npos, r.err);
  SessionView s = OnlyNewSession(ws, r);
  PreImageReport report = CheckPreImages(s, before);
  BOOST_TEST(report.verified.count("kept") == 1);
  BOOST_TEST(report.verified.count("rooted") == 0);
}

// The command's /dev/shm is its own, so the tracer looks at a name there
// through the command's root: a raw write through a symlink the session
// planted there, into the tree, is refused (the policy, block) rather than
// let run unseen; ordinary work in that /dev/shm runs.
BOOST_AUTO_TEST_CASE(ARawWriteThroughASymlinkInThePrivateShmIsNeverUnseen) {
  BOOST_REQUIRE(PathExists(kBusybox));
  Workspace ws;
  ws.Write("f", "kept\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  GuardResult r = RunGuard(ws, InMode("auto", "ln -s $PWD/f /dev/shm/l; mkdir /dev/shm/d; ln -s $PWD /dev/shm/d/r\n" +
                                                  std::string(kBusybox) + " sh -c 'echo a > /dev/shm/l; "
                                                  "echo b > /dev/shm/d/r/f; cd /dev/shm/d && echo c > r/f; "
                                                  "echo plain > /dev/shm/p && mv /dev/shm/p /dev/shm/q && "
                                                  "rm /dev/shm/q && echo ordinary'"));
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(r.out == "ordinary\n", r.out);
  BOOST_TEST(ws.Read("f") == "kept\n");
  ExpectCapture(ws, r, before, {});
}

// Python's subprocess closes every fd it did not pass: the child's shim
// finds its ring by name in the command's /dev/shm, and its handshake is
// agreed.
BOOST_AUTO_TEST_CASE(AProcessThatClosesInheritedFdsIsStillCapturedByItsShim) {
  Workspace ws;
  ws.Write("gone", "removed by a child of python's subprocess\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  StatsRun run = RunWithStats(
      ws, InMode("auto", "python3 -c 'import subprocess; subprocess.run([\"rm\", \"gone\"], close_fds=True, "
                         "check=True)'"));
  BOOST_REQUIRE_MESSAGE(run.result.exit_code == 0, DescribeResult(run.result));
  BOOST_TEST(run.stats["shim_calls"] >= 1);
  BOOST_TEST(run.stats["shim_hellos"] >= 2);  // bash, python3, rm
  BOOST_TEST(run.stats["shim_hellos_refused"] == 0);
  SessionView s = ExpectCapture(ws, run.result, before, {{OpKind::kDelete, "gone"}});
  ExpectPreImagesOf(s, before, {"gone"});
  UndoGivesBack(ws, run.result, before, kTimeoutSeconds);
}

}  // namespace
}  // namespace guard::e2e
