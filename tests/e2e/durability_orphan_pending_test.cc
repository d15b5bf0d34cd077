// Pending blobs whose records were lost (docs/format.md, "Pending blobs
// without a record"; docs/durability.md, "What recovery does"). A file is
// adopted into store/pending/ by hard link before the record naming it is
// appended; when that record is lost with a torn tail, recovery must still
// deal with the blob: keep it when it is the only copy of its content (the
// call ran), remove it when the file still holds the inode (the call never
// did), say how many in its line, and never touch the pending blobs of
// another session, above all one still running.
#define BOOST_TEST_MODULE durability_orphan_pending
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "tests/e2e/support/durability_checks.h"
#include "tests/e2e/support/journal_damage.h"
#include "tests/e2e/support/process_tree.h"
#include "tests/e2e/support/session_view.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

constexpr int kTimeoutSeconds = 30;

std::string PendingDir(const Workspace& ws) { return ws.home() + "/store/pending"; }

std::set<std::string> PendingNames(const Workspace& ws) {
  std::set<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(PendingDir(ws))) out.insert(e.path().filename());
  return out;
}

std::set<std::string> PendingNamesOf(const Workspace& ws, const std::string& id) {
  std::set<std::string> out;
  for (const std::string& n : PendingNames(ws)) {
    if (n.rfind(id + "-", 0) == 0) out.insert(n);
  }
  return out;
}

// Waits (as a hang guard only) for `path` to exist.
bool AwaitFile(const std::string& path) {
  for (int i = 0; i < kTimeoutSeconds * 1000 && !PathExists(path); ++i) usleep(1000);
  return PathExists(path);
}

std::set<std::string> Sessions(const Workspace& ws) {
  std::vector<std::string> ids = ws.SessionIds();
  return {ids.begin(), ids.end()};
}

std::string NewSessionSince(const Workspace& ws, const std::set<std::string>& before) {
  for (const std::string& id : ws.SessionIds()) {
    if (!before.count(id)) return id;
  }
  throw std::runtime_error("no new session");
}

// `rm NAME` under guard, which adopts NAME by hard link; then the command
// says it is done and waits for GO (absent: until it is killed).
GuardRun RemoveAndWait(const std::string& name, const std::string& ready, const std::string& go) {
  GuardRun run;
  std::string wait = go.empty() ? "sleep 600" : "while [ ! -e '" + go + "' ]; do sleep 0.05; done";
  run.command = {"sh", "-c", "rm " + name + " && touch '" + ready + "' && " + wait};
  run.timeout_seconds = 120;
  return run;
}

