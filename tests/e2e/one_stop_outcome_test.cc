// One stop per call (docs/capture.md, "One stop per call"): a delete,
// mkdir, symlink, link, rename or chmod inside the root runs past its
// seccomp stop without a syscall-exit stop, and guard learns its outcome
// from the tree once the thread is past it. What it learns must keep the
// journal truthful (an outcome only when the tree shows the call's effect)
// and the store safe: a failed delete of a file adopted by hard link leaves
// the file in the tree, so the store must end up with a copy of its own,
// never a second name of the live inode.
// Unit twins: calls_in_flight_test (the "quiet" rows) and capture_core_test
// ("a delete nobody followed is learnt from the tree" and the rows after it).
#define BOOST_TEST_MODULE one_stop_outcome
#include <boost/test/unit_test.hpp>
#include "tests/e2e/support/trace_mode_only.h"
#include "tests/e2e/support/guard_stats.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>

#include "tests/e2e/support/durability_checks.h"
#include "tests/e2e/support/session_view.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

constexpr int kTimeoutSeconds = 60;

// Waits (as a hang guard only) for `path` to exist.
bool AwaitFile(const std::string& path) {
  for (int i = 0; i < kTimeoutSeconds * 100 && access(path.c_str(), F_OK) != 0; ++i) usleep(10000);
  return access(path.c_str(), F_OK) == 0;
}

// GUARD_STATS_FILE's "name value" lines.
BOOST_AUTO_TEST_CASE(AFailedUnlinkOfAnAdoptedFileLeavesTheStoreACopyNotTheLiveFile) {
  Workspace ws;
  const std::string original = "the content before the session\n";
  ws.Mkdir("d", 0755);
  ws.Write("d/f", original);
  const std::string ready = ws.outside() + "/ready", go = ws.outside() + "/go";
  // rm, as a user who may not write d, fails with EACCES after guard
  // adopted d/f for it; it exits, which settles its call. The session then
  // waits while the test changes d/f from outside it, as anything could.
  GuardRun run;
  run.command = {"sh", "-c",
                 "cd d && setpriv --reuid=65534 --regid=65534 --clear-groups -- rm -f f; "
                 "touch '" + ready + "' && while [ ! -e '" + go + "' ]; do sleep 0.05; done"};
  run.timeout_seconds = 120;
  ChildProcess guard_proc(GuardSpec(ws, run));
  BOOST_REQUIRE(AwaitFile(ready));
  struct stat st {};
  BOOST_REQUIRE_EQUAL(lstat(ws.Path("d/f").c_str(), &st), 0);
  // The store's pending blob is no other name of the file in the tree.
  BOOST_TEST(st.st_nlink == 1u);
  ws.Write("d/f", "changed after the failed delete, by a process outside the session\n");
  { std::ofstream(go).put('\n'); }
  ProcessResult r = guard_proc.Wait();
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);

  std::vector<std::string> ids = ws.SessionIds();
  BOOST_REQUIRE_EQUAL(ids.size(), 1u);
  SessionView s = SessionView::Load(ws.home(), ids[0]);
  const Record* del = s.FindOp(OpKind::kDelete, "d/f");
  BOOST_REQUIRE_MESSAGE(del != nullptr, s.Dump());
  BOOST_TEST((del->before.blob.kind == BlobRef::Kind::kPending), "adopted by hard link\n" << s.Dump());
  // Failed (an exit stop saw its errno) or without an outcome (one stop):
  // never a success.
  const Record* outcome = s.OutcomeOf(del->seq);
  BOOST_TEST((outcome == nullptr || outcome->result_errno != 0), s.Dump());
  if (outcome == nullptr) {
    // "May have happened": its pre-image is what d/f held before the call.
    std::string content;
    BOOST_REQUIRE(s.ReadBlob(del->before.blob, &content).ok());
    BOOST_TEST(content == original);
  }
  // Undo puts the file back as it was before the session.
  GuardResult undo = RunGuardWithin(ws, {"undo", "--yes", "--session", ids[0]}, kTimeoutSeconds);
  BOOST_TEST(undo.exit_code == 0, undo.err);
  BOOST_TEST(ws.Read("d/f") == original);
}

