// The narrowest kill moment: the agent (or guard) dies inside a mutating
// call, after guard recorded the operation (and its pre-image) at the
// seccomp stop but before it saw the call return. The operation then has no
// outcome record; it may or may not have happened. docs/durability.md: undo
// restores its pre-image either way, and the session's end must still say
// what the path holds, so that undo and replay are exact and complete.
//
// The kill lands there every time: tests/programs/call_loop makes one kind
// of call a few times, and guard's test-only kill point
// (supervisor/trace/test_kill_point.h, GUARD_TEST_KILL_INSIDE_CALL) kills
// guard or the agent inside the third call of that kind, either before the
// call runs or once it ran and before guard read its result. Each case is
// checked both ways, and the tree the kill left must show which one it was
// wherever it can.
// Unit twin: capture_core_test "a thread that died inside its call leaves its paths changed".
#define BOOST_TEST_MODULE durability_kill_inside_call
#include <atomic>
#include <boost/test/unit_test.hpp>
#include "tests/e2e/support/trace_mode_only.h"
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/support/durability_checks.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/kill_scenario.h"
#include "tests/e2e/support/process_tree.h"
#include "tests/e2e/support/session_view.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

constexpr int kIterations = 5;  // the kill comes in the third: a run it missed exits 0

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

// One kind of call, and the call of it the kill lands in.
struct CallCase {
  std::string kind;  // call_loop's KIND
  // The kill comes inside the nth call naming `named` (root-relative) ...
  std::string named;
  int nth = 1;
  // ... and leaves without an outcome, last, the record of `op` on `path`.
  OpKind op;
  std::string path;
  // Whether the tree can tell that the call ran.
  bool visible = true;
};

// What one kill left, observed without Boost.Test (the kills run on worker
// threads); ExpectKill checks it.
struct KillRun {
  KillTarget target = KillTarget::kAgent;
  const CallCase* c = nullptr;
  bool after_run = false;
  std::string where;
  std::string error;  // the scenario could not be set up or run
  GuardResult killed;
  size_t sessions = 0;
  bool survivors = false;
  const Record* open_op = nullptr;  // into `view`
  std::optional<SessionView> view;
  std::optional<bool> happened;
  GuardResult recover;  // kGuard only
  std::string state;
  GuardResult undo, replay;
  std::vector<std::string> undo_diff, replay_diff;
};

// Runs the kill of `c` for `target`, before or after the call ran, in a fresh
// workspace, then `guard recover` (after a guard kill), undo and replay.
void RunKill(KillRun* k) {
  const CallCase& c = *k->c;
  const char* who = k->target == KillTarget::kGuard ? "guard" : "agent";
  k->where = c.kind + ": " + who + " killed inside the call " + (k->after_run ? "after" : "before") + " it ran";
  Workspace ws;
  ws.Write("a.txt", "the original content\n", 0644);
  ws.Mkdir("d", 0750);
  ws.Write("d/inner.txt", "inside the moved directory\n", 0640);
  ws.Mkdir("d/sub");
  ws.Symlink("../inner.txt", "d/sub/link");
  TreeSnapshot before = SnapshotTree(ws.tree());
  GuardRun run;
  run.command = {TestProgram("call_loop"), c.kind, std::to_string(kIterations), ws.outside()};
  run.env["GUARD_TEST_KILL_INSIDE_CALL"] = std::string(who) + ":" + (k->after_run ? "after" : "before") + ":" +
                                           std::to_string(c.nth) + ":" + ws.Path(c.named);
  k->killed = RunGuard(ws, run);
  k->sessions = ws.SessionIds().size();
  if (k->killed.exit_code != 137 || k->sessions != 1) return;
  std::string id = ws.SessionIds()[0];
  k->survivors = !WaitGone(ProcessesWithEnv("GUARD_SESSION", id), 5000).empty();

  // The last record under the root without an outcome: the chosen call's.
  k->view = SessionView::Load(ws.home(), id);
  for (const Record* o : k->view->Operations()) {
    if (!(o->flags & kOutsideRoot) && k->view->OutcomeOf(o->seq) == nullptr) k->open_op = o;
  }
  TreeSnapshot stopped = SnapshotTree(ws.tree());
  if (k->open_op != nullptr) k->happened = Happened(*k->open_op, stopped);

  if (k->target == KillTarget::kGuard) k->recover = RunGuardWithin(ws, {"recover"}, 60);
  k->state = SessionStateOf(ws, id);
  k->undo = RunGuardWithin(ws, {"undo", "--yes", "--session", id}, 60);
  k->undo_diff = DiffSnapshots(before, SnapshotTree(ws.tree()));
  k->replay = RunGuardWithin(ws, {"replay", "--yes", "--session", id}, 60);
  k->replay_diff = DiffSnapshots(stopped, SnapshotTree(ws.tree()));
}

