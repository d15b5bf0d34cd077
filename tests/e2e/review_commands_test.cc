// The review commands (show, diff, export, status) on real sessions: real
// programs change a real temporary tree under guard, and what the commands
// print is checked against the trees before and after, byte for byte where
// a tree can be rebuilt from it (an exported patch applied to a copy of the
// before-tree, an exported tar extracted).
#define BOOST_TEST_MODULE review_commands
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/session_meta.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

// Files a patch or an archive recreates with the process umask applied: fix
// it so that the trees built by guard's session and by `git apply` agree.
struct FixedUmask {
  FixedUmask() { ::umask(022); }
};
BOOST_TEST_GLOBAL_FIXTURE(FixedUmask);

const std::string kBinaryBefore("\x89PNG\r\n\x1a\n\0\0\0\rIHDR\xff\xfe", 18);

// Builds the tree every test starts from.
void BuildTree(const Workspace& ws) {
  ws.Write("a.txt", "hello\nworld\n");
  ws.Write("old name.txt", "moving along\nunchanged\n");
  ws.Write("gone.txt", "delete me\n");
  ws.Write("tool.sh", "#!/bin/sh\necho tool\n");
  ws.Write("img.bin", kBinaryBefore);
  ws.Mkdir("sub");
  ws.Write("sub/keep.txt", "kept\n");
}

// One session doing one of each kind of change: an in-place edit (sed -i:
// temporary file renamed over), a rename, a deletion, a mode change, a
// symlink, a binary rewrite, a new file in a new directory and an empty
// new directory.
constexpr char kMixedScript[] =
    "set -e\n"
    "sed -i s/world/there/ a.txt\n"
    "mv 'old name.txt' 'new name.txt'\n"
    "rm gone.txt\n"
    "chmod +x tool.sh\n"
    "ln -s a.txt link\n"
    "printf '\\x00\\x01\\x02binary\\xff\\n' > img.bin\n"
    "mkdir -p fresh/dir\n"
    "printf 'fresh\\n' > 'fresh/dir/new file.txt'\n"
    "mkdir empty\n";

std::string MustRunSession(const Workspace& ws, const std::string& script) {
  GuardResult r = RunGuardBash(ws, script);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "guard run: exit " << r.exit_code << "; stderr:\n" << r.err);
  BOOST_REQUIRE_EQUAL(r.new_sessions.size(), 1u);
  return r.new_sessions[0];
}

std::string DescribeResult(const ProcessResult& r) {
  return "exit " + std::to_string(r.exit_code) + (r.timed_out ? ", timed out" : "") + "; stdout:\n" +
         Printable(r.out.substr(0, 4000)) + "\nstderr:\n" + Printable(r.err.substr(0, 4000));
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  for (size_t start = 0; start < text.size();) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

// `guard ARGS...` as a user types it in the root: cwd the tree, the
// workspace's GUARD_HOME, stdout a pipe.
ProcessResult Guard(const Workspace& ws, const std::vector<std::string>& args) {
  ProcessSpec spec;
  spec.argv = {GuardBinary()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.cwd = ws.tree();
  spec.env = GuardEnv(ws);
  return RunProcess(spec);
}

ProcessResult MustGuard(const Workspace& ws, const std::vector<std::string>& args) {
  ProcessResult r = Guard(ws, args);
  std::string cmd;
  for (const std::string& a : args) cmd += " " + a;
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "guard" << cmd << ": " << DescribeResult(r));
  return r;
}

ProcessResult Run(const std::vector<std::string>& argv, const std::string& cwd = "",
                  std::optional<std::string> stdin_data = std::nullopt) {
  ProcessSpec spec;
  spec.argv = argv;
  spec.cwd = cwd;
  spec.stdin_data = std::move(stdin_data);
  return RunProcess(spec);
}

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

bool HasEscapeCodes(const std::string& text) { return Has(text, "\x1b["); }

std::string SnapshotDiffs(const TreeSnapshot& expected, const TreeSnapshot& actual) {
  std::string out;
  for (const std::string& d : DiffSnapshots(expected, actual)) out += d + "\n";
  return out;
}

// A copy of the tree as it is now, beside it in the workspace.
std::string CopyTree(const Workspace& ws, const std::string& name) {
  std::string copy = ws.dir() + "/" + name;
  ProcessResult r = Run({"cp", "-a", ws.tree(), copy});
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "cp -a: " << r.err);
  return copy;
}

