// guard undo / guard replay on a hand-made malicious session: a journal whose
// paths try to leave the root ("../", absolute paths without the outside
// flag, "a/../../x", a parent directory replaced by a symlink to a directory
// outside, directory moves to and from outside) with pre-images that would
// overwrite what lies there. Nothing outside the root may be written, moved
// or removed, with or without --force; every such path is reported and the
// exit status is non-zero. The journal is written with the real writer
// (JournalWriter), the pre-images with the real store (BlobStore).
#define BOOST_TEST_MODULE restore_escape
#include <boost/test/unit_test.hpp>
#include <functional>
#include <memory>

#include "common/blob_store.h"
#include "common/journal_writer.h"
#include "common/session_meta.h"
#include "common/state_dir.h"
#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

// Writes one session into a workspace's state directory, record by record.
class ForgedSession {
 public:
  explicit ForgedSession(const Workspace& ws) : ws_(ws) {
    StateDir state;
    Status s = StateDir::OpenAt(ws.home(), &state);
    BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
    s = BlobStore::Open(state.store_dir(), &store_);
    BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
    meta_.id = NewSessionId();
    meta_.root = ws.tree();
    meta_.argv = {"bash", "-c", "forged"};
    meta_.started_ns = 1796070612123000000;
    meta_.ended_ns = meta_.started_ns + 1000000000;
    meta_.state = SessionState::kFinished;
    meta_.exit_code = 0;
    meta_.guard_version = "0.1.0";
    dir_ = state.session_dir(meta_.id);
    if (!PathExists(state.sessions_dir())) MakeDir(state.sessions_dir(), 0700);
    MakeDir(dir_, 0700);
    s = JournalWriter::Create(dir_ + "/journal", &journal_);
    BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  }

  const std::string& id() const { return meta_.id; }

  FileState Regular(const std::string& content, uint32_t mode = 0644) {
    FileState f;
    f.type = FileType::kRegular;
    f.mode = mode;
    f.size = content.size();
    f.blob.kind = BlobRef::Kind::kKey;
    Status s = store_->PutBytes(content, &f.blob.key);
    BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
    return f;
  }
  static FileState Dir(uint32_t mode = 0755) {
    FileState f;
    f.type = FileType::kDirectory;
    f.mode = mode;
    return f;
  }
  static FileState Absent() { return FileState(); }

  // An operation that succeeded, with its outcome.
  void Op(OpKind kind, const std::string& path, const FileState& before, const std::string& path2 = "",
          const FileState& before2 = FileState(), uint32_t flags = 0) {
    Record r;
    r.kind = kind;
    r.seq = ++seq_;
    r.pid = 4242;
    r.comm = "forger";
    r.syscall = "forged";
    r.flags = flags;
    r.path = path;
    r.path2 = path2;
    r.before = before;
    r.before2 = before2;
    Append(r);
    Record outcome;
    outcome.kind = OpKind::kOutcome;
    outcome.seq = ++seq_;
    outcome.ref_seq = r.seq;
    Append(outcome);
    ++meta_.ops;
  }
  void Final(const std::string& path, const FileState& after) {
    Record r;
    r.kind = OpKind::kFinal;
    r.seq = ++seq_;
    r.path = path;
    r.after = after;
    Append(r);
  }
  void Finish() {
    Record end;
    end.kind = OpKind::kSessionEnd;
    end.seq = ++seq_;
    end.comm = "finished";
    Append(end);
    Status s = journal_->Sync();
    BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
    s = store_->SyncWritten();
    BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
    s = SaveSessionMeta(dir_ + "/meta.json", meta_);
    BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  }

 private:
  void Append(const Record& r) {
    Status s = journal_->Append(r);
    BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  }

  const Workspace& ws_;
  std::unique_ptr<BlobStore> store_;
  std::unique_ptr<JournalWriter> journal_;
  SessionMeta meta_;
  std::string dir_;
  uint64_t seq_ = 0;
};

// Everything beside the root that an escape could reach: the workspace
// minus the tree and guard's own state.
TreeSnapshot Surroundings(const Workspace& ws) { return SnapshotTree(ws.dir()).Without("tree").Without("home"); }

