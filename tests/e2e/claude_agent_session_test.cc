// A session of the real Claude Code editing a project through its own tools
// (Write, Read, Edit, Bash), under guard with its hooks installed: the
// model is a stand-in for the Messages API (support/claude_standin.h) that
// calls the tools of a script and copies the tree before it answers each
// request, so the test knows the tree after every tool call. Every mark of
// the session (the prompt's turn, `before TOOL` and `TOOL` around each
// call) is then an exact state: `guard undo --to @N` gives the tree as it
// was at that mark byte for byte (modes and symlinks included), and
// `guard redo` the session's end again; the whole turn undone and the
// session replayed give its start and its end. In watch mode this is the
// promise of docs/capture.md, "Watch mode" ("A mark is exact"): a mark
// returns when every change made before it is saved. Skipped, with a warning, without claude
// (the one on the PATH or the one tools/setup.sh installs beside guard) or
// python3.
#define BOOST_TEST_MODULE claude_agent_session
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/e2e/support/claude_standin.h"
#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

nlohmann::json Call(const std::string& name, nlohmann::json input) {
  return {{"name", name}, {"input", std::move(input)}};
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += "  " + l + "\n";
  return out;
}

struct Mark {
  int number;
  std::string label;
  std::string snapshot;  // the stand-in's copy of the tree this mark must give back
  size_t calls_done;
};

