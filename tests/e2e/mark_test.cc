// guard mark and what takes marks: marks made from a shell, a subprocess
// and a program with an empty environment land in the session that traces
// them, in order among its operations; outside a session guard mark fails
// (and the hook form does nothing, quietly); guard show groups operations
// under marks; undo --to MARK, replay --to MARK and undo --turns N bring a
// scripted "agent" session's tree to the state at a mark, byte for byte;
// diff --to MARK and export --to MARK show the change from the session's
// start to a mark (the exported patch and tar rebuild the tree at the mark);
// marks of a session whose guard was killed survive its recovery.
#define BOOST_TEST_MODULE mark
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/watch_blind.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

struct FixedUmask {
  FixedUmask() { ::umask(022); }
};
BOOST_TEST_GLOBAL_FIXTURE(FixedUmask);

// The scripted agent: what it does in each turn, and the hook marks
// between them (a turn mark before each turn, a step after some commands).
const std::vector<std::string> kTurns = {
    // before the first mark (the agent starting up)
    "printf 'config\\n' > setup.cfg\n",
    // turn 1
    "printf 'one\\n' > a.txt\nmkdir -p src\nprintf 'int main;\\n' > src/main.c\n",
    // turn 2
    "sed -i s/one/two/ a.txt\nrm src/main.c\nmv keep.txt kept.txt\nln -s a.txt link\n",
    // turn 3
    "printf 'three\\n' >> a.txt\nchmod 600 kept.txt\nrmdir src\nprintf 'bin\\0ary' > blob.bin\n",
};

void BuildTree(const std::string& root) {
  WriteFile(root + "/keep.txt", "kept across turns\n");
  WriteFile(root + "/a.txt", "zero\n");
}

// The trees after each element of kTurns, made by running the same
// commands without guard in a tree of their own.
std::vector<TreeSnapshot> ExpectedTrees(const Workspace& ws) {
  std::string dir = ws.outside() + "/expected";
  MakeDir(dir);
  BuildTree(dir);
  std::vector<TreeSnapshot> out = {SnapshotTree(dir)};
  for (const std::string& turn : kTurns) {
    ProcessSpec spec;
    spec.argv = {"bash", "-ec", turn};
    spec.cwd = dir;
    ProcessResult r = RunProcess(spec);
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
    out.push_back(SnapshotTree(dir));
  }
  return out;
}

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

// Runs the agent under guard, with `guard mark` at the start of turns 1-3
// and a step after each of them but the last.
std::string RunAgent(const Workspace& ws) {
  const std::string g = Quoted(GuardBinary());
  std::string script = "set -e\n" + kTurns[0];
  script += g + " mark 'prompt: first'\n" + kTurns[1] + g + " mark --step Bash\n";
  script += g + " mark 'prompt: second'\n" + kTurns[2] + g + " mark --step Edit\n";
  script += g + " mark 'prompt: third'\n" + kTurns[3];
  GuardResult r = RunGuardBash(ws, script);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  BOOST_REQUIRE_EQUAL(r.new_sessions.size(), 1u);
  return r.new_sessions[0];
}

void CheckTree(const Workspace& ws, const TreeSnapshot& expected, const std::string& what) {
  std::vector<std::string> diffs = DiffSnapshots(expected, SnapshotTree(ws.tree()));
  std::string all;
  for (const std::string& d : diffs) all += "\n  " + d;
  BOOST_TEST(diffs.empty(), what << ": the tree differs from the expected one:" << all);
}

GuardResult MustRun(const Workspace& ws, const std::vector<std::string>& args) {
  GuardResult r = RunGuardCommand(ws, args);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "guard " << args[0] << ": " << DescribeResult(r));
  return r;
}

nlohmann::json ShowJson(const Workspace& ws, const std::string& id) {
  GuardResult r = MustRun(ws, {"show", "--session", id, "--json"});
  return nlohmann::json::parse(r.out);
}