// What sits outside the root, for the journal's paths to aim at.
void BuildSentinel(const Workspace& ws) {
  std::string s = ws.outside() + "/sentinel";
  MakeDir(s, 0755);
  WriteFile(s + "/victim", "sentinel: victim\n", 0644);
  WriteFile(s + "/created-by-session", "sentinel: undo of a create would remove me\n", 0600);
  WriteFile(s + "/abs-victim", "sentinel: absolute victim\n", 0644);
  MakeDir(s + "/abs-dir", 0750);  // empty: an undone mkdir would remove it
  WriteFile(s + "/dotdot-victim", "sentinel: reached by a/../../\n", 0644);
  MakeDir(s + "/linked", 0755);  // the tree's "sub" will point here
  WriteFile(s + "/linked/file", "sentinel: below a symlinked parent\n", 0644);
  WriteFile(s + "/linked/made-by-session", "sentinel: undo of a create below the symlink\n", 0644);
  MakeDir(s + "/linked/deeper", 0755);
  WriteFile(s + "/linked/deeper/x", "sentinel: deeper\n", 0644);
  MakeDir(s + "/movable", 0755);  // a directory move's source, outside
  WriteFile(s + "/movable/inside", "sentinel: would be moved into the tree\n", 0644);
  MakeDir(s + "/moved-out", 0755);  // a directory move's destination, outside
  WriteFile(s + "/moved-out/inside", "sentinel: would be moved back into the tree\n", 0644);
  MakeDir(s + "/exchanged", 0755);
  WriteFile(s + "/exchanged/inside", "sentinel: would be swapped with a tree directory\n", 0644);
  WriteFile(s + "/flagged", "sentinel: recorded by name only\n", 0644);
}

struct Escape {
  std::string path;  // as the journal holds it, and as guard must report it
  const char* why;
};

// The malicious session: every record below aims outside the root, except
// ok.txt, a plain change that must still be undone and replayed.
std::vector<Escape> ForgeMaliciousSession(const Workspace& ws, ForgedSession* s) {
  const std::string sentinel = ws.outside() + "/sentinel";
  std::vector<Escape> escapes = {
      {"../outside/sentinel/victim", "a ../ path modified"},
      {"../outside/sentinel/created-by-session", "a ../ path created"},
      {sentinel + "/abs-victim", "an absolute path deleted, without the outside flag"},
      {sentinel + "/abs-dir", "an absolute directory made, without the outside flag"},
      {"a/../../outside/sentinel/dotdot-victim", "a/../../ modified"},
      {"sub/file", "modified below a parent now a symlink to outside"},
      {"sub/made-by-session", "created below a parent now a symlink to outside"},
      {"sub/deeper/x", "deleted two levels below the symlink"},
      {"sub/deeper", "a directory made below the symlink"},
      {"../outside/sentinel/movable", "a directory moved in from ../"},
      {"../outside/sentinel/moved-out", "a directory moved out to ../"},
      {sentinel + "/exchanged", "a directory exchanged with an absolute path, without the outside flag"},
      {"", "an empty path"},
      {"./../outside/sentinel/victim", "./../"},
  };
  ws.Write("ok.txt", "ok: the session's version\n");
  ws.Mkdir("moved-in");  // holds what the session moved in from ../outside/sentinel/movable
  ws.Write("moved-in/inside", "moved in\n");
  ws.Mkdir("exchanged-here");
  ws.Write("exchanged-here/inside", "exchanged\n");
  MakeSymlink(sentinel + "/linked", ws.Path("sub"));

  FileState evil = s->Regular("EVIL: written outside the root\n", 0777);
  s->Op(OpKind::kModify, "ok.txt", s->Regular("ok: before the session\n"));
  s->Op(OpKind::kModify, "../outside/sentinel/victim", evil);
  s->Op(OpKind::kCreate, "../outside/sentinel/created-by-session", ForgedSession::Absent());
  s->Op(OpKind::kDelete, sentinel + "/abs-victim", evil);
  s->Op(OpKind::kMkdir, sentinel + "/abs-dir", ForgedSession::Absent());
  s->Op(OpKind::kModify, "a/../../outside/sentinel/dotdot-victim", evil);
  s->Op(OpKind::kModify, "./../outside/sentinel/victim", evil);
  s->Op(OpKind::kModify, "sub/file", evil);
  s->Op(OpKind::kCreate, "sub/made-by-session", ForgedSession::Absent());
  s->Op(OpKind::kMkdir, "sub/deeper", ForgedSession::Absent());
  s->Op(OpKind::kDelete, "sub/deeper/x", evil);
  s->Op(OpKind::kRename, "../outside/sentinel/movable", ForgedSession::Dir(), "moved-in", ForgedSession::Absent());
  s->Op(OpKind::kRename, "moved-out-of-tree", ForgedSession::Dir(), "../outside/sentinel/moved-out",
        ForgedSession::Absent());
  s->Op(OpKind::kExchange, "exchanged-here", ForgedSession::Dir(), sentinel + "/exchanged", ForgedSession::Dir());
  s->Op(OpKind::kDelete, "", evil);
  // Recorded by name only, as guard records writes outside the root: to be ignored.
  s->Op(OpKind::kModify, sentinel + "/flagged", FileState(), "", FileState(), kOutsideRoot);

  s->Final("ok.txt", s->Regular("ok: the session's version\n"));
  s->Final("../outside/sentinel/victim", evil);
  s->Final("../outside/sentinel/created-by-session", evil);
  s->Final(sentinel + "/abs-victim", ForgedSession::Absent());
  s->Final(sentinel + "/abs-dir", ForgedSession::Dir());
  s->Final("a/../../outside/sentinel/dotdot-victim", evil);
  s->Final("sub/file", evil);
  s->Final("sub/made-by-session", evil);
  s->Final("sub/deeper", ForgedSession::Dir());
  s->Final("sub/deeper/x", ForgedSession::Absent());
  s->Final("moved-in", ForgedSession::Dir());
  s->Final("moved-in/inside", s->Regular("moved in\n"));
  s->Final("exchanged-here", ForgedSession::Dir());
  s->Final("exchanged-here/inside", s->Regular("exchanged\n"));
  s->Finish();
  return escapes;
}