nlohmann::json ParseJson(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  BOOST_REQUIRE_MESSAGE(!j.is_discarded(), "not JSON:\n" << text);
  return j;
}

BOOST_AUTO_TEST_CASE(DiffOfARealSessionShowsEachKindOfChange) {
  Workspace ws;
  BuildTree(ws);
  MustRunSession(ws, kMixedScript);
  ProcessResult r = MustGuard(ws, {"diff"});
  const std::string& d = r.out;
  BOOST_TEST(Has(d, "diff --git a/a.txt b/a.txt\n"), d);
  BOOST_TEST(Has(d, "-world\n+there\n"), d);
  BOOST_TEST(Has(d, "diff --git a/old name.txt b/new name.txt\nsimilarity index 100%\n"
                    "rename from old name.txt\nrename to new name.txt\n"), d);
  BOOST_TEST(Has(d, "diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n"), d);
  BOOST_TEST(Has(d, "-delete me\n"), d);
  BOOST_TEST(Has(d, "diff --git a/tool.sh b/tool.sh\nold mode 100644\nnew mode 100755\n"), d);
  BOOST_TEST(Has(d, "diff --git a/link b/link\nnew file mode 120000\n"), d);
  BOOST_TEST(Has(d, "+a.txt\n\\ No newline at end of file\n"), d);
  BOOST_TEST(Has(d, "Binary files a/img.bin and b/img.bin differ\n"), d);
  BOOST_TEST(!Has(d, "IHDR"), d);  // binary content is never dumped
  BOOST_TEST(Has(d, "diff --git a/fresh/dir/new file.txt b/fresh/dir/new file.txt\nnew file mode 100644\n"), d);
  // What git cannot show is said in comment lines before the diff.
  BOOST_TEST(Has(d, "# new directory: empty (mode 0755)\n"), d);
  BOOST_TEST(Has(d, "# new directory: fresh/dir (mode 0755)\n"), d);
  BOOST_TEST(d.rfind("# ", 0) == 0u, d);
  // Untouched files never appear.
  BOOST_TEST(!Has(d, "keep.txt"), d);
  BOOST_TEST(r.err.empty(), r.err);
}

BOOST_AUTO_TEST_CASE(DiffIsColouredOnlyWhenAskedOrOnATerminalWithoutNoColor) {
  Workspace ws;
  BuildTree(ws);
  MustRunSession(ws, kMixedScript);

  ProcessResult piped = MustGuard(ws, {"diff"});
  BOOST_TEST(!HasEscapeCodes(piped.out));
  ProcessResult always = MustGuard(ws, {"diff", "--color=always"});
  BOOST_TEST(HasEscapeCodes(always.out));
  ProcessResult never = MustGuard(ws, {"diff", "--color=never"});
  BOOST_TEST(never.out == piped.out);

  // On a terminal (script(1) gives the command a pty): colour unless NO_COLOR.
  auto on_terminal = [&](bool no_color) {
    ProcessSpec spec;
    std::string cmd = "'" + GuardBinary() + "' diff --no-pager";  // colour, not the pager (cli_output_test)
    spec.argv = {"script", "--quiet", "--return", "--command", cmd, "/dev/null"};
    spec.cwd = ws.tree();
    spec.env = GuardEnv(ws);
    spec.env["NO_COLOR"] = no_color ? std::optional<std::string>("1") : std::nullopt;
    spec.env["TERM"] = "xterm";
    ProcessResult r = RunProcess(spec);
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
    BOOST_REQUIRE(Has(r.out, "diff --git"));
    return r.out;
  };
  BOOST_TEST(HasEscapeCodes(on_terminal(/*no_color=*/false)));
  BOOST_TEST(!HasEscapeCodes(on_terminal(/*no_color=*/true)));

  ProcessSpec spec;
  spec.argv = {GuardBinary(), "diff"};
  spec.cwd = ws.tree();
  spec.env = GuardEnv(ws);
  spec.env["NO_COLOR"] = "1";
  ProcessResult no_color = RunProcess(spec);
  BOOST_TEST(no_color.exit_code == 0);
  BOOST_TEST(!HasEscapeCodes(no_color.out));
}