BOOST_AUTO_TEST_CASE(MarksFromShellSubprocessAndEmptyEnvironmentLandInOrder) {
  Workspace ws;
  const std::string g = Quoted(GuardBinary());
  GuardResult r = RunGuardBash(ws, "set -e\necho 1 > one\n" + g + " mark from bash\necho 2 > two\n" +
                                        "sh -c \"" + g + " mark from a subprocess\"\necho 3 > three\n" +
                                        "env -i " + g + " mark with no environment\necho 4 > four\n");
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  BOOST_REQUIRE_EQUAL(r.new_sessions.size(), 1u);
  nlohmann::json all = ShowJson(ws, r.new_sessions[0]);
  std::vector<std::string> order;
  for (const auto& e : all) {
    if (e["op"] == "mark") order.push_back("@" + std::to_string(e["mark"].get<int>()) + " " + e["label"].get<std::string>());
    else if (e["op"] == "create") order.push_back(e["path"].get<std::string>());
  }
  std::vector<std::string> expected = {"one", "@1 from bash", "two", "@2 from a subprocess", "three",
                                       "@3 with no environment", "four"};
  BOOST_TEST(order == expected, "order seen: " << nlohmann::json(order).dump());
}

BOOST_AUTO_TEST_CASE(MarkOutsideASessionFailsInOneLineAndTheHookFormIsQuiet) {
  Workspace ws;
  ProcessSpec spec;
  spec.argv = {GuardBinary(), "mark", "nowhere"};
  spec.env = GuardEnv(ws);
  ProcessResult r = RunProcess(spec);
  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(r.err == "guard: mark: not inside a guard session; nothing marked\n");
  BOOST_TEST(r.out.empty());
  // Even with a GUARD_SESSION that says otherwise: only a tracing guard answers.
  spec.env["GUARD_SESSION"] = "20261201-000000-000abcd";
  r = RunProcess(spec);
  BOOST_TEST(r.exit_code == 1);

  spec.argv = {GuardBinary(), "mark", "--hook", "claude"};
  spec.stdin_data = R"({"hook_event_name":"UserPromptSubmit","prompt":"hello there"})";
  r = RunProcess(spec);
  BOOST_TEST(r.exit_code == 0);
  BOOST_TEST(r.out.empty());
  BOOST_TEST(r.err.empty());
  BOOST_TEST(ws.SessionIds().empty());
}

BOOST_AUTO_TEST_CASE(HookFormLabelsPromptsAndToolCallsFromTheHookInput) {
  Workspace ws;
  const std::string g = Quoted(GuardBinary());
  std::string script =
      "set -e\n"
      "echo '{\"hook_event_name\":\"UserPromptSubmit\",\"prompt\":\"  Fix the\\n failing   test in parser.c please\"}' | " +
      g + " mark --hook claude\n" + "echo x > x\n" +
      "echo '{\"hook_event_name\":\"PostToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{}}' | " + g +
      " mark --hook claude\n" +
      "echo '{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Edit\",\"tool_input\":{}}' | " + g +
      " mark --hook claude\n" + "echo 'not json' | " + g + " mark --hook claude\n";
  GuardResult r = RunGuardBash(ws, script);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  nlohmann::json all = ShowJson(ws, r.new_sessions.at(0));
  std::vector<nlohmann::json> marks;
  for (const auto& e : all)
    if (e["op"] == "mark") marks.push_back(e);
  BOOST_REQUIRE_EQUAL(marks.size(), 3u);
  BOOST_TEST(marks[0]["label"] == "prompt: Fix the failing test in parser.c please");
  BOOST_TEST(marks[0]["step"] == false);
  BOOST_TEST(marks[1]["label"] == "Bash");
  BOOST_TEST(marks[1]["step"] == true);
  BOOST_TEST(marks[2]["label"] == "before Edit");
  BOOST_TEST(marks[2]["step"] == true);
}

