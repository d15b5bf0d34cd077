// guard undo / guard replay when saved copies are gone or damaged: the paths
// whose pre-image (or end state) cannot be read are reported, exactly those,
// with exit 1; they are left as they were (never half written); every other
// path is still restored.
#define BOOST_TEST_MODULE restore_missing_blob
#include <fcntl.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <memory>
#include <set>

#include "common/blob_store.h"
#include "common/file_io.h"
#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/journal_damage.h"
#include "tests/e2e/support/session_view.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

// The key behind `ref` (a pending ref resolved through the journal).
BlobKey KeyOf(const SessionView& s, const BlobRef& ref) {
  if (ref.kind == BlobRef::Kind::kKey) return ref.key;
  BOOST_REQUIRE_MESSAGE(ref.kind == BlobRef::Kind::kPending, "no content was recorded");
  for (const Record& r : s.records()) {
    if (r.kind == OpKind::kBlobResolved && r.pending == ref.pending) return r.key;
  }
  BOOST_FAIL("pending blob " << ref.pending << " was never resolved");
  return BlobKey();
}

// The object file of `key` ("" when the store has none).
std::string FindObject(const Workspace& ws, const BlobKey& key) {
  std::unique_ptr<BlobStore> store;
  Status s = BlobStore::Open(ws.home() + "/store", &store);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  return store->ObjectPath(key);
}

std::string ObjectPath(const Workspace& ws, const BlobKey& key) {
  std::string path = FindObject(ws, key);
  BOOST_REQUIRE_MESSAGE(!path.empty(), "blob " << key.Hex() << " is not in the store");
  return path;
}

void RemoveBlob(const Workspace& ws, const BlobKey& key) {
  // Both encodings may exist (two writers raced): remove every copy.
  for (std::string path = ObjectPath(ws, key); !path.empty(); path = FindObject(ws, key)) {
    BOOST_REQUIRE_MESSAGE(unlink(path.c_str()) == 0, path);
  }
}

// Same length, other bytes: a raw blob no longer matches its key, a zstd
// frame no longer decodes.
void CorruptBlob(const Workspace& ws, const BlobKey& key) {
  std::string path = ObjectPath(ws, key);
  std::string content = ReadFile(path);
  BOOST_REQUIRE(!content.empty());
  for (char& c : content) c = static_cast<char>(c ^ 0x5a);
  WriteFile(path, content, 0600);
}

void TruncateBlob(const Workspace& ws, const BlobKey& key) {
  std::string path = ObjectPath(ws, key);
  BOOST_REQUIRE(truncate(path.c_str(), 3) == 0);
}