BOOST_AUTO_TEST_CASE(DiffKeepsToThePathsGivenAndRefusesOnesOutsideTheRoot) {
  Workspace ws;
  BuildTree(ws);
  MustRunSession(ws, kMixedScript);
  ProcessResult only = MustGuard(ws, {"diff", "fresh", "a.txt"});
  BOOST_TEST(Has(only.out, "b/fresh/dir/new file.txt"), only.out);
  BOOST_TEST(Has(only.out, "b/a.txt"), only.out);
  BOOST_TEST(!Has(only.out, "gone.txt"), only.out);
  BOOST_TEST(!Has(only.out, "tool.sh"), only.out);

  ProcessResult outside = Guard(ws, {"diff", ws.outside()});
  BOOST_TEST(outside.exit_code == 2);
  BOOST_TEST(Lines(outside.err).size() == 1u, outside.err);
  BOOST_TEST(Has(outside.err, "outside the root"), outside.err);
}

BOOST_AUTO_TEST_CASE(DiffToASequenceNumberStopsJustAfterThatOperation) {
  Workspace ws;
  BuildTree(ws);
  MustRunSession(ws, kMixedScript);
  nlohmann::json ops = ParseJson(MustGuard(ws, {"show", "--json"}).out);
  uint64_t mv_seq = 0;
  for (const nlohmann::json& op : ops) {
    if (op["op"] == "rename" && op["path"] == "old name.txt") mv_seq = op["seq"].get<uint64_t>();
  }
  BOOST_REQUIRE(mv_seq != 0);
  ProcessResult r = MustGuard(ws, {"diff", "--to", std::to_string(mv_seq)});
  BOOST_TEST(Has(r.out, "rename to new name.txt"), r.out);
  BOOST_TEST(Has(r.out, "+there"), r.out);
  BOOST_TEST(!Has(r.out, "gone.txt"), r.out);
  BOOST_TEST(!Has(r.out, "tool.sh"), r.out);
}

BOOST_AUTO_TEST_CASE(ExportedPatchAppliedToTheBeforeTreeGivesTheAfterTree) {
  Workspace ws;
  BuildTree(ws);
  std::string copy = CopyTree(ws, "before-copy");
  MustRunSession(ws, kMixedScript);
  ProcessResult patch = MustGuard(ws, {"export", "--format", "patch"});
  BOOST_TEST(Has(patch.out, "GIT binary patch"), patch.out);
  BOOST_TEST(!HasEscapeCodes(patch.out));
  WriteFile(ws.dir() + "/session.patch", patch.out);

  ProcessResult check = Run({"git", "apply", "--check", ws.dir() + "/session.patch"}, copy);
  BOOST_REQUIRE_MESSAGE(check.exit_code == 0, "git apply --check: " << DescribeResult(check));
  ProcessResult apply = Run({"git", "apply", ws.dir() + "/session.patch"}, copy);
  BOOST_REQUIRE_MESSAGE(apply.exit_code == 0, "git apply: " << DescribeResult(apply));

  // A patch cannot hold an empty directory: that one is the only difference.
  TreeSnapshot after = SnapshotTree(ws.tree()).Without("empty");
  TreeSnapshot rebuilt = SnapshotTree(copy);
  BOOST_TEST(SnapshotDiffs(after, rebuilt).empty(), SnapshotDiffs(after, rebuilt));
}