// What PreToolUse adds: a process left running in the background (a dev
// server, a watcher) writes between one tool call's PostToolUse step and
// the next call. Undoing to the step before the second call takes back
// that call's change alone; the step after the first would also take the
// background write.
BOOST_AUTO_TEST_CASE(UndoToTheStepBeforeAToolCallKeepsWhatTheBackgroundWroteBeforeIt) {
  Workspace ws;
  ws.Write("server.log", "started\n");
  const std::string g = Quoted(GuardBinary());
  auto hook = [&](const std::string& event, const std::string& tool) {
    return "echo '{\"hook_event_name\":\"" + event + "\",\"tool_name\":\"" + tool + "\"}' | " + g +
           " mark --hook claude\n";
  };
  std::string script = "set -e\n" +
                       std::string("echo '{\"hook_event_name\":\"UserPromptSubmit\",\"prompt\":\"go\"}' | ") + g +
                       " mark --hook claude\n" + hook("PreToolUse", "Bash") + "echo first > first.txt\n" +
                       hook("PostToolUse", "Bash") +
                       // the background process, between the two calls
                       "(echo 'request served' >> server.log) &\nwait\n" + hook("PreToolUse", "Write") +
                       "echo second > second.txt\n" + hook("PostToolUse", "Write");
  GuardResult r = RunGuardBash(ws, script);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  const std::string id = r.new_sessions.at(0);
  std::vector<std::string> order;
  for (const auto& e : ShowJson(ws, id)) {
    if (e["op"] == "mark") order.push_back("@" + std::to_string(e["mark"].get<int>()) + " " + e["label"].get<std::string>());
  }
  std::vector<std::string> expected = {"@1 prompt: go", "@2 before Bash", "@3 Bash", "@4 before Write", "@5 Write"};
  BOOST_REQUIRE_MESSAGE(order == expected, nlohmann::json(order).dump());
  MustRun(ws, {"undo", "--session", id, "--to", "@4", "--yes"});
  BOOST_TEST(!ws.Exists("second.txt"));
  BOOST_TEST(ws.Read("first.txt") == "first\n");
  BOOST_TEST(ws.Read("server.log") == "started\nrequest served\n");
  // The step after the first call is before the background write.
  MustRun(ws, {"undo", "--session", id, "--to", "@3", "--yes"});
  BOOST_TEST(ws.Read("server.log") == "started\n");
  BOOST_TEST(ws.Read("first.txt") == "first\n");
}

BOOST_AUTO_TEST_CASE(ShowHeadsEachGroupOfOperationsWithItsMark) {
  Workspace ws;
  BuildTree(ws.tree());
  std::string id = RunAgent(ws);
  GuardResult r = MustRun(ws, {"show", "--session", id});
  std::vector<std::string> lines;
  for (size_t start = 0; start < r.out.size();) {
    size_t nl = r.out.find('\n', start);
    lines.push_back(r.out.substr(start, nl - start));
    start = nl + 1;
  }
  auto index_of = [&](const std::string& needle) {
    for (size_t i = 0; i < lines.size(); ++i)
      if (lines[i].find(needle) != std::string::npos) return static_cast<long>(i);
    return -1L;
  };
  long m1 = index_of("== mark @1 "), step = index_of("    -- step @2 "), m3 = index_of("== mark @3 ");
  long m5 = index_of("== mark @5 ");
  BOOST_TEST(r.out.find(", 5 mark(s), finished") != std::string::npos, r.out);
  BOOST_REQUIRE(m1 > 0);
  BOOST_TEST(lines[m1].find("prompt: first") != std::string::npos);
  BOOST_TEST(lines[step].find("Bash") != std::string::npos);
  BOOST_TEST(index_of("setup.cfg") < m1);
  BOOST_TEST(m1 < index_of("src/main.c"));
  BOOST_TEST(index_of("src/main.c") < step);
  BOOST_TEST(m3 < index_of("link -> a.txt"));
  BOOST_TEST(m5 < index_of("blob.bin"));
}

BOOST_AUTO_TEST_CASE(UndoTurnsOneThenTwoRestoresTheTreesAtThoseMarks) {
  Workspace ws;
  BuildTree(ws.tree());
  std::vector<TreeSnapshot> expected = ExpectedTrees(ws);
  std::string id = RunAgent(ws);
  CheckTree(ws, expected[4], "after the session");
  MustRun(ws, {"undo", "--session", id, "--turns", "1", "--yes"});
  CheckTree(ws, expected[3], "undo --turns 1");
  // From the session's end again, two turns back.
  MustRun(ws, {"replay", "--session", id, "--yes", "--force"});
  CheckTree(ws, expected[4], "replay");
  MustRun(ws, {"undo", "--session", id, "--turns", "2", "--yes"});
  CheckTree(ws, expected[2], "undo --turns 2");
}