void ExpectKill(const KillRun& k) {
  const std::string& where = k.where;
  BOOST_TEST_MESSAGE(where);
  BOOST_REQUIRE_MESSAGE(k.error.empty(), where << ": " << k.error);
  BOOST_REQUIRE_MESSAGE(k.killed.exit_code == 137, where << ": the kill did not come: " << DescribeResult(k.killed));
  BOOST_REQUIRE_EQUAL(k.sessions, 1u);
  BOOST_TEST(!k.survivors, where << ": the agent survived");
  BOOST_REQUIRE_MESSAGE(k.open_op != nullptr, where << ": every call has an outcome\n" << k.view->Dump());
  BOOST_TEST((k.open_op->kind == k.c->op),
             where << ": the last call without an outcome is op " << k.open_op->seq << "\n" << k.view->Dump());
  BOOST_TEST(k.open_op->path == k.c->path, where);
  BOOST_TEST((k.happened == (k.c->visible ? std::optional<bool>(k.after_run) : std::nullopt)),
             where << ": the tree says the call "
                   << (!k.happened ? "may have run" : *k.happened ? "ran" : "did not run"));
  if (k.target == KillTarget::kGuard) BOOST_TEST(k.recover.exit_code == 0, where << ": " << DescribeResult(k.recover));
  BOOST_TEST(k.state == (k.target == KillTarget::kGuard ? "recovered" : "killed"), where);
  BOOST_TEST(k.undo.exit_code == 0, where << ": " << DescribeResult(k.undo));
  BOOST_TEST(k.undo_diff.empty(), where << ": undo inexact: " << Printable(k.undo_diff.empty() ? "" : k.undo_diff[0]));
  BOOST_TEST(k.replay.exit_code == 0, where << ": " << DescribeResult(k.replay));
  BOOST_TEST(k.replay_diff.empty(),
             where << ": replay inexact: " << Printable(k.replay_diff.empty() ? "" : k.replay_diff[0]));
}

// The test cases, by name: each checks the two kills of one call kind and
// target (before and after the call ran).
struct KillTest {
  std::string name;
  KillTarget target;
  const CallCase* c;
};
std::vector<KillTest>& KillTests() {
  static std::vector<KillTest> tests;
  return tests;
}
bool RegisterKillTest(const char* name, KillTarget target, const CallCase& c) {
  KillTests().push_back({name, target, &c});
  return true;
}

// The kills spend most of their time waiting (process start, ptrace stops,
// syncs), so the pool runs those of every test case selected for this run
// on a few threads from the start, and each test case waits for its own.
class KillPool {
 public:
  static constexpr int kThreads = 4;

  static KillPool& Get() {
    static KillPool pool;
    return pool;
  }
  ~KillPool() {
    for (std::thread& t : threads_) t.join();
  }
  // The two kills of test `name`, once they ran.
  std::vector<const KillRun*> Wait(const std::string& name) {
    std::vector<const KillRun*> out;
    for (size_t i = 0; i < runs_.size(); ++i) {
      if (names_[i] != name) continue;
      done_[i].wait();
      out.push_back(&runs_[i]);
    }
    return out;
  }