BOOST_AUTO_TEST_CASE(ExportedTarHoldsTheTouchedPathsAsTheSessionLeftThem) {
  Workspace ws;
  BuildTree(ws);
  MustRunSession(ws, kMixedScript);
  ProcessResult tar = MustGuard(ws, {"export", "--format", "tar"});
  WriteFile(ws.dir() + "/session.tar", tar.out);
  std::string out = ws.dir() + "/extracted";
  MakeDir(out);
  ProcessResult x = Run({"tar", "--extract", "--file", ws.dir() + "/session.tar", "--directory", out});
  BOOST_REQUIRE_MESSAGE(x.exit_code == 0, "tar -x: " << DescribeResult(x));

  TreeSnapshot after = SnapshotTree(ws.tree());
  TreeSnapshot extracted = SnapshotTree(out);
  // Exactly the touched paths that exist at the end, and their parents.
  std::set<std::string> names;
  for (const auto& [path, entry] : extracted.entries) names.insert(path);
  std::set<std::string> expected = {"a.txt", "new name.txt", "tool.sh", "link", "img.bin", "fresh",
                                    "fresh/dir", "fresh/dir/new file.txt", "empty"};
  BOOST_TEST((names == expected));
  for (const auto& [path, entry] : extracted.entries) {
    const TreeEntry* want = after.Find(path);
    BOOST_REQUIRE_MESSAGE(want != nullptr, Printable(path));
    BOOST_TEST((*want == entry), Printable(path) << ": " << Describe(entry) << " vs " << Describe(*want));
  }
}

BOOST_AUTO_TEST_CASE(ShowListsEachOperationAndItsJsonParses) {
  Workspace ws;
  BuildTree(ws);
  std::string id = MustRunSession(ws, kMixedScript);
  ProcessResult json = MustGuard(ws, {"show", "--json"});
  ProcessResult py = Run({"python3", "-c", "import json,sys; json.load(sys.stdin)"}, "", json.out);
  BOOST_TEST(py.exit_code == 0, py.err);

  nlohmann::json ops = ParseJson(json.out);
  BOOST_REQUIRE(ops.is_array());
  std::set<std::pair<std::string, std::string>> seen;  // (op, path)
  for (const nlohmann::json& op : ops) {
    BOOST_TEST(op.contains("seq"));
    BOOST_TEST(op["time"].get<std::string>().size() >= 20u);
    BOOST_TEST(op["result"].is_string());
    BOOST_TEST(op["before"].contains("type"));
    seen.insert({op["op"].get<std::string>(), op["path"].get<std::string>()});
    if (op["op"] == "rename" && op["path"] == "old name.txt") BOOST_TEST(op["path2"] == "new name.txt");
    // (sed -i sets the mode of its temporary file through an ACL write: a chmod too.)
    if (op["op"] == "chmod" && op["path"] == "tool.sh") BOOST_TEST(op["new_mode"] == "0755");
  }
  for (const auto& want : std::vector<std::pair<std::string, std::string>>{
           {"rename", "old name.txt"}, {"delete", "gone.txt"}, {"chmod", "tool.sh"}, {"symlink", "link"},
           {"modify", "img.bin"}, {"mkdir", "fresh"}, {"mkdir", "fresh/dir"},
           {"create", "fresh/dir/new file.txt"}, {"mkdir", "empty"}}) {
    BOOST_TEST(seen.count(want) == 1u, want.first << " " << want.second);
  }

  ProcessResult text = MustGuard(ws, {"show"});
  std::vector<std::string> lines = Lines(text.out);
  BOOST_REQUIRE_GE(lines.size(), 2u);
  BOOST_TEST(Has(lines[0], id), lines[0]);
  BOOST_TEST(lines.size() == ops.size() + 2, text.out);  // title, column heads, one line per op
  BOOST_TEST(Has(text.out, " deleted "), text.out);
  BOOST_TEST(Has(text.out, "gone.txt"), text.out);
  BOOST_TEST(Has(text.out, "old name.txt -> new name.txt"), text.out);
  BOOST_TEST(Has(text.out, "tool.sh 0644 -> 0755"), text.out);
  BOOST_TEST(Has(text.out, "link -> a.txt"), text.out);
}