BOOST_AUTO_TEST_CASE(UndoAndReplayToAMarkByNumberOrLabel) {
  Workspace ws;
  BuildTree(ws.tree());
  std::vector<TreeSnapshot> expected = ExpectedTrees(ws);
  std::string id = RunAgent(ws);
  MustRun(ws, {"undo", "--session", id, "--to", "prompt: first", "--yes"});
  CheckTree(ws, expected[1], "undo --to 'prompt: first'");
  MustRun(ws, {"replay", "--session", id, "--to", "@3", "--yes", "--force"});
  CheckTree(ws, expected[2], "replay --to @3");
  MustRun(ws, {"replay", "--session", id, "--to", "prompt: third", "--yes", "--force"});
  CheckTree(ws, expected[3], "replay --to 'prompt: third'");
  MustRun(ws, {"undo", "--session", id, "--yes", "--force"});
  CheckTree(ws, expected[0], "undo");
}

BOOST_AUTO_TEST_CASE(MarksThatNameNothingAreRefusedAndNothingChanges) {
  Workspace ws;
  BuildTree(ws.tree());
  std::string id = RunAgent(ws);
  TreeSnapshot before = SnapshotTree(ws.tree());
  for (std::vector<std::string> args : {std::vector<std::string>{"undo", "--to", "@9"},
                                        {"undo", "--to", "no such label"},
                                        {"undo", "--turns", "4"},
                                        {"replay", "--turns", "1"}}) {
    args.insert(args.end(), {"--session", id, "--yes"});
    GuardResult r = RunGuardCommand(ws, args);
    BOOST_TEST(r.exit_code != 0, args[1] << " " << args[2] << ": " << DescribeResult(r));
  }
  CheckTree(ws, before, "after refused commands");
}

// A tree as BuildTree makes it (the state before the agent), at `name`
// outside the root.
std::string BeforeTree(const Workspace& ws, const std::string& name) {
  std::string dir = ws.outside() + "/" + name;
  MakeDir(dir);
  BuildTree(dir);
  return dir;
}

ProcessResult RunIn(const std::string& cwd, const std::vector<std::string>& argv, const std::string& stdin_data = "") {
  ProcessSpec spec;
  spec.argv = argv;
  spec.cwd = cwd;
  spec.stdin_data = stdin_data;
  return RunProcess(spec);
}

BOOST_AUTO_TEST_CASE(DiffToAMarkShowsWhatTheSessionChangedUpToIt) {
  Workspace ws;
  BuildTree(ws.tree());
  std::string id = RunAgent(ws);
  // @3 is "prompt: second": turn 1 is done, turn 2 not begun.
  for (const std::string& mark : {std::string("@3"), std::string("prompt: second")}) {
    GuardResult r = MustRun(ws, {"diff", "--session", id, "--to", mark, "--color=never"});
    BOOST_TEST(r.out.find("+++ b/setup.cfg") != std::string::npos, r.out);
    BOOST_TEST(r.out.find("+++ b/src/main.c") != std::string::npos, r.out);
    BOOST_TEST(r.out.find("+one") != std::string::npos, r.out);
    // Nothing of turns 2 and 3.
    BOOST_TEST(r.out.find("two") == std::string::npos, r.out);
    BOOST_TEST(r.out.find("kept.txt") == std::string::npos, r.out);
    BOOST_TEST(r.out.find("link") == std::string::npos, r.out);
    BOOST_TEST(r.out.find("blob.bin") == std::string::npos, r.out);
  }
  // The first mark: only what the agent did before its first turn.
  GuardResult first = MustRun(ws, {"diff", "--session", id, "--to", "@1", "--color=never"});
  BOOST_TEST(first.out.find("+++ b/setup.cfg") != std::string::npos, first.out);
  BOOST_TEST(first.out.find("a.txt") == std::string::npos, first.out);
}

