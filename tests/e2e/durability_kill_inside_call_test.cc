// The narrowest kill moment: the agent (or guard) dies inside a mutating
// call, after guard recorded the operation (and its pre-image) at the
// seccomp stop but before it saw the call return. The operation then has no outcome record;
// it may or may not have happened. docs/durability.md: undo restores its
// pre-image either way, and the session's end must still say what the path
// holds, so that undo and replay are exact and complete.
//
// A python3 loop makes one kind of call as fast as it can; the agent (its
// only process) or guard is killed with SIGKILL a seeded few milliseconds
// after it started looping, again and again until kills have landed inside
// a call of that kind both before and after the call took effect, which
// takes a handful of attempts (about a third of the kills land in a call).
#define BOOST_TEST_MODULE durability_kill_inside_call
#include <signal.h>
#include <time.h>

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <optional>
#include <set>

#include "tests/e2e/support/durability_checks.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/kill_scenario.h"
#include "tests/e2e/support/process_tree.h"
#include "tests/e2e/support/random_workload.h"
#include "tests/e2e/support/session_view.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

constexpr int kMaxAttempts = 30;

// argv[1]: the call; argv[2]: where to write the pid once looping.
const char* kLoop = R"(
import ctypes, itertools, os, sys
kind, ready = sys.argv[1], sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
open(ready + ".tmp", "w").write("%d\n" % os.getpid())
os.rename(ready + ".tmp", ready)
for i in itertools.count():
    if kind == "create":
        open("f%d" % i, "wb").close()
    elif kind == "append":
        with open("a.txt", "ab") as f:
            f.write(b"%d\n" % i)
    elif kind == "rename":  # a.txt -> r0 -> r1 -> ...: the tree never looks as before
        os.rename("a.txt" if i == 0 else "r%d" % (i - 1), "r%d" % i)
    elif kind == "rename-dir":  # a directory with files in it: d -> d0 -> d1 -> ...
        os.rename("d" if i == 0 else "d%d" % (i - 1), "d%d" % i)
    elif kind == "rename-dir-in":  # a directory made outside, moved in with its files
        src = os.path.join(os.path.dirname(ready), "src%d" % i)
        os.mkdir(src)
        open(os.path.join(src, "f"), "wb").write(b"from outside %d\n" % i)
        os.rename(src, "in%d" % i)
    elif kind == "rename-over":
        open("t%d" % i, "wb").write(b"version %d\n" % i)
        os.replace("t%d" % i, "a.txt")
    elif kind == "unlink":
        open("f%d" % i, "wb").write(b"doomed %d\n" % i)
        os.unlink("f%d" % i)
    elif kind == "mkdir":
        os.mkdir("d%d" % i)
    elif kind == "symlink":
        os.symlink("target %d" % i, "s%d" % i)
    elif kind == "link":
        os.link("a.txt", "l%d" % i)
    elif kind == "chmod":
        os.chmod("a.txt", 0o600 if i % 2 else 0o640)
    elif kind == "exchange":  # a.txt <-> b.txt (RENAME_EXCHANGE), files of different sizes
        if i == 0:
            open("b.txt", "wb").write(b"the other file, longer than the first one\n")
        if libc.renameat2(-100, b"a.txt", -100, b"b.txt", 2) != 0:
            raise OSError(ctypes.get_errno(), "renameat2")
)";