BOOST_AUTO_TEST_CASE(ShowMarksFailedCallsWithTheirErrno) {
  Workspace ws;
  ws.Mkdir("full");
  ws.Write("full/x", "x");
  MustRunSession(ws, "rmdir full 2>/dev/null || true; echo done > ok.txt");
  ProcessResult text = MustGuard(ws, {"show"});
  BOOST_TEST(Has(text.out, "[failed: ENOTEMPTY]"), text.out);
  nlohmann::json ops = ParseJson(MustGuard(ws, {"show", "--json"}).out);
  bool found = false;
  for (const nlohmann::json& op : ops) found = found || op["result"] == "ENOTEMPTY";
  BOOST_TEST(found, ops.dump());
  // A failed call changes nothing: the diff does not mention it.
  BOOST_TEST(!Has(MustGuard(ws, {"diff"}).out, "full"));
}

BOOST_AUTO_TEST_CASE(UnusualPathNamesSurviveShowDiffAndExport) {
  Workspace ws;
  ws.Write("plain.txt", "plain\n");
  std::string copy = CopyTree(ws, "before-copy");
  MustRunSession(ws, "printf 'one\\n' > \"$(printf 'new\\nline')\"; printf 'two\\n' > \"$(printf 'bad\\xffname')\";"
                     " printf 'three\\n' > 'tab\there'; echo changed > plain.txt");

  ProcessResult json = MustGuard(ws, {"show", "--json"});
  nlohmann::json ops = ParseJson(json.out);
  bool hex_seen = false;
  for (const nlohmann::json& op : ops) {
    if (op.contains("path_bytes_hex")) {
      hex_seen = true;
      BOOST_TEST(op["path_bytes_hex"] == "626164ff6e616d65");  // "bad\xffname"
      BOOST_TEST(op["path"] == "bad\\xffname");
    }
  }
  BOOST_TEST(hex_seen, json.out);

  ProcessResult text = MustGuard(ws, {"show"});
  BOOST_TEST(Has(text.out, "new\\x0aline"), text.out);
  BOOST_TEST(Has(text.out, "bad\\xffname"), text.out);
  BOOST_TEST(Lines(text.out).size() == ops.size() + 2, text.out);

  ProcessResult diff = MustGuard(ws, {"diff"});
  BOOST_TEST(Has(diff.out, "diff --git \"a/new\\nline\" \"b/new\\nline\""), diff.out);
  BOOST_TEST(Has(diff.out, "diff --git \"a/bad\\377name\" \"b/bad\\377name\""), diff.out);

  ProcessResult patch = MustGuard(ws, {"export"});
  WriteFile(ws.dir() + "/p.patch", patch.out);
  ProcessResult apply = Run({"git", "apply", ws.dir() + "/p.patch"}, copy);
  BOOST_REQUIRE_MESSAGE(apply.exit_code == 0, DescribeResult(apply));
  BOOST_TEST(SnapshotDiffs(SnapshotTree(ws.tree()), SnapshotTree(copy)).empty(),
             SnapshotDiffs(SnapshotTree(ws.tree()), SnapshotTree(copy)));
}

BOOST_AUTO_TEST_CASE(DirectoryRenameShowsItsContentMovingAndThePatchRebuildsIt) {
  Workspace ws;
  ws.Mkdir("dir");
  ws.Mkdir("dir/inner");
  ws.Write("dir/inner/a", "inner file\n");
  ws.Write("dir/b", "b\nline 2\nline 3\nline 4\n");
  std::string copy = CopyTree(ws, "before-copy");
  MustRunSession(ws, "mv dir moved; echo more >> moved/b");
  ProcessResult d = MustGuard(ws, {"diff"});
  BOOST_TEST(Has(d.out, "rename from dir/inner/a\nrename to moved/inner/a\n"), d.out);
  BOOST_TEST(Has(d.out, "rename from dir/b\nrename to moved/b\n"), d.out);
  BOOST_TEST(Has(d.out, "+more\n"), d.out);
  BOOST_TEST(Has(d.out, "# removed directory: dir\n"), d.out);

  WriteFile(ws.dir() + "/p.patch", MustGuard(ws, {"export"}).out);
  ProcessResult apply = Run({"git", "apply", ws.dir() + "/p.patch"}, copy);
  BOOST_REQUIRE_MESSAGE(apply.exit_code == 0, DescribeResult(apply));
  BOOST_TEST(SnapshotDiffs(SnapshotTree(ws.tree()), SnapshotTree(copy)).empty(),
             SnapshotDiffs(SnapshotTree(ws.tree()), SnapshotTree(copy)));
}