BOOST_AUTO_TEST_CASE(EveryMarkOfAClaudeCodeSessionIsAnExactStateOfTheTree) {
  if (FindClaude().empty() || FindOnPath("python3").empty()) {
    BOOST_WARN_MESSAGE(false, "skipped: needs claude (Claude Code) and python3");
    return;
  }
  Workspace ws;
  ws.Write("README", "a project\n");
  ws.Write("data.txt", "1\n2\n3\n");
  ws.Write("old.txt", "old\n");
  ws.Mkdir("lib");
  ws.Write("lib/util.py", "def util():\n    return 1\n");
  const std::string home = ws.outside() + "/home";
  MakeDir(home);
  const std::string t = ws.tree();
  const std::string go = ws.outside() + "/go";
  nlohmann::json calls = nlohmann::json::array({
      Call("Write", {{"file_path", t + "/src/app.py"}, {"content", "print('v1')\n"}}),
      Call("Read", {{"file_path", t + "/README"}}),
      Call("Edit", {{"file_path", t + "/README"}, {"old_string", "a project"}, {"new_string", "a guarded project"}}),
      Call("Bash", {{"command", "sed -i 's/2/two/' data.txt && rm old.txt && mkdir -p gen && "
                                "printf 'x\\000y' > gen/out.bin && chmod 600 data.txt"},
                    {"description", "edit, remove, make"}}),
      Call("Edit", {{"file_path", t + "/src/app.py"}, {"old_string", "v1"}, {"new_string", "v2"}}),
      Call("Bash", {{"command", "mv gen generated && ln -s generated/out.bin link && rm -r lib; "
                                "(while [ ! -e '" + go + "' ]; do sleep 0.05; done; echo late > bg.txt) "
                                ">/dev/null 2>&1 &"},
                    {"description", "move, link, remove a directory, start a background job"}}),
      Call("Write", {{"file_path", t + "/README"}, {"content", "rewritten\n"}}),
  });
  // The background job writes bg.txt once the stand-in, asked for the 7th
  // call, makes `go`: after the 6th call's mark, before the 7th's.
  calls[6]["wake"] = {{"touch", go}, {"wait_for", t + "/bg.txt"}};
  MessagesApiStandIn api(ws.outside(), calls, t);

  InstallClaudeHooks(ws);
  GuardRun run = ClaudeRun(api, home, "tidy the project", "Bash,Write,Edit,Read");
  GuardResult g = RunGuard(ws, run);
  BOOST_REQUIRE_EQUAL(g.new_sessions.size(), 1u);
  const std::string session = g.new_sessions[0];
  const std::string context = DescribeResult(g) + "\nthe stand-in's log:\n" + api.Log();
  // Claude Code did what the script asked (each tool's effect is in the tree).
  BOOST_REQUIRE_MESSAGE(ws.Read("README") == "rewritten\n", context);
  BOOST_TEST(ws.Read("src/app.py") == "print('v2')\n");
  BOOST_TEST(ws.Read("data.txt") == "1\ntwo\n3\n");
  BOOST_TEST(ws.Read("link") == std::string("x\0y", 3));
  BOOST_TEST(!ws.Exists("old.txt"));
  BOOST_TEST(!ws.Exists("lib"));
  BOOST_TEST(ws.Read("bg.txt") == "late\n");
  BOOST_REQUIRE_MESSAGE(PathExists(api.Snapshot(calls.size())), context);
  const TreeSnapshot end = SnapshotTree(t);
  BOOST_TEST(DiffSnapshots(SnapshotTree(api.Snapshot(calls.size())), end).empty(),
             "the tree changed after the last tool call");

  // The marks, in order: the prompt's turn, then `before TOOL` and `TOOL`
  // around each call. After the Nth call the tree is the stand-in's copy N
  // (taken when Claude Code asked for the next step, after the hook ran);
  // before the N+1th, the same, or, where the background job wrote between
  // the two, the copy made after it had.
  GuardResult show = RunGuardCommand(ws, {"show", "--session", session, "--json"});
  BOOST_REQUIRE_MESSAGE(show.exit_code == 0, DescribeResult(show));
  std::vector<Mark> marks;
  std::vector<std::string> labels, expected_labels = {"prompt: tidy the project"};
  size_t done = 0;
  for (const auto& e : nlohmann::json::parse(show.out)) {
    if (e["op"] != "mark") continue;
    const std::string label = e["label"].get<std::string>();
    labels.push_back(label);
    const bool before = label.rfind("before ", 0) == 0;
    if (e["step"] == true && !before) ++done;
    marks.push_back({e["mark"].get<int>(), label, before && PathExists(api.WokenSnapshot(done)) ? api.WokenSnapshot(done) : api.Snapshot(done), done});
  }
  for (const auto& c : calls) {
    expected_labels.push_back("before " + c["name"].get<std::string>());
    expected_labels.push_back(c["name"].get<std::string>());
  }
  BOOST_REQUIRE_MESSAGE(labels == expected_labels, nlohmann::json(labels).dump() << "\n" << context);

  for (const Mark& m : marks) {
    const std::string at = "@" + std::to_string(m.number);
    GuardResult undo = RunGuardCommand(ws, {"undo", "--session", session, "--to", at, "--yes"});
    BOOST_REQUIRE_MESSAGE(undo.exit_code == 0, at << " (" << m.label << "): " << DescribeResult(undo));
    std::vector<std::string> diff = DiffSnapshots(SnapshotTree(m.snapshot), SnapshotTree(t));
    BOOST_TEST(diff.empty(), "undo --to " << at << " (" << m.label << ") is not the tree after call "
                                          << m.calls_done << " (" << m.snapshot << "):\n" << Joined(diff));
    if (m.calls_done == calls.size()) continue;  // nothing came after this mark: nothing was undone
    GuardResult redo = RunGuardCommand(ws, {"redo", "--yes"});
    BOOST_REQUIRE_MESSAGE(redo.exit_code == 0, "redo after " << at << ": " << DescribeResult(redo));
    diff = DiffSnapshots(end, SnapshotTree(t));
    BOOST_TEST(diff.empty(), "redo after undo --to " << at << " is not the session's end:\n" << Joined(diff));
  }

  // The whole turn: the project as it was before the prompt.
  GuardResult undo = RunGuardCommand(ws, {"undo", "--session", session, "--turns", "1", "--yes"});
  BOOST_REQUIRE_MESSAGE(undo.exit_code == 0, DescribeResult(undo));
  BOOST_TEST(DiffSnapshots(SnapshotTree(api.Snapshot(0)), SnapshotTree(t)).empty());
  BOOST_TEST(ws.Read("README") == "a project\n");
  BOOST_TEST(ws.Read("lib/util.py") == "def util():\n    return 1\n");

  // And the whole session replayed over it: the end again.
  GuardResult replay = RunGuardCommand(ws, {"replay", "--session", session, "--yes"});
  BOOST_REQUIRE_MESSAGE(replay.exit_code == 0, DescribeResult(replay));
  std::vector<std::string> diff = DiffSnapshots(end, SnapshotTree(t));
  BOOST_TEST(diff.empty(), "replay is not the session's end:\n" << Joined(diff));
}

}  // namespace
}  // namespace guard::e2e
