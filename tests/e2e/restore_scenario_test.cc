// guard undo / guard replay on small hand-written sessions, each the smallest
// form of a case the random workloads (restore_*_workload_test) exercise.
#define BOOST_TEST_MODULE restore_scenario
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <functional>

#include "tests/e2e/support/watch_blind.h"
#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/random_workload.h"
#include "tests/e2e/support/session_view.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/undone_session.h"
#include "tests/e2e/support/workspace.h"
#include "tests/e2e/support/preload_blind.h"

namespace guard::e2e {
namespace {

// A tree, one session of `script` on it, and the snapshots around it.
struct Scenario : UndoneScript {
  using UndoneScript::UndoneScript;

  // The seq of the first operation of `kind` on `path`.
  std::string SeqOf(OpKind kind, const std::string& path) const {
    SessionView v = View();
    const Record* r = v.FindOp(kind, path);
    BOOST_REQUIRE_MESSAGE(r != nullptr, "no " << OpKindName(kind) << " of " << path << " in\n" << v.Dump());
    return std::to_string(r->seq);
  }
};

std::string Exchange() { return ShellQuote(TestProgram("rename_exchange")); }

// ---------------------------------------------------------------------------
// Cases that work.

BOOST_AUTO_TEST_CASE(UndoMovesADirectoryBackWithTheFilesItHeld) {
  Scenario s(
      [](const Workspace& ws) {
        ws.Mkdir("d", 0750);
        ws.Write("d/f", "f\n");
        ws.Mkdir("d/sub");
        ws.Write("d/sub/g", "g\n", 0600);
      },
      "mv d e && echo changed >> e/sub/g");
  s.ExpectUndoReplayUndo();
}

BOOST_AUTO_TEST_CASE(UndoTurnsAFileReplacedByADirectoryBackIntoTheFile) {
  Scenario s([](const Workspace& ws) { ws.Write("x", "the file\n", 0640); },
             "rm x && mkdir x && echo inner > x/inner && rm -r x && printf again > x");
  s.ExpectUndoReplayUndo();
}

BOOST_AUTO_TEST_CASE(UndoTurnsADirectoryReplacedByAFileBackIntoTheDirectory) {
  Scenario s(
      [](const Workspace& ws) {
        ws.Mkdir("d");
        ws.Write("d/f", "f\n");
        ws.Symlink("f", "d/link");
      },
      "rm -rf d && echo file > d");
  s.ExpectUndoReplayUndo();
}

BOOST_AUTO_TEST_CASE(UndoSwapsBackTwoExchangedFiles) {
  Scenario s(
      [](const Workspace& ws) {
        ws.Write("a", "a\n", 0600);
        ws.Write("b", "b\n", 0755);
      },
      Exchange() + " a b");
  s.ExpectUndoReplayUndo();
}

BOOST_AUTO_TEST_CASE(PartialUndoStopsBeforeTheGivenOperation, GUARD_WATCH_BLIND("a rename is seen as a removal and a creation between two looks")) {
  Scenario s([](const Workspace& ws) { ws.Write("f", "1\n"); },
             "echo 2 > f && mkdir d && mv f d/f && echo 3 >> d/f && chmod 600 d/f");
  TreeSnapshot at_rename;
  at_rename.entries["f"] = TreeEntry{FileType::kRegular, 0644, "2\n", ""};
  at_rename.entries["d"] = TreeEntry{FileType::kDirectory, s.after().Find("d")->mode, "", ""};
  s.Expect({"undo", "--yes", "--to", s.SeqOf(OpKind::kRename, "f")}, at_rename);
}

// Both failed before af89020 (SessionHistory took paths below a renamed file
// for paths below a directory, and knew the end state of paths below the
// source of a directory move only): undo --to and replay exited 1 with
// "the journal does not say what it held then".
BOOST_AUTO_TEST_CASE(PartialUndoBeforeARenameOfAFileThatReplacedADirectory, GUARD_WATCH_BLIND("a rename is seen as a removal and a creation between two looks")) {
  Scenario s(
      [](const Workspace& ws) {
        ws.Mkdir("d");
        ws.Write("d/f", "f\n");
      },
      "rm -rf d && echo file > d && mv d e");
  TreeSnapshot before_rename;
  before_rename.entries["d"] = TreeEntry{FileType::kRegular, 0644, "file\n", ""};
  s.Expect({"undo", "--yes", "--to", s.SeqOf(OpKind::kRename, "d")}, before_rename);
}

BOOST_AUTO_TEST_CASE(ReplayOfADirectoryMovedAfterAFileInItWasDeleted) {
  Scenario s([](const Workspace&) {}, "mkdir d && echo x > d/f && rm d/f && mv d e");
  s.ExpectUndoReplayUndo();
}

// A directory exchanged with one outside the root: what d held leaves, what
// the other held arrives (docs/capture.md, carried entries).
BOOST_AUTO_TEST_CASE(UndoOfADirectoryExchangedWithOneOutsideTheRoot, GUARD_PRELOAD_BLIND("a rename across the root edge")) {
  Scenario s(
      [](const Workspace& ws) {
        ws.Mkdir("d");
        ws.Write("d/f", "inside\n", 0600);
        ws.Mkdir("d/sub");
        ws.Symlink("../f", "d/sub/link");
        MakeDir(ws.outside() + "/o");
        WriteFile(ws.outside() + "/o/g", "from outside\n");
      },
      Exchange() + " d ../outside/o");
  s.ExpectUndoReplayUndo();
}

BOOST_AUTO_TEST_CASE(UndoOfADirectoryMovedInThenChanged, GUARD_PRELOAD_BLIND("a rename across the root edge")) {
  Scenario s(
      [](const Workspace& ws) {
        MakeDir(ws.outside() + "/src");
        WriteFile(ws.outside() + "/src/f", "from outside\n");
        MakeDir(ws.outside() + "/src/sub");
        WriteFile(ws.outside() + "/src/sub/g", "deeper\n");
      },
      "mv ../outside/src in && echo more >> in/f && rm in/sub/g && mkdir in/new && echo n > in/new/n");
  s.ExpectUndoReplayUndo();
}

// ---------------------------------------------------------------------------
// Cases that fail on the current code.

// Expected: the two names swap back. Found, for each pair: "nothing to
// change in ROOT", exit 0, the tree left exchanged. The plan compares each
// path with what is now at its pre-exchange name, finds them equal, and so
// never applies the exchange it lists in RestorePlan::moves.
BOOST_AUTO_TEST_CASE(UndoSwapsBackAnExchangeInvolvingADirectory) {
  struct Pair {
    const char* what;
    std::function<void(const Workspace&)> other;  // makes "b"
  };
  const std::vector<Pair> pairs = {
      {"two directories",
       [](const Workspace& ws) {
         ws.Mkdir("b");
         ws.Write("b/f", "in b\n");
       }},
      {"a directory and a file", [](const Workspace& ws) { ws.Write("b", "b\n"); }},
      {"a directory and a symlink", [](const Workspace& ws) { ws.Symlink("elsewhere", "b"); }},
  };
  for (const Pair& pair : pairs) {
    BOOST_TEST_CONTEXT(pair.what) {
      Scenario s(
          [&](const Workspace& ws) {
            ws.Mkdir("a");
            ws.Write("a/f", "in a\n");
            pair.other(ws);
          },
          Exchange() + " a b");
      s.ExpectUndoReplayUndo();
    }
  }
}

// Expected: d and d/f come back. Found: d comes back empty, exit 1, "cannot
// undo d/f: refusing d/f: a parent directory is a symlink or leaves the
// root": the plan stats every path before anything is applied, and below the
// symlink that the undo itself is about to replace by the directory it
// refuses to look (ApplyRestore's removal pass refuses it too). Most failing
// seeds of the random workloads are this case, reached through exchanges and
// renames over symlinks.
BOOST_AUTO_TEST_CASE(UndoRestoresTheFilesOfADirectoryReplacedByASymlink) {
  Scenario s(
      [](const Workspace& ws) {
        ws.Mkdir("d");
        ws.Write("d/f", "f\n");
      },
      "rm -rf d && ln -s /tmp d");
  s.ExpectUndoReplayUndo();
}

// d and everything it held come back: the capture of the rename out of the
// root recorded, before it, the removal of every file and directory below d
// with their content (kCarried), so the agent pattern "mv build /tmp/trash
// && rm -rf /tmp/trash" loses nothing.
BOOST_AUTO_TEST_CASE(UndoRestoresADirectoryMovedOutOfTheRootWithItsFiles, GUARD_PRELOAD_BLIND("a rename across the root edge")) {
  Scenario s(
      [](const Workspace& ws) {
        ws.Mkdir("d");
        ws.Write("d/f", "f\n");
        ws.Mkdir("d/sub");
        ws.Write("d/sub/g", "g\n");
      },
      "mv d ../outside/d && rm -rf ../outside/d");
  s.ExpectUndoReplayUndo();
}

// The directory moved in from outside is removed (it was not there before
// the session): the capture of the rename recorded, after it, the creation
// of everything below it (kCarried), so the history knows in/f was absent
// before, and the sealing recorded what it held at the end.
BOOST_AUTO_TEST_CASE(UndoRemovesADirectoryMovedIntoTheRoot, GUARD_PRELOAD_BLIND("a rename across the root edge")) {
  Scenario s(
      [](const Workspace& ws) {
        MakeDir(ws.outside() + "/src");
        WriteFile(ws.outside() + "/src/f", "from outside\n");
      },
      "mv ../outside/src in");
  s.ExpectUndoReplayUndo();
}

// A move across the root boundary is one call written as several records
// (the rename and the entries it carried): a restore --to any of them lands
// before or after the whole move, never in a state the tree never had (a
// directory half emptied, or moved in still empty).
BOOST_AUTO_TEST_CASE(RestoreToARecordOfAMoveAcrossTheRootNeverSplitsTheMove, GUARD_PRELOAD_BLIND("a rename across the root edge")
                     GUARD_WATCH_BLIND("changes seen in one look are recorded in the watcher's order, not the calls': a restore --to one of them may stop between two calls")) {
  {
    Scenario s(
        [](const Workspace& ws) {
          ws.Mkdir("d");
          ws.Write("d/f", "f\n");
          ws.Mkdir("d/sub");
          ws.Write("d/sub/g", "g\n");
          ws.Write("keep", "k\n");
        },
        "echo changed > keep && mv d ../outside/d");
    TreeSnapshot before_move = s.before();
    before_move.entries["keep"] = TreeEntry{FileType::kRegular, 0644, "changed\n", ""};
    for (const char* path : {"d/sub/g", "d/f"}) {
      BOOST_TEST_CONTEXT("moved out, --to the carried delete of " << path) {
        s.Expect({"undo", "--yes", "--session", s.id(), "--to", s.SeqOf(OpKind::kDelete, path)}, before_move);
        s.Expect({"replay", "--yes", "--session", s.id(), "--to", s.SeqOf(OpKind::kDelete, path)}, s.after());
      }
    }
    s.Expect({"undo", "--yes", "--session", s.id(), "--to", s.SeqOf(OpKind::kRename, "d")}, before_move);
  }
  {
    Scenario s(
        [](const Workspace& ws) {
          MakeDir(ws.outside() + "/src");
          MakeDir(ws.outside() + "/src/sub");
          WriteFile(ws.outside() + "/src/sub/f", "from outside\n");
          ws.Write("keep", "k\n");
        },
        "echo changed > keep && mv ../outside/src in");
    TreeSnapshot before_move = s.before();
    before_move.entries["keep"] = TreeEntry{FileType::kRegular, 0644, "changed\n", ""};
    for (const char* path : {"in/sub", "in/sub/f"}) {
      BOOST_TEST_CONTEXT("moved in, --to the carried creation of " << path) {
        OpKind kind = std::string(path) == "in/sub" ? OpKind::kMkdir : OpKind::kCreate;
        s.Expect({"undo", "--yes", "--session", s.id(), "--to", s.SeqOf(kind, path)}, before_move);
        s.Expect({"replay", "--yes", "--session", s.id(), "--to", s.SeqOf(kind, path)}, s.after());
      }
    }
  }
}

// Both names of a hard-linked file come back as they were, whichever name
// the session wrote through or chmod'ed (docs/format.md, Part IV, "Other
// names of a changed file"); names made during the session count too.
BOOST_AUTO_TEST_CASE(UndoRestoresBothNamesOfAHardLinkedFile) {
  for (const char* script : {"echo two >> a", "chmod 600 b", "echo three > sub/c && chmod 700 a",
                             "ln a late && echo two >> late && echo four >> a"}) {
    BOOST_TEST_CONTEXT(script) {
      Scenario s(
          [](const Workspace& ws) {
            ws.Write("a", "one\n");
            ws.Mkdir("sub");
            BOOST_REQUIRE(link(ws.Path("a").c_str(), ws.Path("b").c_str()) == 0);
            BOOST_REQUIRE(link(ws.Path("a").c_str(), ws.Path("sub/c").c_str()) == 0);
          },
          script);
      s.ExpectUndoReplayUndo();
    }
  }
}

// Expected: planning is quick (the session has 21 operations). Found: the
// undo never finishes (exponential time and memory, 50 s for 4 rounds of the
// loop, past 100 s for 5): PlanRestore adds, round after round, the names a
// path has on either side of every directory move, and with moves into
// directories that were themselves moved the names grow without end
// ("A/B/A/s/B/A/B/..."). A seed of the directory workloads hit it with 8
// ordinary moves.
BOOST_AUTO_TEST_CASE(UndoOfDirectoriesNestedIntoEachOtherFinishesQuickly) {
  Scenario s(
      [](const Workspace& ws) {
        ws.Mkdir("A");
        ws.Mkdir("A/s");
        ws.Write("A/s/f", "f\n");
        ws.Mkdir("B");
        ws.Write("B/g", "g\n");
      },
      "mv A/s B/s && mkdir A/s && mv B A/s/B && "
      "for i in 1 2 3 4 5; do mkdir B && mv A B/A && mkdir A && mv B A/B; done");
  GuardCommand undo;
  undo.args = {"undo", "--yes"};
  undo.timeout_seconds = 20;
  GuardResult r = RunGuardCommand(s.ws, undo);
  BOOST_TEST(!r.timed_out, "guard undo did not finish in 20 s");
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(DiffSnapshots(s.before(), SnapshotTree(s.ws.tree())).empty());
}

// Expected: guard reads nothing outside the root, and the undo puts d back.
// Found: when the session ends, guard records the final state of everything
// below each moved directory's old and new names, walking them with
// std::filesystem::recursive_directory_iterator, which follows the symlink
// now at the old name: every file of the symlink's target (outside the
// root) is copied into the blob store and recorded as a kFinal "d/...". A
// symlink to /tmp copied 1.3 GB; to $HOME it would copy the user's keys. The
// undo then exits 1 ("cannot undo d/secret: the journal does not say what it
// held then").
BOOST_AUTO_TEST_CASE(SealingDoesNotFollowASymlinkPutWhereAMovedDirectoryWas, GUARD_WATCH_BLIND("the directory moved away is seen as its entries removed, which are recorded at their names below where the symlink now is")) {
  Scenario s(
      [](const Workspace& ws) {
        ws.Mkdir("d");
        ws.Write("d/f", "f\n");
        MakeDir(ws.outside() + "/private");
        WriteFile(ws.outside() + "/private/secret", "a secret outside the root\n", 0600);
      },
      "mv d d.bak && ln -s ../outside/private d");
  SessionView v = SessionView::Load(s.ws.home(), s.id());
  for (const Record& r : v.records()) {
    BOOST_TEST(r.path.rfind("d/", 0) != 0, "recorded below the symlink: " << OpKindName(r.kind) << " " << r.path);
  }
  s.Expect({"undo", "--yes"}, s.before());
}

// chmod of the root itself is recorded under the name "."; undo and replay
// set the root's mode back (and forth), as for any directory beneath it.
BOOST_AUTO_TEST_CASE(UndoAndReplayRestoreTheModeOfTheRootItself, GUARD_WATCH_BLIND("watch mode keeps no state of the root itself, so a change of its mode is not recorded")) {
  Scenario s([](const Workspace& ws) {
    BOOST_REQUIRE(chmod(ws.tree().c_str(), 0755) == 0);
    ws.Write("f", "f\n");
  }, "chmod 0700 . && echo changed > f");
  auto root_mode = [&] {
    struct stat st;
    BOOST_REQUIRE(stat(s.ws.tree().c_str(), &st) == 0);
    return st.st_mode & 07777;
  };
  BOOST_REQUIRE(root_mode() == 0700u);
  s.Expect({"undo", "--yes", "--session", s.id()}, s.before());
  BOOST_TEST(root_mode() == 0755u);
  s.Expect({"replay", "--yes", "--session", s.id()}, s.after());
  BOOST_TEST(root_mode() == 0700u);
  s.Expect({"undo", "--yes", "--session", s.id()}, s.before());
  BOOST_TEST(root_mode() == 0755u);
}

}  // namespace
}  // namespace guard::e2e