 private:
  KillPool() {
    namespace ut = boost::unit_test;
    for (const KillTest& t : KillTests()) {
      ut::test_unit_id id = ut::framework::master_test_suite().get(t.name);
      if (id == ut::INV_TEST_UNIT_ID || !ut::framework::get(id, ut::TUT_CASE).is_enabled()) continue;
      for (bool after_run : {false, true}) {
        KillRun k;
        k.target = t.target;
        k.c = t.c;
        k.after_run = after_run;
        runs_.push_back(std::move(k));
        names_.push_back(t.name);
      }
    }
    promises_.resize(runs_.size());
    for (std::promise<void>& p : promises_) done_.push_back(p.get_future().share());
    for (int i = 0; i < kThreads; ++i) threads_.emplace_back([this] { Work(); });
  }
  void Work() {
    for (size_t i; (i = next_++) < runs_.size();) {
      try {
        RunKill(&runs_[i]);
      } catch (const std::exception& e) {
        runs_[i].error = e.what();
      }
      promises_[i].set_value();
    }
  }

  std::vector<KillRun> runs_;  // sized before the threads start: never reallocated
  std::vector<std::string> names_;
  std::vector<std::promise<void>> promises_;
  std::vector<std::shared_future<void>> done_;
  std::atomic<size_t> next_{0};
  std::vector<std::thread> threads_;
};

void ExpectKillsInside(const std::string& name) {
  std::vector<const KillRun*> runs = KillPool::Get().Wait(name);
  BOOST_REQUIRE_EQUAL(runs.size(), 2u);
  for (const KillRun* k : runs) {
    BOOST_TEST_CONTEXT(k->where) { ExpectKill(*k); }
  }
}

