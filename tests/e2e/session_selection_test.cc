// How the commands that act on a recorded session find it, on the edges a
// new user meets: --root before or after the subcommand, an empty
// --session, a PATH the session never touched, a command run from a
// subdirectory of a root that is no git work tree, and a root the session
// removed (from outside it, and from a shell that stood in it).
#define BOOST_TEST_MODULE session_selection
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/e2e/support/watch_blind.h"
#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

// One session of `script` (bash, in the tree) that must succeed; its id.
std::string MustRunSession(const Workspace& ws, const std::string& script) {
  GuardResult r = RunGuardBash(ws, script);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0 && r.new_sessions.size() == 1, DescribeResult(r));
  return r.new_sessions[0];
}

GuardResult RunIn(const Workspace& ws, const std::string& cwd, const std::vector<std::string>& args) {
  GuardCommand command;
  command.args = args;
  command.cwd = cwd;
  return RunGuardCommand(ws, command);
}

size_t LineCount(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

std::vector<std::string> SessionIdsListed(const ProcessResult& r) {
  std::vector<std::string> ids;
  for (const nlohmann::json& j : nlohmann::json::parse(r.out)) ids.push_back(j.value("id", ""));
  return ids;
}

// Each subcommand that reads a root's sessions, run from a directory
// outside the root, with --root before the subcommand and after it.
BOOST_AUTO_TEST_CASE(RootGivenBeforeOrAfterTheSubcommandSelectsThatRootsSessions) {
  Workspace ws;
  ws.Write("a", "before\n");
  std::string id = MustRunSession(ws, "echo after > a");
  struct Case {
    std::vector<std::string> args;
    std::string expected;  // in stdout
  };
  for (const Case& c : {Case{{"sessions", "--json"}, id}, Case{{"status", "--json"}, id}, Case{{"show"}, id},
                        Case{{"diff"}, "+after"}, Case{{"export"}, "+after"}, Case{{"undo", "--dry-run"}, id},
                        Case{{"replay", "--dry-run"}, id}}) {
    for (bool before : {true, false}) {
      std::vector<std::string> args = c.args;
      args.insert(before ? args.begin() : args.begin() + 1, {"--root", ws.tree()});
      BOOST_TEST_CONTEXT(args[0] + " " + args[1] + " " + args[2]) {
        GuardResult r = RunIn(ws, ws.outside(), args);
        BOOST_TEST(r.exit_code == 0, DescribeResult(r));
        BOOST_TEST(r.out.find(c.expected) != std::string::npos, DescribeResult(r));
      }
    }
  }
  BOOST_TEST(ws.Read("a") == "after\n");  // only dry runs
}

BOOST_AUTO_TEST_CASE(RootGivenTwiceDifferentlyIsOneUsageError) {
  Workspace ws;
  MustRunSession(ws, "echo x > a");
  GuardResult r = RunIn(ws, ws.outside(), {"--root", ws.tree(), "undo", "--root", ws.outside(), "--yes"});
  BOOST_TEST(r.exit_code == 2, DescribeResult(r));
  BOOST_TEST(LineCount(r.err) == 1u, DescribeResult(r));
  BOOST_TEST(ws.Exists("a"));
}

BOOST_AUTO_TEST_CASE(EmptySessionIsAOneLineUsageErrorNotTheLastSession) {
  Workspace ws;
  ws.Write("a", "before\n");
  MustRunSession(ws, "echo after > a");
  for (std::string command : {"undo", "replay", "show", "diff", "export"}) {
    BOOST_TEST_CONTEXT(command) {
      std::vector<std::string> args = {command, "--session", ""};
      if (command == "undo" || command == "replay") args.push_back("--yes");
      GuardResult r = RunGuardCommand(ws, args);
      BOOST_TEST(r.exit_code == 2, DescribeResult(r));
      BOOST_TEST(LineCount(r.err) == 1u, DescribeResult(r));
      BOOST_TEST(r.err.find("--session") != std::string::npos, DescribeResult(r));
      BOOST_TEST(r.new_sessions.empty());
    }
  }
  BOOST_TEST(ws.Read("a") == "after\n");
}

BOOST_AUTO_TEST_CASE(SessionOptionsBeforeASubcommandAreAUsageErrorNotSilentlyIgnored) {
  Workspace ws;
  ws.Write("a", "before\n");
  MustRunSession(ws, "echo after > a");
  const std::vector<std::vector<std::string>> given = {
      {"--quiet", "undo", "--yes"}, {"--on-capture-failure", "allow", "replay", "--yes"}, {"--mode", "trace", "show"}};
  for (const auto& args : given) {
    BOOST_TEST_CONTEXT(args.front()) {
      GuardResult r = RunGuardCommand(ws, args);
      BOOST_TEST(r.exit_code == 2, DescribeResult(r));
      BOOST_TEST(LineCount(r.err) == 1u, DescribeResult(r));
      BOOST_TEST(r.err.find(args.front()) != std::string::npos, DescribeResult(r));
      BOOST_TEST(r.new_sessions.empty());
    }
  }
  BOOST_TEST(ws.Read("a") == "after\n");
}

BOOST_AUTO_TEST_CASE(UndoOrReplayOfAPathTheSessionNeverTouchedNamesItAndChangesNothing) {
  Workspace ws;
  ws.Write("a", "before\n");
  ws.Mkdir("dir");
  ws.Write("dir/b", "before\n");
  std::string id = MustRunSession(ws, "echo after > a; echo after > dir/b");
  for (std::string verb : {"undo", "replay"}) {
    BOOST_TEST_CONTEXT(verb) {
      GuardResult alone = RunGuardCommand(ws, {verb, "--yes", "never"});
      BOOST_TEST(alone.exit_code == 1, DescribeResult(alone));
      BOOST_TEST(alone.err == "guard: never was not touched by session " + id + "; nothing was changed\n",
                 DescribeResult(alone));
      BOOST_TEST(alone.new_sessions.empty());
      // With a touched path beside it, still nothing is changed.
      GuardResult mixed = RunGuardCommand(ws, {verb, "--yes", "a", "never", "dir/nor-this"});
      BOOST_TEST(mixed.exit_code == 1, DescribeResult(mixed));
      BOOST_TEST(mixed.err == "guard: never, dir/nor-this were not touched by session " + id +
                                  "; nothing was changed\n",
                 DescribeResult(mixed));
      BOOST_TEST(mixed.new_sessions.empty());
    }
  }
  BOOST_TEST(ws.Read("a") == "after\n");
  // A directory above a touched path counts as touched.
  GuardResult dir = RunGuardCommand(ws, {"undo", "--yes", "dir"});
  BOOST_TEST(dir.exit_code == 0, DescribeResult(dir));
  BOOST_TEST(ws.Read("dir/b") == "before\n");
  BOOST_TEST(ws.Read("a") == "after\n");
}

// The workspace's tree is no git work tree: guard -- CMD in it takes the
// current directory as the root, and a command run further down must find
// that root's sessions as git finds .git, the nearest root winning.
BOOST_AUTO_TEST_CASE(CommandsRunInASubdirectoryOfARootFindTheNearestRecordedRoot) {
  Workspace ws;
  ws.Mkdir("sub");
  ws.Mkdir("sub/deeper");
  ws.Write("a", "before\n");
  std::string id = MustRunSession(ws, "echo after > a");
  std::string deeper = ws.Path("sub/deeper");

  GuardResult listed = RunIn(ws, deeper, {"sessions", "--json"});
  BOOST_REQUIRE_MESSAGE(listed.exit_code == 0, DescribeResult(listed));
  BOOST_TEST((SessionIdsListed(listed) == std::vector<std::string>{id}), DescribeResult(listed));
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"status"}, {"show"}, {"diff"}, {"export"}, {"replay", "--dry-run"}}) {
    BOOST_TEST_CONTEXT(args[0]) {
      GuardResult r = RunIn(ws, deeper, args);
      BOOST_TEST(r.exit_code == 0, DescribeResult(r));
      BOOST_TEST(r.err.find("no guard session") == std::string::npos, DescribeResult(r));
    }
  }
  GuardResult undo = RunIn(ws, deeper, {"undo", "--yes"});
  BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
  BOOST_TEST(ws.Read("a") == "before\n");

  // A session of `sub` itself: from sub/deeper, the nearer root wins.
  GuardRun inner;
  inner.command = {"bash", "-c", "echo inner > sub/deeper/made"};
  ProcessSpec spec = GuardSpec(ws, inner);
  *(std::find(spec.argv.begin(), spec.argv.end(), "--root") + 1) = ws.Path("sub");
  std::vector<std::string> ids = ws.SessionIds();
  ProcessResult ran = RunProcess(spec);
  BOOST_REQUIRE_MESSAGE(ran.exit_code == 0 && ws.SessionIds().size() == ids.size() + 1, DescribeResult(ran));
  std::string inner_id = ws.SessionIds().back();
  GuardResult nearest = RunIn(ws, deeper, {"sessions", "--json"});
  BOOST_TEST((SessionIdsListed(nearest) == std::vector<std::string>{inner_id}), DescribeResult(nearest));
}