std::string Lines(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& l : v) out += "    " + l + "\n";
  return out;
}

void ExpectNothingEscaped(const Workspace& ws, const TreeSnapshot& surroundings, const GuardResult& r) {
  std::vector<std::string> diffs = DiffSnapshots(surroundings, Surroundings(ws));
  BOOST_TEST(diffs.empty(), "written outside the root (expected, found):\n" << Lines(diffs) << DescribeResult(r));
}

// Whether guard's stderr reports `path` as refused: while planning ("cannot
// undo PATH: ...") or while applying ("not restored: PATH: ...").
bool Reported(const std::string& err, const std::string& verb, const std::string& path) {
  return err.find("cannot " + verb + " " + Printable(path) + ":") != std::string::npos ||
         err.find("not restored: " + Printable(path) + ":") != std::string::npos;
}

void ExpectReported(const std::vector<Escape>& escapes, const std::string& verb, const GuardResult& r) {
  for (const Escape& e : escapes) {
    if (e.path.empty()) continue;  // an empty path has nothing to show; it must only do no harm
    BOOST_TEST(Reported(r.err, verb, e.path), e.why << ": " << e.path << " is not reported as refused:\n"
                                                    << DescribeResult(r));
  }
  BOOST_TEST(r.err.find("flagged") == std::string::npos,
             "a path recorded by name only outside the root is mentioned:\n" << DescribeResult(r));
}