BOOST_AUTO_TEST_CASE(ExportToAMarkRebuildsTheTreeAtThatMark) {
  Workspace ws;
  BuildTree(ws.tree());
  std::vector<TreeSnapshot> expected = ExpectedTrees(ws);
  std::string id = RunAgent(ws);

  // The patch, applied to the tree as it was before the session, gives the
  // tree at the mark (@5 "prompt: third": turns 1 and 2 done).
  GuardResult patch = MustRun(ws, {"export", "--session", id, "--to", "prompt: third"});
  std::string copy = BeforeTree(ws, "before");
  ProcessResult apply = RunIn(copy, {"git", "apply", "-"}, patch.out);
  BOOST_REQUIRE_MESSAGE(apply.exit_code == 0, "git apply: " << DescribeResult(apply) << "\n" << patch.out);
  // (A patch cannot hold an empty directory: src, emptied by turn 2, is left out.)
  std::vector<std::string> diffs = DiffSnapshots(expected[3].Without("src"), SnapshotTree(copy).Without("src"));
  BOOST_TEST(diffs.empty(), "patch to @5: " << diffs.size() << " difference(s), first: " << (diffs.empty() ? "" : diffs[0]));

  // The tar: every path touched up to the mark that exists then, as it was.
  GuardResult tar = MustRun(ws, {"export", "--session", id, "--to", "@3", "--format", "tar"});
  std::string out = ws.outside() + "/extracted";
  MakeDir(out);
  ProcessResult x = RunIn(out, {"tar", "--extract", "--file", "-"}, tar.out);
  BOOST_REQUIRE_MESSAGE(x.exit_code == 0, "tar -x: " << DescribeResult(x));
  TreeSnapshot extracted = SnapshotTree(out);
  std::set<std::string> names;
  for (const auto& [path, entry] : extracted.entries) names.insert(path);
  BOOST_TEST((names == std::set<std::string>{"setup.cfg", "a.txt", "src", "src/main.c"}));
  for (const auto& [path, entry] : extracted.entries) {
    const TreeEntry* want = expected[2].Find(path);
    BOOST_REQUIRE_MESSAGE(want != nullptr, path);
    BOOST_TEST((want->content == entry.content), path);
  }
}

BOOST_AUTO_TEST_CASE(DiffAndExportToAMarkTheSessionLacksFailWithExitTwo) {
  Workspace ws;
  BuildTree(ws.tree());
  std::string id = RunAgent(ws);
  for (std::vector<std::string> args : {std::vector<std::string>{"diff", "--to", "@9"},
                                        {"diff", "--to", "no such label"},
                                        {"export", "--to", "@0"},
                                        {"export", "--format", "tar", "--to", "no such label"}}) {
    args.insert(args.end(), {"--session", id});
    GuardResult r = RunGuardCommand(ws, args);
    BOOST_TEST(r.exit_code == 2, args[0] << " " << args[args.size() - 3] << ": " << DescribeResult(r));
    BOOST_TEST(r.out.empty(), args[0] << ": " << r.out.size() << " bytes on stdout");
    BOOST_TEST(r.err.find("--to") != std::string::npos, r.err);
  }
}

BOOST_AUTO_TEST_CASE(MarksOfASessionWhoseGuardWasKilledSurviveRecovery) {
  Workspace ws;
  const std::string g = Quoted(GuardBinary());
  // The command kills its own supervisor (its parent, the tracer): the
  // session is left running, then recovered by the next command.
  GuardRun run;
  run.command = {"bash", "-c", "echo 1 > one; " + g + " mark before the kill; echo 2 > two; kill -9 $PPID; sleep 5"};
  GuardResult r = RunGuard(ws, run);
  BOOST_REQUIRE_EQUAL(r.new_sessions.size(), 1u);
  const std::string id = r.new_sessions[0];
  MustRun(ws, {"recover"});
  nlohmann::json all = ShowJson(ws, id);
  std::vector<std::string> order;
  for (const auto& e : all) {
    std::string what = e["op"] == "mark" ? e["label"].get<std::string>() : e["path"].get<std::string>();
    // Watch mode may see `echo 1 > one` in two looks (made empty, then
    // written): two records of one path in a row (docs/capture.md).
    if (UnderWatch() && !order.empty() && order.back() == what) continue;
    order.push_back(what);
  }
  std::vector<std::string> expected = {"one", "before the kill", "two"};
  BOOST_TEST(order == expected, nlohmann::json(order).dump());
  MustRun(ws, {"undo", "--session", id, "--turns", "1", "--yes"});
  BOOST_TEST(ws.Exists("one"));
  BOOST_TEST(!ws.Exists("two"));
}

}  // namespace
}  // namespace guard::e2e