BOOST_AUTO_TEST_CASE(ShowMarksPathsOutsideTheRoot) {
  Workspace ws;
  MustRunSession(ws, "echo out > '" + ws.outside() + "/written'; echo in > inside");
  ProcessResult text = MustGuard(ws, {"show"});
  BOOST_TEST(Has(text.out, ws.outside() + "/written (outside root)"), text.out);
  nlohmann::json ops = ParseJson(MustGuard(ws, {"show", "--json"}).out);
  int outside = 0;
  for (const nlohmann::json& op : ops) {
    if (op["outside_root"] == true) {
      ++outside;
      BOOST_TEST(op["path"] == ws.outside() + "/written");
    }
  }
  BOOST_TEST(outside == 1);
  // Only paths under the root are compared.
  ProcessResult d = MustGuard(ws, {"diff"});
  BOOST_TEST(Has(d.out, "b/inside"), d.out);
  BOOST_TEST(!Has(d.out, "written"), d.out);
}

BOOST_AUTO_TEST_CASE(MissingSavedCopiesAreReportedAndTheRestIsStillShown) {
  Workspace ws;
  ws.Write("lost.txt", "its saved copy will be deleted\n");
  ws.Write("fine.txt", "one\n");
  MustRunSession(ws, "rm lost.txt; echo two > fine.txt");
  // Remove every stored object: the pre-images and the final states.
  std::filesystem::remove_all(ws.home() + "/store/objects");
  std::filesystem::remove_all(ws.home() + "/store/pending");
  ProcessResult d = Guard(ws, {"diff"});
  BOOST_TEST(d.exit_code == 1, DescribeResult(d));
  BOOST_TEST(Has(d.err, "lost.txt"), d.err);
  BOOST_TEST(Has(d.err, "fine.txt"), d.err);
  for (const std::string& line : Lines(d.err)) BOOST_TEST(line.rfind("guard: ", 0) == 0u, line);
  BOOST_TEST(!Has(d.out, "deleted file mode"), d.out);  // no false deletion

  ProcessResult tar = Guard(ws, {"export", "--format", "tar"});
  BOOST_TEST(tar.exit_code == 1, DescribeResult(tar));
}

BOOST_AUTO_TEST_CASE(JournalDamageIsWarnedAboutAndTheRestIsStillShown) {
  Workspace ws;
  // Enough records to fill more than one 32 KiB journal block.
  std::string id = MustRunSession(ws, "for i in $(seq 500); do echo $i > f$i; done; echo last > the-last-file");
  std::string journal = ws.home() + "/sessions/" + id + "/journal";
  std::string bytes = ReadFile(journal);
  BOOST_REQUIRE_GT(bytes.size(), 40000u);
  bytes[1000] = static_cast<char>(bytes[1000] ^ 0xff);  // inside the first block
  WriteFile(journal, bytes, 0600);

  ProcessResult show = Guard(ws, {"show"});
  BOOST_TEST(show.exit_code == 0, DescribeResult(show));
  BOOST_TEST(Has(show.err, "guard: warning: session " + id), show.err);
  BOOST_TEST(Has(show.out, "the-last-file"), show.out);  // records after the damage are read
  ProcessResult diff = Guard(ws, {"diff"});
  BOOST_TEST(Has(diff.err, "guard: warning: "), diff.err);
  BOOST_TEST(Has(diff.out, "b/the-last-file"), diff.out);
}

