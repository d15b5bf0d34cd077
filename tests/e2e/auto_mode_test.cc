// guard --mode auto: the preload shim captures what dynamically linked
// programs change, in-process, and streams it through the ring; the tracer
// captures the rest (a static busybox, raw syscalls). The session must hold
// the same operations as under the tracer alone, undo must give back the
// tree byte for byte, and a supervisor killed while the ring still holds
// records must lose none of them (recovery drains the ring).
#define BOOST_TEST_MODULE auto_mode
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <string>

#include "tests/e2e/support/durability_checks.h"
#include "tests/e2e/support/guard_stats.h"
#include "tests/e2e/support/expect_capture.h"
#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/killed_session.h"

namespace guard::e2e {
namespace {

constexpr int kTimeoutSeconds = 120;
constexpr OpKind kCreate = OpKind::kCreate, kModify = OpKind::kModify, kRename = OpKind::kRename,
                 kDelete = OpKind::kDelete, kMkdir = OpKind::kMkdir, kRmdir = OpKind::kRmdir,
                 kSymlink = OpKind::kSymlink, kChmod = OpKind::kChmod;

struct ModeRun {
  GuardResult result;
  std::map<std::string, long long> stats;
};

ModeRun RunIn(const Workspace& ws, const std::string& mode, const std::vector<std::string>& command) {
  GuardRun run;
  run.command = command;
  run.env["GUARD_MODE"] = mode;
  const std::string stats = ws.outside() + "/stats-" + mode;
  run.env["GUARD_STATS_FILE"] = stats;
  run.timeout_seconds = kTimeoutSeconds;
  ModeRun m;
  m.result = RunGuard(ws, run);
  BOOST_REQUIRE_MESSAGE(m.result.exit_code == 0, "exit " << m.result.exit_code << "; stderr:\n" << m.result.err);
  m.stats = ReadGuardStats(stats);
  return m;
}

void MakeTree(Workspace& ws) {
  ws.Write("gone.txt", "deleted by rm\n", 0640);
  ws.Write("over.txt", "truncated by the shell\n");
  // Larger than the shim's inline pre-images: its first write copies it into the inbox.
  ws.Write("edit.txt", std::string(300000, 'e'));
  ws.Write("from.txt", "moved\n");
  ws.Write("victim.txt", "renamed over\n");
  ws.Write("mode.txt", "chmod\n", 0644);
  ws.Mkdir("tree");
  for (int i = 0; i < 20; ++i) ws.Write("tree/f" + std::to_string(i), "file " + std::to_string(i) + "\n");
}

const char* kScript =
    "rm gone.txt && echo new > over.txt && printf x >> edit.txt && mv -f from.txt victim.txt && "
    "chmod 600 mode.txt && mkdir made && ln -s over.txt made/link && echo fresh > made/new.txt && rm -r tree";

// The same script under the shim and under the tracer alone: the same
// operations, each with its pre-image, and the shim's run stops the
// tracer far less often.
BOOST_AUTO_TEST_CASE(CoreutilsUnderTheShimAreCapturedAsUnderTheTracerWithFewerStops) {
  Workspace ws;
  MakeTree(ws);
  TreeSnapshot before = SnapshotTree(ws.tree());
  ModeRun autorun = RunIn(ws, "auto", {"bash", "-c", kScript});
  std::vector<Op> expected = {{kDelete, "gone.txt"}, {kModify, "over.txt"}, {kModify, "edit.txt"}, {kRename, "from.txt", "victim.txt"},
                              {kChmod, "mode.txt"},  {kMkdir, "made"},      {kSymlink, "made/link"},
                              {kCreate, "made/new.txt"}, {kRmdir, "tree"}};
  for (int i = 0; i < 20; ++i) expected.push_back({kDelete, "tree/f" + std::to_string(i)});
  SessionView s = ExpectCapture(ws, autorun.result, before, expected, /*ordered=*/false,
                                /*unlisted_dir=*/"");
  (void)s;
  BOOST_TEST(autorun.stats["shim_calls"] >= 29);
  UndoGivesBack(ws, autorun.result, before, kTimeoutSeconds);

  ModeRun traced = RunIn(ws, "trace", {"bash", "-c", kScript});
  BOOST_TEST(traced.stats["shim_calls"] == 0);
  BOOST_TEST(autorun.stats["seccomp_stops"] < traced.stats["seccomp_stops"] / 2,
             "auto " << autorun.stats["seccomp_stops"] << " stops, trace " << traced.stats["seccomp_stops"]);
  UndoGivesBack(ws, traced.result, before, kTimeoutSeconds);
}

// fchown changes a mode only when the kernel clears set-id bits: the shim
// lets every other fchown run unstopped, and leaves that one to the tracer,
// which records it as the chmod it amounts to (undo puts the bit back).
BOOST_AUTO_TEST_CASE(FchownOfAPlainFileRunsUnstoppedAndOfASetuidFileIsRecorded) {
  Workspace ws;
  ws.Write("plain.txt", "plain\n", 0644);
  ws.Write("suid.bin", "#!/bin/sh\n", 04755);
  TreeSnapshot before = SnapshotTree(ws.tree());
  const std::string script =
      "import os\n"
      "for i in range(50):\n"
      "    fd = os.open('plain.txt', os.O_RDONLY); os.fchown(fd, os.getuid(), os.getgid()); os.close(fd)\n"
      "fd = os.open('suid.bin', os.O_RDONLY); os.fchown(fd, os.getuid(), os.getgid()); os.close(fd)\n";
  ModeRun autorun = RunIn(ws, "auto", {"python3", "-c", script});
  ExpectCapture(ws, autorun.result, before, {{kChmod, "suid.bin"}});
  UndoGivesBack(ws, autorun.result, before, kTimeoutSeconds);
  ModeRun traced = RunIn(ws, "trace", {"python3", "-c", script});
  ExpectCapture(ws, traced.result, before, {{kChmod, "suid.bin"}});
  BOOST_TEST(autorun.stats["seccomp_stops"] + 50 <= traced.stats["seccomp_stops"],
             "auto " << autorun.stats["seccomp_stops"] << " stops, trace " << traced.stats["seccomp_stops"]);
  UndoGivesBack(ws, traced.result, before, kTimeoutSeconds);
}

// A static program never loads the shim: the tracer captures it as ever.
BOOST_AUTO_TEST_CASE(AStaticBusyboxUnderAutoIsCapturedByTheTracer) {
  Workspace ws;
  MakeTree(ws);
  TreeSnapshot before = SnapshotTree(ws.tree());
  ModeRun r = RunIn(ws, "auto", {"/bin/busybox", "rm", "-r", "tree"});
  std::vector<Op> expected = {{kRmdir, "tree"}};
  for (int i = 0; i < 20; ++i) expected.push_back({kDelete, "tree/f" + std::to_string(i)});
  ExpectCapture(ws, r.result, before, expected, /*ordered=*/false);
  BOOST_TEST(r.stats["shim_calls"] == 0);
  BOOST_TEST(r.stats["seccomp_stops"] >= 21);
  UndoGivesBack(ws, r.result, before, kTimeoutSeconds);
}

// A character device holds no file, and the tracer records nothing for it:
// the shim opens it from the stub, so that `>/dev/null` makes no stop.
BOOST_AUTO_TEST_CASE(RedirectionsToDevNullUnderAutoMakeNoStop) {
  Workspace ws;
  auto stops = [&](int n) {
    std::string script = "for i in $(seq " + std::to_string(n) + "); do echo x >/dev/null; done";
    ModeRun r = RunIn(ws, "auto", {"bash", "-c", script});
    BOOST_TEST(SessionView::Load(ws.home(), r.result.new_sessions.at(0)).OpList().empty());
    return r.stats["seccomp_stops"];
  };
  BOOST_TEST(stops(1) == stops(41));
}

// sed -i makes its new file with mkostemp and C programs write through
// fopen: glibc opens both through its internal __open, which the shim now
// makes itself, so neither stops the tracer; undo gives the tree back.
BOOST_AUTO_TEST_CASE(SedInPlaceUnderAutoStopsOnlyForItsAclCopy) {
  Workspace ws;
  ws.Write("F", "a line\nand another\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  ModeRun r = RunIn(ws, "auto", {"sed", "-i", "s/a/b/", "F"});
  BOOST_TEST(ws.Read("F") == "b line\nbnd another\n");
  BOOST_TEST(r.stats["shim_calls"] >= 2);  // mkostemp's creation and the rename over F
  // The one stop left is libacl's fsetxattr of system.posix_acl_access on
  // the new file (an ACL sets the mode: the tracer's).
  BOOST_TEST(r.stats["seccomp_stops"] <= 1, r.stats["seccomp_stops"] << " stops");
  UndoGivesBack(ws, r.result, before, kTimeoutSeconds);
}

// sed's libselinux calls fopen from its constructor, before the shim's own
// constructor has run (preloaded objects are initialised last): the shim's
// start must map its stub then too, or its ring's mapping stops.
BOOST_AUTO_TEST_CASE(ACallFromAnotherLibrarysConstructorMakesNoStop) {
  Workspace ws;
  ws.Write("F", "a line\n");
  ModeRun r = RunIn(ws, "auto", {"sed", "-n", "p", "F"});
  BOOST_TEST(r.stats["seccomp_stops"] == 0);
}

BOOST_AUTO_TEST_CASE(StdioAndMkstempWritersUnderAutoMakeNoStopAndUndoGivesTheTreeBack) {
  Workspace ws;
  ws.Write("truncated.txt", std::string(20000, 't'));
  ws.Write("appended.txt", "first\n");
  ws.Write("updated.txt", "updated by r+\n");
  ws.Write("source.txt", "read\n");
  ws.Write("reopened-w.txt", "old w\n");
  ws.Write("reopened-a.txt", "old a\n");
  ws.Write("replaced.txt", "replaced\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  ModeRun r = RunIn(ws, "auto", {TestProgram("stdio_writer")});
  BOOST_TEST(ws.Read("appended.txt") == "first\nappended\n");
  BOOST_TEST(ws.Read("updated.txt") == "UPdated by r+\n");
  BOOST_TEST(ws.Read("reopened-a.txt") == "old a\nreopened\n");
  BOOST_TEST(ws.Read("replaced.txt") == "replacement\n");
  BOOST_TEST(r.stats["seccomp_stops"] == 0);
  BOOST_TEST(r.stats["shim_calls"] >= 8);  // six opens, mkstemp, the rename
  SessionView s = OnlyNewSession(ws, r.result);
  ExpectPreImagesOf(s, before, {"truncated.txt", "appended.txt", "updated.txt", "reopened-w.txt", "reopened-a.txt",
                                "replaced.txt"});
  UndoGivesBack(ws, r.result, before, kTimeoutSeconds);
}

// guard SIGKILLed while every record of the session is still in the ring
// (the test hook keeps the live supervisor from draining it): recovery
// drains the ring, and undo gives back every file.
BOOST_AUTO_TEST_CASE(RecordsLeftInTheRingByAKilledSupervisorAreRecoveredAndUndone) {
  Workspace ws;
  MakeTree(ws);
  TreeSnapshot before = SnapshotTree(ws.tree());
  KillWhen when;
  when.env["GUARD_MODE"] = "auto";
  when.env["GUARD_TEST_HOLD_RING"] = "1";
  const std::string ready = ws.outside() + "/ready";
  when.script = std::string(kScript) + " && touch " + ready + " && sleep 600";
  when.ready = [ready] { return access(ready.c_str(), F_OK) == 0; };
  when.ready_for_kill = [](const std::string&) { return true; };
  KilledSession k = RunAndKillGuard(ws, when);
  // Nothing reached the journal while the session ran.
  GuardResult undo = RunGuardWithin(ws, {"undo", "--yes", "--session", k.id}, kTimeoutSeconds);
  BOOST_TEST(undo.exit_code == 0, undo.err);
  std::vector<std::string> diff = DiffSnapshots(before, SnapshotTree(ws.tree()));
  BOOST_TEST(diff.empty(), "after undo: " << (diff.empty() ? "" : diff.front()));
}

// A path with a post-image from before, whose last calls (a symlink made
// beside it and renamed over it, as `ln -sfn` does) are still in the ring
// when guard is killed: recovery must take its end state from the tree,
// not from the older post-image (the history it decides by must hold the
// calls it drained), or replay puts the old file back and undo finds a
// conflict.
BOOST_AUTO_TEST_CASE(RecoveryTakesTheEndStateOfAPathWhoseLastCallsWereInTheRing) {
  Workspace ws;
  ws.Write("keep", "untouched\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  const std::string go = ws.outside() + "/go", done = ws.outside() + "/done";
  KillWhen when;
  when.env["GUARD_MODE"] = "auto";
  when.env["GUARD_TEST_HOLD_RING"] = "1";
  // busybox is static: the tracer records p and the work saver saves it.
  when.script = "/bin/busybox sh -c 'echo v1 > p' && while [ ! -e " + go + " ]; do sleep 0.05; done && ln -sfn keep p && touch " +
                done + " && sleep 600";
  when.ready = [&ws] { return ws.Exists("p"); };
  when.ready_for_kill = [&](const std::string& id) {
    if (PostImageCount(ws, id, "p") > 0 && access(go.c_str(), F_OK) != 0) WriteFile(go, "");
    return access(done.c_str(), F_OK) == 0;
  };
  KilledSession k = RunAndKillGuard(ws, when);
  GuardResult replay = RunGuardWithin(ws, {"replay", "--yes", "--session", k.id}, kTimeoutSeconds);
  BOOST_TEST(replay.exit_code == 0, DescribeResult(replay));
  std::vector<std::string> diff = DiffSnapshots(k.at_kill, SnapshotTree(ws.tree()));
  BOOST_TEST(diff.empty(), "after replay: " << (diff.empty() ? "" : diff.front()));
  GuardResult undo = RunGuardWithin(ws, {"undo", "--yes", "--session", k.id}, kTimeoutSeconds);
  BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
  diff = DiffSnapshots(before, SnapshotTree(ws.tree()));
  BOOST_TEST(diff.empty(), "after undo: " << (diff.empty() ? "" : diff.front()));
}

// glibc makes fchmodat(AT_SYMLINK_NOFOLLOW) (tar -x restores directory
// modes so) as an O_PATH open and a chmod of /proc/self/fd/N, which the
// tracer would stop: the shim records it and makes it from the stub.
// A guard that cannot find its shim (a copy of the binary elsewhere, or a
// broken install) captures with the tracer alone, and says so on stderr
// once: before, only the session's log said it.
BOOST_AUTO_TEST_CASE(AutoWithoutItsShimSaysSoAndTheTracerCapturesAlone) {
  Workspace ws;
  ws.Write("f", "before\n");
  GuardRun run;
  run.command = {"bash", "-c", "echo after > f"};
  run.guard_options = {"--mode", "auto"};
  run.env["GUARD_SHIM_PATH"] = ws.outside() + "/no-such-shim.so";
  GuardResult r = RunGuard(ws, run);
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.err.find("guard: warning: mode auto without the shim") != std::string::npos, r.err);
  BOOST_TEST(ws.Read("f") == "after\n");
  BOOST_REQUIRE(r.new_sessions.size() == 1u);
  GuardResult undo = RunGuardCommand(ws, {"undo", "--session", r.new_sessions[0], "--yes"});
  BOOST_TEST(undo.exit_code == 0, undo.err);
  BOOST_TEST(ws.Read("f") == "before\n");
}

BOOST_AUTO_TEST_CASE(ChmodWithoutFollowingRunsUnstoppedAndIsUndone) {
  Workspace ws;
  ws.Mkdir("d");
  ws.Write("d/f", "content\n", 0600);
  BOOST_REQUIRE_EQUAL(chmod(ws.Path("d").c_str(), 0700), 0);
  BOOST_REQUIRE_EQUAL(symlink("f", ws.Path("d/l").c_str()), 0);
  TreeSnapshot before = SnapshotTree(ws.tree());
  ModeRun r = RunIn(ws, "auto",
                    {"python3", "-c",
                     "import os\n"
                     "os.chmod('d', 0o755, follow_symlinks=False)\n"
                     "os.chmod('d/f', 0o644, follow_symlinks=False)\n"
                     "try:\n"
                     "    os.chmod('d/l', 0o600, follow_symlinks=False)\n"
                     "except NotImplementedError:\n"
                     "    pass  # python's word for fchmodat's EOPNOTSUPP on a symlink\n"});
  BOOST_TEST(r.stats["seccomp_stops"] == 0);
  struct stat st;
  BOOST_REQUIRE_EQUAL(stat(ws.Path("d").c_str(), &st), 0);
  BOOST_TEST((st.st_mode & 07777) == 0755u);
  UndoGivesBack(ws, r.result, before, kTimeoutSeconds);
}

}  // namespace
}  // namespace guard::e2e