void SleepUs(long us) {
  timespec ts{us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

// Whether the call of `op`, which has no outcome, took effect, as far as the
// tree the kill left tells; nullopt when it cannot tell (an open for append
// and a chmod to the mode the file had look the same either way).
std::optional<bool> Happened(const Record& op, const TreeSnapshot& stopped) {
  bool has = stopped.Find(op.path) != nullptr;
  switch (op.kind) {
    case OpKind::kCreate:
    case OpKind::kMkdir:
    case OpKind::kSymlink:
      return has;
    case OpKind::kLink:
      return stopped.Find(op.path2) != nullptr;
    case OpKind::kRename:
    case OpKind::kDelete:
      return !has;
    case OpKind::kExchange: {
      // The two files differ in size: a.txt holds one or the other.
      const TreeEntry* now = stopped.Find(op.path);
      if (now == nullptr || op.before.size == op.before2.size) return std::nullopt;
      if (now->content.size() == op.before2.size) return true;
      if (now->content.size() == op.before.size) return false;
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

// Kills the loop (the agent, or guard) until kills have landed inside a
// call of kind `op` both before and after the call took effect (where the
// tree can tell the two apart), and checks undo and replay of each such
// session: exact, and exiting 0. Says so when no kill landed there in
// kMaxAttempts attempts.
void KillInsideCall(KillTarget target, const std::string& kind, OpKind op) {
  Rng rng(std::hash<std::string>{}(kind) + static_cast<uint64_t>(target));
  std::set<std::optional<bool>> seen;
  const char* who = target == KillTarget::kGuard ? "guard" : "the agent";
  for (int attempt = 1; attempt <= kMaxAttempts; ++attempt) {
    Workspace ws;
    ws.Write("a.txt", "the original content\n", 0644);
    ws.Mkdir("d", 0750);
    ws.Write("d/inner.txt", "inside the moved directory\n", 0640);
    ws.Mkdir("d/sub");
    ws.Symlink("../inner.txt", "d/sub/link");
    TreeSnapshot before = SnapshotTree(ws.tree());
    std::string ready = ws.outside() + "/ready";
    GuardRun run;
    run.command = {"python3", "-c", kLoop, kind, ready};
    run.env["PATH"] = "/usr/sbin:/usr/bin:/sbin:/bin";
    ChildProcess guard_proc(GuardSpec(ws, run));
    std::string pid_text;
    for (int i = 0; i < 20000 && pid_text.empty(); ++i) {
      if (PathExists(ready)) pid_text = ReadFile(ready);
      else SleepUs(1000);
    }
    BOOST_REQUIRE_MESSAGE(!pid_text.empty(), "the loop never started");
    SleepUs(2000 + static_cast<long>(rng.Below(20000)));
    kill(target == KillTarget::kGuard ? guard_proc.pid() : static_cast<pid_t>(std::atoi(pid_text.c_str())), SIGKILL);
    ProcessResult r = guard_proc.Wait();
    BOOST_REQUIRE_MESSAGE(r.exit_code == 137, DescribeResult(r));
    BOOST_REQUIRE_EQUAL(ws.SessionIds().size(), 1u);
    std::string id = ws.SessionIds()[0];
    BOOST_REQUIRE_MESSAGE(WaitGone(ProcessesWithEnv("GUARD_SESSION", id), 5000).empty(), "the agent survived");

    SessionView s = SessionView::Load(ws.home(), id);
    const Record* open_op = nullptr;
    for (const Record* o : s.Operations()) {
      if (!(o->flags & kOutsideRoot) && s.OutcomeOf(o->seq) == nullptr) open_op = o;
    }
    if (open_op == nullptr || open_op->kind != op) continue;  // the kill landed elsewhere
    TreeSnapshot stopped = SnapshotTree(ws.tree());
    std::optional<bool> happened = Happened(*open_op, stopped);
    if (seen.count(happened)) continue;  // this case is checked already
    seen.insert(happened);

    std::string where = kind + ": " + who + " killed inside " + open_op->syscall + " of " +
                        Printable(open_op->path) + " (op " + std::to_string(open_op->seq) + ", no outcome; " +
                        (!happened ? "it may have taken effect" : *happened ? "it took effect" : "it did not take effect") +
                        ", attempt " + std::to_string(attempt) + ")";
    BOOST_TEST_MESSAGE(where);
    if (target == KillTarget::kGuard) {
      GuardResult rec = RunGuardWithin(ws, {"recover"}, 60);
      BOOST_TEST(rec.exit_code == 0, where << ": " << DescribeResult(rec));
    }
    BOOST_TEST(SessionStateOf(ws, id) == (target == KillTarget::kGuard ? "recovered" : "killed"));
    GuardResult undo = RunGuardWithin(ws, {"undo", "--yes", "--session", id}, 60);
    std::vector<std::string> undo_diff = DiffSnapshots(before, SnapshotTree(ws.tree()));
    GuardResult replay = RunGuardWithin(ws, {"replay", "--yes", "--session", id}, 60);
    std::vector<std::string> replay_diff = DiffSnapshots(stopped, SnapshotTree(ws.tree()));
    BOOST_TEST(undo.exit_code == 0, where << ": " << DescribeResult(undo));
    BOOST_TEST(undo_diff.empty(), where << ": undo inexact: " << Printable(undo_diff.empty() ? "" : undo_diff[0]));
    BOOST_TEST(replay.exit_code == 0, where << ": " << DescribeResult(replay));
    BOOST_TEST(replay_diff.empty(),
               where << ": replay inexact: " << Printable(replay_diff.empty() ? "" : replay_diff[0]));
    if (seen.count(std::nullopt) || (seen.count(true) && seen.count(false))) return;
  }
  if (seen.empty()) {
    BOOST_TEST_MESSAGE(kind << ": no kill of " << who << " landed inside a call in " << kMaxAttempts
                            << " attempts; nothing checked");
  }
}

// Guard bugs found by these tests:
// (A) Fixed (the tracer now marks a call whose process died inside it as of
// unknown outcome, and its paths get final states). It was: when the agent dies inside a call, guard seals the session without the
// final state of the paths that call named (they were never counted as
// changed: that happens when the call returns). Replay then cannot rebuild
// a path such a call created ("cannot replay f22: the journal does not say
// what it held then", exit 1), undo and replay exit 1 naming such paths
// even when the call did not take effect, and a file renamed by such a call
// cannot be followed back (see G). Recovery, after a guard kill, does record
// those final states. By hand (fails about one run in three):
//   guard -- bash -c 'echo $$ > ../pid; i=0; while :; do : > f$((i++)); done' &
//   sleep 0.3; kill -9 $(cat ../pid); wait; guard replay --yes --session ID
// (G) undo follows a file's content along the session's renames, and takes
// a rename without an outcome as done. When it was not (the kill came at the
// seccomp stop, before the call ran), undo can neither find the content of
// the file's first name ("not restored: a.txt: its content was not
// captured") nor keep the copy that is left: it removes the rename's source,
// whose pre-image is "absent". The file is gone from the tree (only the undo
// session's own capture still holds it). After a guard kill too. A directory
// rename that was not done, replay does (the directory appears under its
// new name), and undo exits 1.
BOOST_AUTO_TEST_CASE(AgentKilledInsideACreationLeavesASessionThatRestoresExactly) {
  KillInsideCall(KillTarget::kAgent, "create", OpKind::kCreate);
}
BOOST_AUTO_TEST_CASE(AgentKilledInsideAnOpenForAppendLeavesASessionThatRestoresExactly) {
  KillInsideCall(KillTarget::kAgent, "append", OpKind::kModify);
}
// Disabled until guard bugs (A) and (G) are fixed.
BOOST_AUTO_TEST_CASE(AgentKilledInsideARenameLeavesASessionThatRestoresExactly) {
  KillInsideCall(KillTarget::kAgent, "rename", OpKind::kRename);
}
// Disabled until guard bugs (A) and (G) are fixed.
BOOST_AUTO_TEST_CASE(AgentKilledInsideADirectoryRenameLeavesASessionThatRestoresExactly) {
  KillInsideCall(KillTarget::kAgent, "rename-dir", OpKind::kRename);
}
// Inside the rename of a directory into the root, the last record without
// an outcome is the creation of its file, carried by the move (recorded
// after the rename record, docs/capture.md).
BOOST_AUTO_TEST_CASE(AgentKilledInsideARenameIntoTheRootLeavesASessionThatRestoresExactly) {
  KillInsideCall(KillTarget::kAgent, "rename-dir-in", OpKind::kCreate);
}
BOOST_AUTO_TEST_CASE(GuardKilledInsideARenameIntoTheRootLeavesASessionThatRestoresExactly) {
  KillInsideCall(KillTarget::kGuard, "rename-dir-in", OpKind::kCreate);
}
BOOST_AUTO_TEST_CASE(AgentKilledInsideARenameOverLeavesASessionThatRestoresExactly) {
  KillInsideCall(KillTarget::kAgent, "rename-over", OpKind::kRename);
}
BOOST_AUTO_TEST_CASE(AgentKilledInsideAnUnlinkLeavesASessionThatRestoresExactly) {
  KillInsideCall(KillTarget::kAgent, "unlink", OpKind::kDelete);
}
BOOST_AUTO_TEST_CASE(AgentKilledInsideAMkdirLeavesASessionThatRestoresExactly) {
  KillInsideCall(KillTarget::kAgent, "mkdir", OpKind::kMkdir);
}
BOOST_AUTO_TEST_CASE(AgentKilledInsideASymlinkLeavesASessionThatRestoresExactly) {
  KillInsideCall(KillTarget::kAgent, "symlink", OpKind::kSymlink);
}
BOOST_AUTO_TEST_CASE(AgentKilledInsideALinkLeavesASessionThatRestoresExactly) {
  KillInsideCall(KillTarget::kAgent, "link", OpKind::kLink);
}
BOOST_AUTO_TEST_CASE(AgentKilledInsideAChmodLeavesASessionThatRestoresExactly) {
  KillInsideCall(KillTarget::kAgent, "chmod", OpKind::kChmod);
}
// An exchange whose outcome is unknown: taken as not run when a.txt still
// holds its own file (same size, mode and mtime), else as done.
BOOST_AUTO_TEST_CASE(AgentKilledInsideAnExchangeLeavesASessionThatRestoresExactly) {
  KillInsideCall(KillTarget::kAgent, "exchange", OpKind::kExchange);
}
BOOST_AUTO_TEST_CASE(GuardKilledInsideAnExchangeLeavesASessionThatRestoresExactly) {
  KillInsideCall(KillTarget::kGuard, "exchange", OpKind::kExchange);
}
BOOST_AUTO_TEST_CASE(GuardKilledInsideACreationLeavesASessionThatRestoresExactly) {
  KillInsideCall(KillTarget::kGuard, "create", OpKind::kCreate);
}
BOOST_AUTO_TEST_CASE(GuardKilledInsideAnOpenForAppendLeavesASessionThatRestoresExactly) {
  KillInsideCall(KillTarget::kGuard, "append", OpKind::kModify);
}
// Disabled until guard bug (G) is fixed.
BOOST_AUTO_TEST_CASE(GuardKilledInsideARenameLeavesASessionThatRestoresExactly) {
  KillInsideCall(KillTarget::kGuard, "rename", OpKind::kRename);
}
// Disabled until guard bug (G) is fixed.
BOOST_AUTO_TEST_CASE(GuardKilledInsideADirectoryRenameLeavesASessionThatRestoresExactly) {
  KillInsideCall(KillTarget::kGuard, "rename-dir", OpKind::kRename);
}
BOOST_AUTO_TEST_CASE(GuardKilledInsideARenameOverLeavesASessionThatRestoresExactly) {
  KillInsideCall(KillTarget::kGuard, "rename-over", OpKind::kRename);
}
BOOST_AUTO_TEST_CASE(GuardKilledInsideAnUnlinkLeavesASessionThatRestoresExactly) {
  KillInsideCall(KillTarget::kGuard, "unlink", OpKind::kDelete);
}
BOOST_AUTO_TEST_CASE(GuardKilledInsideAMkdirLeavesASessionThatRestoresExactly) {
  KillInsideCall(KillTarget::kGuard, "mkdir", OpKind::kMkdir);
}
BOOST_AUTO_TEST_CASE(GuardKilledInsideASymlinkLeavesASessionThatRestoresExactly) {
  KillInsideCall(KillTarget::kGuard, "symlink", OpKind::kSymlink);
}
BOOST_AUTO_TEST_CASE(GuardKilledInsideALinkLeavesASessionThatRestoresExactly) {
  KillInsideCall(KillTarget::kGuard, "link", OpKind::kLink);
}
BOOST_AUTO_TEST_CASE(GuardKilledInsideAChmodLeavesASessionThatRestoresExactly) {
  KillInsideCall(KillTarget::kGuard, "chmod", OpKind::kChmod);
}

}  // namespace
}  // namespace guard::e2e