BOOST_AUTO_TEST_CASE(StatusShowsTheLastSessionAndHowItEnded) {
  Workspace ws;
  BuildTree(ws);
  MustRunSession(ws, "echo one > one.txt");
  GuardResult second = RunGuardBash(ws, "echo two > two.txt; rm gone.txt; exit 3");
  BOOST_REQUIRE_EQUAL(second.exit_code, 3);
  BOOST_REQUIRE_EQUAL(second.new_sessions.size(), 1u);
  const std::string& id = second.new_sessions[0];

  ProcessResult text = MustGuard(ws, {"status"});
  BOOST_TEST(Has(text.out, "last session: " + id + " finished, exit 3, "), text.out);
  BOOST_TEST(Has(text.out, "running: none"), text.out);
  BOOST_TEST(!Has(text.out, "needs recovery"), text.out);

  nlohmann::json j = ParseJson(MustGuard(ws, {"status", "--json"}).out);
  BOOST_TEST(j["last"]["id"] == id);
  BOOST_TEST(j["last"]["exit_code"] == 3);
  BOOST_TEST(j["last"]["ops"].get<uint64_t>() >= 2u);
  BOOST_TEST(j["last"]["files"] == 2);
  BOOST_TEST(j["running"].empty());
  BOOST_TEST(j["needs_recovery"].empty());
}

BOOST_AUTO_TEST_CASE(StatusNamesASessionWhoseSupervisorDied) {
  Workspace ws;
  MustRunSession(ws, "echo x > x");
  // A session left "running" by a supervisor that is gone: a pid reaped here.
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  BOOST_REQUIRE(dead > 0);
  ::waitpid(dead, nullptr, 0);
  SessionMeta m;
  m.id = NewSessionId();
  m.root = ws.tree();
  m.argv = {"agent"};
  m.started_ns = 1;
  m.state = SessionState::kRunning;
  m.supervisor_pid = dead;
  m.supervisor_start_ticks = 12345;
  MakeDir(ws.home() + "/sessions/" + m.id, 0700);
  BOOST_REQUIRE(SaveSessionMeta(ws.home() + "/sessions/" + m.id + "/meta.json", m).ok());

  ProcessResult text = MustGuard(ws, {"status"});
  BOOST_TEST(Has(text.out, "needs recovery: " + m.id + " (run `guard recover`)"), text.out);
  nlohmann::json j = ParseJson(MustGuard(ws, {"status", "--json"}).out);
  BOOST_REQUIRE_EQUAL(j["needs_recovery"].size(), 1u);
  BOOST_TEST(j["needs_recovery"][0]["id"] == m.id);
}

BOOST_AUTO_TEST_CASE(UnknownSessionIsExitTwoWithOneLine) {
  Workspace ws;
  MustRunSession(ws, "echo x > x");
  for (const char* cmd : {"show", "diff", "export"}) {
    ProcessResult r = Guard(ws, {cmd, "--session", "no-such-session"});
    BOOST_TEST(r.exit_code == 2, cmd);
    BOOST_TEST(Lines(r.err).size() == 1u, cmd << ": " << r.err);
    BOOST_TEST(Has(r.err, "no-such-session"), r.err);
    BOOST_TEST(r.out.empty(), r.out);
  }
}

BOOST_AUTO_TEST_CASE(AmbiguousPrefixIsExitTwoNamingTheCandidates) {
  Workspace ws;
  std::string a = MustRunSession(ws, "echo 1 > one");
  std::string b = MustRunSession(ws, "echo 2 > two");
  size_t common = 0;
  while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
  BOOST_REQUIRE(common > 0);
  ProcessResult r = Guard(ws, {"diff", "--session", a.substr(0, common)});
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(Lines(r.err).size() == 1u, r.err);
  BOOST_TEST(Has(r.err, a), r.err);
  BOOST_TEST(Has(r.err, b), r.err);

  // last~1 and a unique prefix select the first session.
  BOOST_TEST(Has(MustGuard(ws, {"diff", "--session", "last~1"}).out, "b/one"));
  BOOST_TEST(Has(MustGuard(ws, {"show", "--session", a}).out, a));
}

}  // namespace
}  // namespace guard::e2e