#define KILL_INSIDE_CALL_TEST(name, target, c)                              \
  const bool name##_registered = RegisterKillTest(#name, KillTarget::target, c); \
  BOOST_AUTO_TEST_CASE(name) { ExpectKillsInside(#name); }

// The third call of each kind (iteration 2).
const CallCase kCreate{"create", "f2", 1, OpKind::kCreate, "f2"};
const CallCase kAppend{"append", "a.txt", 3, OpKind::kModify, "a.txt", /*visible=*/false};
const CallCase kRename{"rename", "r2", 1, OpKind::kRename, "r1"};
const CallCase kRenameDir{"rename-dir", "d2", 1, OpKind::kRename, "d1"};
// Inside the rename of a directory into the root, the last record without
// an outcome is the creation of its file, carried by the move (recorded
// after the rename record, docs/capture.md).
const CallCase kRenameDirIn{"rename-dir-in", "in2", 1, OpKind::kCreate, "in2/f"};
const CallCase kRenameOver{"rename-over", "a.txt", 3, OpKind::kRename, "t2"};
// The first call naming f2 creates it; the second unlinks it.
const CallCase kUnlink{"unlink", "f2", 2, OpKind::kDelete, "f2"};
const CallCase kMkdir{"mkdir", "d2", 1, OpKind::kMkdir, "d2"};
const CallCase kSymlink{"symlink", "s2", 1, OpKind::kSymlink, "s2"};
const CallCase kLink{"link", "l2", 1, OpKind::kLink, "a.txt"};
const CallCase kChmod{"chmod", "a.txt", 3, OpKind::kChmod, "a.txt", /*visible=*/false};
// An exchange whose outcome is unknown: taken as not run when a.txt still
// holds its own file (same size, mode and mtime), else as done.
const CallCase kExchange{"exchange", "a.txt", 3, OpKind::kExchange, "a.txt"};

// Guard bugs these tests found, both fixed: (A) when the agent died inside
// a call, guard sealed the session without the final state of the paths
// that call named, so replay could not rebuild what it created; (G) undo
// took a rename without an outcome as done, and when the kill had come
// before it ran, removed the rename's source.
KILL_INSIDE_CALL_TEST(AgentKilledInsideACreationLeavesASessionThatRestoresExactly, kAgent, kCreate)
KILL_INSIDE_CALL_TEST(AgentKilledInsideAnOpenForAppendLeavesASessionThatRestoresExactly, kAgent, kAppend)
KILL_INSIDE_CALL_TEST(AgentKilledInsideARenameLeavesASessionThatRestoresExactly, kAgent, kRename)
KILL_INSIDE_CALL_TEST(AgentKilledInsideADirectoryRenameLeavesASessionThatRestoresExactly, kAgent, kRenameDir)
KILL_INSIDE_CALL_TEST(AgentKilledInsideARenameIntoTheRootLeavesASessionThatRestoresExactly, kAgent, kRenameDirIn)
KILL_INSIDE_CALL_TEST(AgentKilledInsideARenameOverLeavesASessionThatRestoresExactly, kAgent, kRenameOver)
KILL_INSIDE_CALL_TEST(AgentKilledInsideAnUnlinkLeavesASessionThatRestoresExactly, kAgent, kUnlink)
KILL_INSIDE_CALL_TEST(AgentKilledInsideAMkdirLeavesASessionThatRestoresExactly, kAgent, kMkdir)
KILL_INSIDE_CALL_TEST(AgentKilledInsideASymlinkLeavesASessionThatRestoresExactly, kAgent, kSymlink)
KILL_INSIDE_CALL_TEST(AgentKilledInsideALinkLeavesASessionThatRestoresExactly, kAgent, kLink)
KILL_INSIDE_CALL_TEST(AgentKilledInsideAChmodLeavesASessionThatRestoresExactly, kAgent, kChmod)
KILL_INSIDE_CALL_TEST(AgentKilledInsideAnExchangeLeavesASessionThatRestoresExactly, kAgent, kExchange)
KILL_INSIDE_CALL_TEST(GuardKilledInsideACreationLeavesASessionThatRestoresExactly, kGuard, kCreate)
KILL_INSIDE_CALL_TEST(GuardKilledInsideAnOpenForAppendLeavesASessionThatRestoresExactly, kGuard, kAppend)
KILL_INSIDE_CALL_TEST(GuardKilledInsideARenameLeavesASessionThatRestoresExactly, kGuard, kRename)
KILL_INSIDE_CALL_TEST(GuardKilledInsideADirectoryRenameLeavesASessionThatRestoresExactly, kGuard, kRenameDir)
KILL_INSIDE_CALL_TEST(GuardKilledInsideARenameIntoTheRootLeavesASessionThatRestoresExactly, kGuard, kRenameDirIn)
KILL_INSIDE_CALL_TEST(GuardKilledInsideARenameOverLeavesASessionThatRestoresExactly, kGuard, kRenameOver)
KILL_INSIDE_CALL_TEST(GuardKilledInsideAnUnlinkLeavesASessionThatRestoresExactly, kGuard, kUnlink)
KILL_INSIDE_CALL_TEST(GuardKilledInsideAMkdirLeavesASessionThatRestoresExactly, kGuard, kMkdir)
KILL_INSIDE_CALL_TEST(GuardKilledInsideASymlinkLeavesASessionThatRestoresExactly, kGuard, kSymlink)
KILL_INSIDE_CALL_TEST(GuardKilledInsideALinkLeavesASessionThatRestoresExactly, kGuard, kLink)
KILL_INSIDE_CALL_TEST(GuardKilledInsideAChmodLeavesASessionThatRestoresExactly, kGuard, kChmod)
KILL_INSIDE_CALL_TEST(GuardKilledInsideAnExchangeLeavesASessionThatRestoresExactly, kGuard, kExchange)

}  // namespace
}  // namespace guard::e2e