struct RemovedRoot {
  Workspace ws;
  TreeSnapshot before;
  mode_t root_mode = 0;
  RemovedRoot() {
    ws.Write("a", "file a\n");
    ws.Mkdir("sub", 0750);
    ws.Write("sub/b", "file b\n", 0600);
    ws.Symlink("a", "link");
    ws.Mkdir("empty");
    chmod(ws.tree().c_str(), 0751);
    before = SnapshotTree(ws.tree());
    struct stat st;
    BOOST_REQUIRE(stat(ws.tree().c_str(), &st) == 0);
    root_mode = st.st_mode & 07777;
  }
  void ExpectRestored() {
    struct stat st;
    BOOST_REQUIRE_MESSAGE(stat(ws.tree().c_str(), &st) == 0, "the root was not made again");
    BOOST_TEST((st.st_mode & 07777) == root_mode);
    std::vector<std::string> diffs = DiffSnapshots(before, SnapshotTree(ws.tree()));
    BOOST_TEST(diffs.empty(), "first difference: " << (diffs.empty() ? "" : diffs[0]));
  }
};

BOOST_AUTO_TEST_CASE(UndoMakesAgainARootTheSessionRemovedAndEverythingBelowIt, GUARD_WATCH_BLIND("the root itself removed: watch mode keeps no state of the root, so its removal is not recorded")) {
  RemovedRoot t;
  GuardRun run;
  run.command = {"rm", "-rf", t.ws.tree()};
  run.cwd = t.ws.outside();
  GuardResult removed = RunGuard(t.ws, run);
  BOOST_REQUIRE_MESSAGE(removed.exit_code == 0 && !PathExists(t.ws.tree()), DescribeResult(removed));
  GuardResult undo = RunIn(t.ws, t.ws.outside(), {"--root", t.ws.tree(), "undo", "--yes"});
  BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
  t.ExpectRestored();
}

// The shell stood in sub/ when the session removed the root: its current
// directory is gone, and `guard undo` run from there must still find the
// session and make everything again.
BOOST_AUTO_TEST_CASE(UndoFromACurrentDirectoryTheSessionRemovedMakesTheRootAgain, GUARD_WATCH_BLIND("the root itself removed: watch mode keeps no state of the root, so its removal is not recorded")) {
  RemovedRoot t;
  ProcessSpec spec;
  spec.argv = {"bash", "-c",
               "cd sub && \"$GUARD\" -q --root \"$TREE\" -- rm -rf \"$TREE\" && [ ! -e \"$TREE\" ] && "
               "\"$GUARD\" undo --yes"};
  spec.cwd = t.ws.tree();
  spec.env = GuardEnv(t.ws);
  spec.env["GUARD"] = GuardBinary();
  spec.env["TREE"] = t.ws.tree();
  ProcessResult r = RunProcess(spec);
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  t.ExpectRestored();
}

}  // namespace
}  // namespace guard::e2e