BOOST_AUTO_TEST_CASE(ChangesOfNamesStopOncePerCallAndEachGetsItsOutcome) {
  Workspace ws;
  ws.Write("a", "a\n");
  ws.Write("m", "m\n", 0644);
  ws.Mkdir("big");
  for (int i = 0; i < 50; ++i) ws.Write("big/f" + std::to_string(i), "file " + std::to_string(i) + "\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  GuardRun run;
  // Each a program of its own; none opens a file for writing.
  run.command = {"sh", "-c",
                 "mkdir new && ln -s a s && ln a hard && mv a moved && chmod 600 m && touch made && rm -r big"};
  const std::string stats = ws.outside() + "/stats";
  run.env["GUARD_STATS_FILE"] = stats;
  GuardResult r = RunGuard(ws, run);
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);
  TreeSnapshot after = SnapshotTree(ws.tree());

  std::map<std::string, long long> st = ReadGuardStats(stats);
  BOOST_TEST(st["seccomp_stops"] >= 57);
  BOOST_TEST(st["exit_stops"] == 1);  // the rmdir of big keeps its exit stop (learned_outcome.cc)
  std::vector<std::string> ids = ws.SessionIds();
  BOOST_REQUIRE_EQUAL(ids.size(), 1u);
  SessionView s = SessionView::Load(ws.home(), ids[0]);
  size_t ops = 0;
  for (const Record* op : s.Operations()) {
    ++ops;
    const Record* outcome = s.OutcomeOf(op->seq);
    BOOST_TEST((outcome != nullptr && outcome->result_errno == 0), "op " << op->seq << "\n" << s.Dump());
  }
  BOOST_TEST(ops == 57u);  // mkdir, symlink, link, rename, chmod, create, 50 deletes, rmdir
  const Record* mkdir = s.FindOp(OpKind::kMkdir, "new");
  BOOST_REQUIRE(mkdir != nullptr);
  BOOST_TEST((s.OutcomeOf(mkdir->seq)->after.type == FileType::kDirectory));

  GuardResult undo = RunGuardWithin(ws, {"undo", "--yes", "--session", ids[0]}, kTimeoutSeconds);
  BOOST_TEST(undo.exit_code == 0, undo.err);
  BOOST_TEST(DiffSnapshots(before, SnapshotTree(ws.tree())).empty());
  GuardResult replay = RunGuardWithin(ws, {"replay", "--yes", "--session", ids[0]}, kTimeoutSeconds);
  BOOST_TEST(replay.exit_code == 0, replay.err);
  BOOST_TEST(DiffSnapshots(after, SnapshotTree(ws.tree())).empty());
}

BOOST_AUTO_TEST_CASE(AThreadThatMakesNoFurtherCallStillGetsItsOutcomeWhileTheSessionRuns) {
  Workspace ws;
  const std::string go = ws.outside() + "/go";
  // After its mkdir, python only polls with stat (never stopped) until go.
  GuardRun run;
  run.command = {"python3", "-B", "-c",
                 "import os, time\nos.mkdir('quiet')\nwhile not os.path.exists('" + go +
                     "'): time.sleep(0.05)\n"};
  run.timeout_seconds = 120;
  ChildProcess guard_proc(GuardSpec(ws, run));
  bool settled = false;
  std::string dump;
  for (int i = 0; i < kTimeoutSeconds * 10 && !settled; ++i) {  // a hang guard, not a timing
    usleep(100000);
    std::vector<std::string> ids = ws.SessionIds();
    if (ids.size() != 1) continue;
    try {
      SessionView s = SessionView::Load(ws.home(), ids[0]);
      const Record* mkdir = s.FindOp(OpKind::kMkdir, "quiet");
      settled = mkdir != nullptr && s.OutcomeOf(mkdir->seq) != nullptr;
      dump = s.Dump();
    } catch (const std::exception&) {
    }
  }
  { std::ofstream(go).put('\n'); }
  ProcessResult r = guard_proc.Wait();
  BOOST_TEST(settled, "the mkdir is still unsettled while python waits\n" << dump);
  BOOST_TEST(r.exit_code == 0, r.err);
}

BOOST_AUTO_TEST_CASE(AFailedRmdirIsRecordedWithItsErrnoAndUndoAndReplayLeaveTheDirectory) {
  Workspace ws;
  ws.Mkdir("full");
  ws.Write("full/kept", "still here\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  GuardResult r = RunGuardBash(ws, "rmdir full; mkdir made");
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);
  TreeSnapshot after = SnapshotTree(ws.tree());
  std::vector<std::string> ids = ws.SessionIds();
  BOOST_REQUIRE_EQUAL(ids.size(), 1u);
  SessionView s = SessionView::Load(ws.home(), ids[0]);
  const Record* rmdir = s.FindOp(OpKind::kRmdir, "full");
  BOOST_REQUIRE_MESSAGE(rmdir != nullptr, s.Dump());
  // An rmdir keeps its exit stop (learned_outcome.cc): its errno is seen.
  const Record* outcome = s.OutcomeOf(rmdir->seq);
  BOOST_REQUIRE_MESSAGE(outcome != nullptr, s.Dump());
  BOOST_TEST(outcome->result_errno == ENOTEMPTY, s.Dump());

  GuardResult undo = RunGuardWithin(ws, {"undo", "--yes", "--session", ids[0]}, kTimeoutSeconds);
  BOOST_TEST(undo.exit_code == 0, undo.err);
  BOOST_TEST(DiffSnapshots(before, SnapshotTree(ws.tree())).empty());
  GuardResult replay = RunGuardWithin(ws, {"replay", "--yes", "--session", ids[0]}, kTimeoutSeconds);
  BOOST_TEST(replay.exit_code == 0, replay.err);
  BOOST_TEST(DiffSnapshots(after, SnapshotTree(ws.tree())).empty());
}

}  // namespace
}  // namespace guard::e2e