// The paths of guard's "not restored: PATH: reason" lines.
std::set<std::string> NotRestored(const std::string& err) {
  std::set<std::string> out;
  const std::string prefix = "guard: not restored: ";
  size_t start = 0;
  while (start < err.size()) {
    size_t end = err.find('\n', start);
    std::string line = err.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (line.rfind(prefix, 0) == 0) {
      std::string rest = line.substr(prefix.size());
      out.insert(rest.substr(0, rest.find(": ")));
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

std::string Join(const std::set<std::string>& s) {
  std::string out;
  for (const std::string& p : s) out += (out.empty() ? "" : ", ") + p;
  return out;
}

struct Fixture {
  Workspace ws;
  TreeSnapshot before, after;
  std::string session;

  Fixture() {
    ws.Write("missing.txt", "missing: before\n", 0640);
    ws.Write("corrupt.bin", std::string("corrupt: before \0\1\2\3", 20), 0600);
    ws.Write("truncated.txt", std::string(5000, 't'));  // compressible: likely stored as zstd
    ws.Write("deleted.txt", "deleted: before (captured by hard link)\n", 0644);
    ws.Mkdir("dir");
    ws.Write("dir/intact.txt", "intact: before\n", 0755);
    ws.Write("renamed-over.txt", "renamed over: before\n");
    ws.Write("src.txt", "src\n");
    before = SnapshotTree(ws.tree());
    GuardResult r = RunGuardBash(ws,
                                 "echo 'missing: after' > missing.txt; echo 'corrupt: after' > corrupt.bin; "
                                 "echo 'truncated: after' > truncated.txt; rm deleted.txt; "
                                 "echo 'intact: after' > dir/intact.txt; mv src.txt renamed-over.txt; "
                                 "echo created > new.txt");
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0 && r.new_sessions.size() == 1, DescribeResult(r));
    session = r.new_sessions[0];
    after = SnapshotTree(ws.tree());
  }

  SessionView View() const { return SessionView::Load(ws.home(), session); }
};

void ExpectTree(const Workspace& ws, const TreeSnapshot& expected, const GuardResult& r) {
  std::vector<std::string> diffs = DiffSnapshots(expected, SnapshotTree(ws.tree()));
  std::string text;
  for (const std::string& d : diffs) text += "    " + d + "\n";
  BOOST_TEST(diffs.empty(), "the tree differs (expected, found):\n" << text << DescribeResult(r));
}

BOOST_AUTO_TEST_CASE(UndoReportsExactlyThePathsWhoseBlobsAreGoneAndRestoresTheOthers) {
  Fixture f;
  SessionView view = f.View();
  RemoveBlob(f.ws, KeyOf(view, view.FindOp(OpKind::kModify, "missing.txt")->before.blob));
  CorruptBlob(f.ws, KeyOf(view, view.FindOp(OpKind::kModify, "corrupt.bin")->before.blob));
  TruncateBlob(f.ws, KeyOf(view, view.FindOp(OpKind::kModify, "truncated.txt")->before.blob));
  RemoveBlob(f.ws, KeyOf(view, view.FindOp(OpKind::kDelete, "deleted.txt")->before.blob));

  GuardResult r = RunGuardCommand(f.ws, {"undo", "--yes"});
  BOOST_TEST(r.exit_code == 1, DescribeResult(r));
  std::set<std::string> expected = {"missing.txt", "corrupt.bin", "truncated.txt", "deleted.txt"};
  std::set<std::string> reported = NotRestored(r.err);
  BOOST_TEST(Join(reported) == Join(expected), DescribeResult(r));

  // The unreadable ones stay as the session left them, whole; the rest is undone.
  TreeSnapshot want = f.before;
  for (const char* p : {"missing.txt", "corrupt.bin", "truncated.txt"}) want.entries[p] = f.after.entries.at(p);
  want.entries.erase("deleted.txt");
  ExpectTree(f.ws, want, r);
}

BOOST_AUTO_TEST_CASE(ReplayReportsExactlyThePathsWhoseEndStateBlobsAreGone) {
  Fixture f;
  GuardResult undo = RunGuardCommand(f.ws, {"undo", "--yes"});
  BOOST_REQUIRE_MESSAGE(undo.exit_code == 0, DescribeResult(undo));
  ExpectTree(f.ws, f.before, undo);

  // The session's end states: the content its final records name.
  SessionView view = f.View();
  for (const Record& r : view.records()) {
    if (r.kind != OpKind::kFinal) continue;
    if (r.path == "missing.txt") RemoveBlob(f.ws, KeyOf(view, r.after.blob));
    if (r.path == "renamed-over.txt") CorruptBlob(f.ws, KeyOf(view, r.after.blob));
  }
  GuardResult r = RunGuardCommand(f.ws, {"replay", "--yes", "--session", f.session});
  BOOST_TEST(r.exit_code == 1, DescribeResult(r));
  BOOST_TEST(Join(NotRestored(r.err)) == "missing.txt, renamed-over.txt", DescribeResult(r));

  TreeSnapshot want = f.after;
  want.entries["missing.txt"] = f.before.entries.at("missing.txt");
  want.entries["renamed-over.txt"] = f.before.entries.at("renamed-over.txt");
  // src.txt went away by the rename, which replay repeats only as far as
  // renamed-over.txt's content is readable: it is removed either way.
  ExpectTree(f.ws, want, r);
}

BOOST_AUTO_TEST_CASE(ADamagedBlobLeavesNoTemporaryFileBehind) {
  Fixture f;
  SessionView view = f.View();
  CorruptBlob(f.ws, KeyOf(view, view.FindOp(OpKind::kModify, "corrupt.bin")->before.blob));
  GuardResult r = RunGuardCommand(f.ws, {"undo", "--yes"});
  BOOST_TEST(r.exit_code == 1, DescribeResult(r));
  for (const auto& [path, entry] : SnapshotTree(f.ws.tree()).entries) {
    BOOST_TEST(path.find(".guard-restore") == std::string::npos, "left behind: " << path);
  }
}

// The only copy of a file's content is never removed: after `mv d e`, with
// the blob of d/x gone, undo cannot rebuild d/x, so it leaves e/x (which holds
// that content) where it is, names both, and exits 1.
BOOST_AUTO_TEST_CASE(UndoNeverRemovesTheOnlyCopyOfAContentWhoseBlobIsGone) {
  Workspace ws;
  ws.Mkdir("d");
  ws.Write("d/x", "the only copy\n");
  GuardResult run = RunGuardBash(ws, "mv d e");
  BOOST_REQUIRE(run.exit_code == 0 && run.new_sessions.size() == 1);
  SessionView view = SessionView::Load(ws.home(), run.new_sessions[0]);
  bool removed = false;
  for (const Record& r : view.records()) {
    if (r.kind == OpKind::kFinal && r.path == "e/x") {
      RemoveBlob(ws, KeyOf(view, r.after.blob));
      removed = true;
    }
  }
  BOOST_REQUIRE(removed);
  GuardResult r = RunGuardCommand(ws, {"undo", "--yes"});
  BOOST_TEST(r.exit_code == 1, DescribeResult(r));
  BOOST_TEST(ReadFile(ws.Path("e/x")) == "the only copy\n", DescribeResult(r));
  std::set<std::string> named = NotRestored(r.err);
  BOOST_TEST(named.count("d/x") == 1u, DescribeResult(r));
  BOOST_TEST(named.count("e/x") == 1u, DescribeResult(r));
}

// The same when a record is lost: after `mv f g`, with the journal cut in
// the final state of g, f's content is only in g. An undo limited to g must
// not remove it either (the content holder is found whatever paths are
// named).
BOOST_AUTO_TEST_CASE(UndoOfOnePathNeverRemovesTheOnlyCopyOfAnotherPathsContent) {
  Workspace ws;
  ws.Write("f", "precious\n");
  GuardResult run = RunGuardBash(ws, "mv f g");
  BOOST_REQUIRE(run.exit_code == 0 && run.new_sessions.size() == 1);
  const std::string journal = ws.home() + "/sessions/" + run.new_sessions[0] + "/journal";
  SessionView view = SessionView::Load(ws.home(), run.new_sessions[0]);
  std::vector<RecordSpan> spans = JournalRecordSpans(ReadFile(journal));
  BOOST_REQUIRE(spans.size() == view.records().size());
  size_t final_of_g = spans.size();
  for (size_t i = 0; i < spans.size(); ++i) {
    if (view.records()[i].kind == OpKind::kFinal && view.records()[i].path == "g") final_of_g = i;
  }
  BOOST_REQUIRE(final_of_g < spans.size());
  TruncateFileTo(journal, (spans[final_of_g].begin + spans[final_of_g].end) / 2);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"undo", "--yes", "g"}, std::vector<std::string>{"undo", "--yes"}}) {
    GuardResult r = RunGuardCommand(ws, args);
    BOOST_TEST(r.exit_code == 1, DescribeResult(r));
    BOOST_TEST(ReadFile(ws.Path("g")) == "precious\n", DescribeResult(r));
    BOOST_TEST(r.err.find("g: left as it is") != std::string::npos, DescribeResult(r));
  }
}

}  // namespace
}  // namespace guard::e2e