BOOST_AUTO_TEST_CASE(UndoAndReplayRefuseEveryPathThatLeavesTheRoot) {
  for (const char* verb : {"undo", "replay"}) {
    for (bool force : {false, true}) {
      BOOST_TEST_CONTEXT(verb << (force ? " --force" : "")) {
        Workspace ws;
        BuildSentinel(ws);
        ForgedSession session(ws);
        std::vector<Escape> escapes = ForgeMaliciousSession(ws, &session);
        TreeSnapshot surroundings = Surroundings(ws);

        std::vector<std::string> args = {verb, "--yes", "--session", session.id()};
        if (force) args.push_back("--force");
        GuardResult r = RunGuardCommand(ws, args);
        BOOST_TEST(r.exit_code != 0, DescribeResult(r));
        ExpectNothingEscaped(ws, surroundings, r);
        ExpectReported(escapes, verb, r);
        // What the symlink points at is not followed either way.
        BOOST_TEST(ReadFile(ws.outside() + "/sentinel/linked/file") == "sentinel: below a symlinked parent\n");
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(AnUndoRefusingEscapesStillRestoresThePlainPathsThenReplayRedoesThem) {
  Workspace ws;
  BuildSentinel(ws);
  ForgedSession session(ws);
  std::vector<Escape> escapes = ForgeMaliciousSession(ws, &session);
  TreeSnapshot surroundings = Surroundings(ws);

  GuardResult r = RunGuardCommand(ws, {"undo", "--yes", "--force", "--session", session.id()});
  BOOST_TEST(r.exit_code == 1, DescribeResult(r));
  ExpectNothingEscaped(ws, surroundings, r);
  BOOST_TEST(ws.Read("ok.txt") == "ok: before the session\n", DescribeResult(r));

  r = RunGuardCommand(ws, {"replay", "--yes", "--force", "--session", session.id()});
  BOOST_TEST(r.exit_code == 1, DescribeResult(r));
  ExpectNothingEscaped(ws, surroundings, r);
  BOOST_TEST(ws.Read("ok.txt") == "ok: the session's version\n", DescribeResult(r));
}

// Each escape alone in a session of its own: it is refused even when it is
// the only thing to do.
BOOST_AUTO_TEST_CASE(EachEscapeAloneIsRefused) {
  struct Single {
    const char* why;
    std::function<void(const Workspace&, ForgedSession*)> forge;
    std::string reported;  // the path guard must report ("absolute": the sentinel's created-by-session)
  };
  const std::vector<Single> singles = {
      {"../ modified",
       [](const Workspace&, ForgedSession* s) {
         s->Op(OpKind::kModify, "../outside/sentinel/victim", s->Regular("EVIL\n"));
       },
       "../outside/sentinel/victim"},
      {"absolute path created (undo removes)",
       [](const Workspace& ws, ForgedSession* s) {
         s->Op(OpKind::kCreate, ws.outside() + "/sentinel/created-by-session", ForgedSession::Absent());
       },
       "absolute"},
      {"below a symlinked parent, deleted (undo rewrites)",
       [](const Workspace& ws, ForgedSession* s) {
         MakeSymlink(ws.outside() + "/sentinel/linked", ws.Path("sub"));
         s->Op(OpKind::kDelete, "sub/file", s->Regular("EVIL\n"));
       },
       "sub/file"},
      {"below a symlinked parent, created (undo removes)",
       [](const Workspace& ws, ForgedSession* s) {
         MakeSymlink(ws.outside() + "/sentinel/linked", ws.Path("sub"));
         s->Op(OpKind::kCreate, "sub/made-by-session", ForgedSession::Absent());
       },
       "sub/made-by-session"},
      {"a directory of the tree moved out through ../ (undo moves it back in)",
       [](const Workspace&, ForgedSession* s) {
         s->Op(OpKind::kRename, "gone", ForgedSession::Dir(), "../outside/sentinel/moved-out", ForgedSession::Absent());
       },
       "../outside/sentinel/moved-out"},
      {"a directory moved in through ../ (undo moves it out)",
       [](const Workspace& ws, ForgedSession* s) {
         ws.Mkdir("moved-in");
         ws.Write("moved-in/inside", "moved in\n");
         s->Op(OpKind::kRename, "../outside/sentinel/movable", ForgedSession::Dir(), "moved-in",
               ForgedSession::Absent());
         s->Final("moved-in", ForgedSession::Dir());
         s->Final("moved-in/inside", s->Regular("moved in\n"));
       },
       "../outside/sentinel/movable"},
  };
  for (const Single& single : singles) {
    for (const char* verb : {"undo", "replay"}) {
      BOOST_TEST_CONTEXT(single.why << ", " << verb << " --force") {
        Workspace ws;
        BuildSentinel(ws);
        ForgedSession session(ws);
        single.forge(ws, &session);
        session.Finish();
        TreeSnapshot surroundings = Surroundings(ws);
        GuardResult r = RunGuardCommand(ws, {verb, "--yes", "--force", "--session", session.id()});
        ExpectNothingEscaped(ws, surroundings, r);
        std::string reported = single.reported == "absolute" ? ws.outside() + "/sentinel/created-by-session"
                                                              : single.reported;
        BOOST_TEST(r.exit_code != 0, DescribeResult(r));
        BOOST_TEST(Reported(r.err, verb, reported), DescribeResult(r));
      }
    }
  }
}

}  // namespace
}  // namespace guard::e2e