BOOST_AUTO_TEST_CASE(RecoveryKeepsOrRemovesTheSessionsUnrecordedPendingBlobsAndSparesOthers) {
  Workspace ws;
  const std::string victim_content = "the only copy, once the record is lost\n";
  ws.Write("victim", victim_content);
  ws.Write("intact", "still in the tree\n");
  ws.Write("live-victim", "adopted by the running session\n");

  // Session A: removes `victim` (adopted by link), then is killed.
  std::set<std::string> before = Sessions(ws);
  std::string ready_a = ws.outside() + "/ready-a";
  ChildProcess a(GuardSpec(ws, RemoveAndWait("victim", ready_a, "")));
  BOOST_REQUIRE(AwaitFile(ready_a));
  std::string id_a = NewSessionSince(ws, before);

  // Session B: removes `live-victim`, and runs until the end of the test.
  before = Sessions(ws);
  std::string ready_b = ws.outside() + "/ready-b", go_b = ws.outside() + "/go-b";
  ChildProcess b(GuardSpec(ws, RemoveAndWait("live-victim", ready_b, go_b)));
  BOOST_REQUIRE(AwaitFile(ready_b));
  std::string id_b = NewSessionSince(ws, before);

  kill(a.pid(), SIGKILL);
  ProcessResult killed = a.Wait();
  BOOST_REQUIRE_EQUAL(killed.exit_code, 128 + SIGKILL);
  BOOST_REQUIRE(WaitGone(ProcessesWithEnv("GUARD_SESSION", id_a), 10000).empty());

  // A's record naming its pending blob is cut off: torn inside it.
  std::string journal = ws.home() + "/sessions/" + id_a + "/journal";
  SessionView view = SessionView::Load(ws.home(), id_a);
  std::vector<RecordSpan> spans = JournalRecordSpans(ReadFile(journal));
  BOOST_REQUIRE_EQUAL(spans.size(), view.records().size());
  std::string adopted;
  size_t at = 0;
  for (size_t i = 0; i < view.records().size(); ++i) {
    const Record& r = view.records()[i];
    if (r.kind == OpKind::kDelete && r.path == "victim" && r.before.blob.kind == BlobRef::Kind::kPending) {
      adopted = r.before.blob.pending;
      at = i;
    }
  }
  BOOST_REQUIRE_MESSAGE(!adopted.empty(), "victim was not adopted by hard link");
  BOOST_REQUIRE(adopted.rfind(id_a + "-", 0) == 0);
  TruncateFileTo(journal, spans[at].begin + (spans[at].end - spans[at].begin) / 2);

  // A second blob of A whose file is still in the tree (a record torn before
  // its call was let through), and a blob of no session (an older guard's
  // name: never attributed, so never touched).
  std::string never_ran = id_a + "-99-0000abcd";
  BOOST_REQUIRE(link(ws.Path("intact").c_str(), (PendingDir(ws) + "/" + never_ran).c_str()) == 0);
  std::string anonymous = "12345-0-0000beef";
  BOOST_REQUIRE(link(ws.Path("intact").c_str(), (PendingDir(ws) + "/" + anonymous).c_str()) == 0);
  std::set<std::string> live_pending = PendingNamesOf(ws, id_b);
  BOOST_REQUIRE_EQUAL(live_pending.size(), 1u);

  GuardResult rec = RunGuardWithin(ws, {"recover"}, kTimeoutSeconds);
  BOOST_TEST(rec.exit_code == 0, DescribeResult(rec));
  BOOST_TEST(Contains(rec.err, "recovered session " + id_a + ","), DescribeResult(rec));
  // The one that is the only copy of its content is kept and said; the
  // one whose file is still in place goes without a word.
  BOOST_TEST(Contains(rec.err, "1 saved copy of files no record names kept"), DescribeResult(rec));
  BOOST_TEST(!Contains(rec.err, id_b), "the running session was recovered: " << DescribeResult(rec));

  // Nothing of A is left pending; B's blob and the anonymous one are as they were.
  BOOST_TEST(PendingNamesOf(ws, id_a).empty());
  BOOST_TEST((PendingNamesOf(ws, id_b) == live_pending));
  BOOST_TEST(PendingNames(ws).count(anonymous) == 1u);
  BOOST_TEST(SessionStateOf(ws, id_b) == "running");

  // The kept blob is the victim's content, named in A's journal.
  std::string marker = ws.home() + "/store/resolved/" + adopted;
  BOOST_REQUIRE(PathExists(marker));
  std::string hex = std::filesystem::read_symlink(marker).string();
  BOOST_TEST(ReadFile(ws.home() + "/store/objects/" + hex.substr(0, 2) + "/" + hex) == victim_content);
  SessionView recovered = SessionView::Load(ws.home(), id_a);
  bool named = false;
  for (const Record& r : recovered.records()) named = named || (r.kind == OpKind::kBlobResolved && r.pending == adopted);
  BOOST_TEST(named, "no kBlobResolved record names " << adopted);
  BOOST_TEST(SessionStateOf(ws, id_a) == "recovered");
  // The removed one was a second name of a file still in the tree.
  struct stat st;
  BOOST_REQUIRE(stat(ws.Path("intact").c_str(), &st) == 0);
  BOOST_TEST(st.st_nlink == 2u);  // the tree's name and the anonymous blob
  BOOST_TEST(ws.Read("intact") == "still in the tree\n");

  // B goes on and seals as usual, resolving its own blob.
  WriteFile(go_b, "");
  ProcessResult done = b.Wait();
  BOOST_TEST(done.exit_code == 0, DescribeResult(done));
  BOOST_TEST(SessionStateOf(ws, id_b) == "finished");
  BOOST_TEST(PendingNamesOf(ws, id_b).empty());
}

}  // namespace
}  // namespace guard::e2e
