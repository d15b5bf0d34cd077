// guard --mode preload: the shim alone, for machines where ptrace is
// refused. Nothing is traced (no stop, no tracer of the command), yet what
// dynamically linked programs change through libc is captured and undone
// byte for byte; what the shim cannot capture is refused under "block" and
// let through under "allow", each with one line, never silently; guard's
// state directory is refused to libc callers; a static program gets a
// warning; without the shim guard refuses to start (docs/capture.md, "What
// --mode preload misses").
#define BOOST_TEST_MODULE preload_mode
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <string>

#include "tests/e2e/support/durability_checks.h"
#include "tests/e2e/support/guard_stats.h"
#include "tests/e2e/support/expect_capture.h"
#include "tests/e2e/support/guard_command.h"

namespace guard::e2e {
namespace {

constexpr int kTimeoutSeconds = 120;

GuardRun Preload(const std::vector<std::string>& command, const std::vector<std::string>& options = {}) {
  GuardRun run;
  run.command = command;
  run.guard_options = {"--mode", "preload"};
  run.guard_options.insert(run.guard_options.end(), options.begin(), options.end());
  run.timeout_seconds = kTimeoutSeconds;
  return run;
}

size_t CountLines(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

BOOST_AUTO_TEST_CASE(NothingIsTracedAndUndoGivesBackTheTreeTheToolsChanged) {
  Workspace ws;
  ws.Write("gone.txt", "deleted by rm\n", 0640);
  ws.Write("over.txt", "truncated by the shell\n");
  ws.Write("sed.txt", "alpha beta\n");
  ws.Write("py.txt", "python's\n");
  ws.Write("target.txt", "reached through a symlink\n");
  ws.Write("from.txt", "moved\n");
  ws.Write("victim.txt", "renamed over\n");
  ws.Mkdir("tree");
  for (int i = 0; i < 10; ++i) ws.Write("tree/f" + std::to_string(i), "file " + std::to_string(i) + "\n");
  BOOST_REQUIRE_EQUAL(symlink("target.txt", ws.Path("link").c_str()), 0);
  TreeSnapshot before = SnapshotTree(ws.tree());
  GuardRun run = Preload({"bash", "-c",
                          "grep -q '^TracerPid:[[:space:]]*0$' /proc/self/status && echo untraced > ../traced; "
                          "rm gone.txt && echo new > over.txt && sed -i s/alpha/ALPHA/ sed.txt && "
                          "python3 -c 'open(\"py.txt\", \"w\").write(\"new\")' && echo via > link && "
                          "python3 -c 'import os; os.chmod(\"py.txt\", 0o600, follow_symlinks=False)' && "
                          "mv -f from.txt victim.txt && mkdir made/ && echo fresh > made/new.txt && rm -r tree && "
                          "echo x > /dev/stdout"});
  const std::string stats = ws.outside() + "/stats";
  run.env["GUARD_STATS_FILE"] = stats;
  GuardResult r = RunGuard(ws, run);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(r.err.find("--mode preload cannot") == std::string::npos, r.err);
  std::ifstream traced(ws.Path("../traced"));
  std::string word;
  traced >> word;
  BOOST_TEST(word == "untraced", "the command had a tracer");
  std::map<std::string, long long> s = ReadGuardStats(stats);
  BOOST_TEST(s["seccomp_stops"] == 0);
  BOOST_TEST(s["shim_calls"] > 10);
  BOOST_TEST(ws.Read("target.txt") == "via\n");
  UndoGivesBack(ws, r, before, kTimeoutSeconds);
}

// A file with a second name outside the root is copied, not linked, before
// its delete: the other name's later changes must not reach the pre-image.
BOOST_AUTO_TEST_CASE(ADeletedFileWithAnotherNameKeepsItsContentWhenThatNameChanges) {
  Workspace ws;
  ws.Write("shared.txt", "the content before\n");
  const std::string other = ws.outside() + "/other-name";
  BOOST_REQUIRE_EQUAL(link(ws.Path("shared.txt").c_str(), other.c_str()), 0);
  TreeSnapshot before = SnapshotTree(ws.tree());
  GuardResult r = RunGuard(ws, Preload({"bash", "-c", "rm shared.txt && echo changed > " + other}));
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  UndoGivesBack(ws, r, before, kTimeoutSeconds);
  BOOST_TEST(ws.Read("shared.txt") == "the content before\n");
}

// A directory renamed out of the root is left to the tracer under auto (it
// walks the tree to keep what leaves): alone, it is a miss.
BOOST_AUTO_TEST_CASE(AMissIsRefusedUnderBlockAndRunsUnderAllowEachWithOneLine) {
  Workspace ws;
  ws.Mkdir("d");
  ws.Write("d/f", "leaves the root\n");
  const std::string script =
      "import os, sys\n"
      "for i in range(int(sys.argv[2])):\n"
      "    try:\n"
      "        os.rename('d', sys.argv[1])\n"
      "        print('ok')\n"
      "    except OSError as e:\n"
      "        print(e.errno)\n";
  const std::string away = ws.outside() + "/d";
  GuardResult blocked = RunGuard(ws, Preload({"python3", "-c", script, away, "3"}));
  const std::string eperm = std::to_string(EPERM) + "\n";
  BOOST_TEST(blocked.out == eperm + eperm + eperm, blocked.out);
  BOOST_TEST(CountLines(blocked.err, "--mode preload cannot capture this rename; refused") == 1u, blocked.err);
  BOOST_TEST(ws.Read("d/f") == "leaves the root\n");
  GuardResult allowed = RunGuard(ws, Preload({"python3", "-c", script, away, "1"}, {"--on-capture-failure=allow"}));
  BOOST_TEST(allowed.out == "ok\n", allowed.out);
  BOOST_TEST(CountLines(allowed.err, "cannot capture this rename; it ran unrecorded") == 1u, allowed.err);
}

// chown by path: the owner alone changes nothing guard keeps (no record, no
// refusal); a set-uid file's chown is the chmod the kernel makes of it.
BOOST_AUTO_TEST_CASE(ChownByPathRunsAndASetuidFilesChownIsUndone) {
  Workspace ws;
  ws.Write("plain", "owned\n", 0644);
  ws.Write("setuid", "set-uid\n", 04755);
  TreeSnapshot before = SnapshotTree(ws.tree());
  GuardResult r = RunGuard(ws, Preload({"python3", "-c",
                                        "import os\n"
                                        "os.chown('plain', os.getuid(), os.getgid())\n"
                                        "os.chown('setuid', os.getuid(), os.getgid())\n"}));
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  struct stat st;
  BOOST_REQUIRE_EQUAL(stat(ws.Path("setuid").c_str(), &st), 0);
  BOOST_TEST((st.st_mode & 07777) == 0755u, "the kernel cleared set-uid");
  UndoGivesBack(ws, r, before, kTimeoutSeconds);
}

// truncate and chmod through a /proc magic link (/proc/self/fd/N, /dev/fd/N)
// reach a file the shim cannot name: a miss, refused with its line, not run
// unrecorded as a /proc pseudo-file would be (before session 19 both ran,
// and the content and mode were lost to undo).
BOOST_AUTO_TEST_CASE(TruncateAndChmodThroughAProcFdLinkAreMisses) {
  Workspace ws;
  ws.Write("f", "first\n", 0644);
  ws.Write("g", "second\n", 0644);
  GuardResult r = RunGuard(ws, Preload({"bash", "-c",
                                        "exec 3<f; chmod 600 /dev/fd/3; echo chmod $?; "
                                        "python3 -c 'import os\nfd = os.open(\"g\", os.O_RDONLY)\n"
                                        "try:\n    os.truncate(f\"/proc/self/fd/{fd}\", 0)\n    print(\"ran\")\n"
                                        "except PermissionError:\n    print(\"refused\")'"}));
  BOOST_TEST(r.out == "chmod 1\nrefused\n", DescribeResult(r));
  BOOST_TEST(r.err.find("cannot capture this fchmodat; refused") != std::string::npos, r.err);
  BOOST_TEST(r.err.find("cannot capture this truncate") != std::string::npos, r.err);
  BOOST_TEST(ws.Read("g") == "second\n");
  struct stat st;
  BOOST_REQUIRE(stat(ws.Path("f").c_str(), &st) == 0);
  BOOST_TEST((st.st_mode & 07777) == 0644u);
}

BOOST_AUTO_TEST_CASE(GuardsStateDirectoryIsRefusedToLibcCallers) {
  Workspace ws;
  GuardResult r = RunGuard(ws, Preload({"bash", "-c",
                                        "rm -rf \"$GUARD_HOME\"/sessions 2>/dev/null; "
                                        "echo x > \"$GUARD_HOME\"/planted 2>/dev/null; ls \"$GUARD_HOME\"/sessions | wc -l"}));
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(!ws.Exists("../home/planted"));
  struct stat st;
  BOOST_TEST(stat((ws.home() + "/planted").c_str(), &st) != 0);
  BOOST_TEST(!ws.SessionIds().empty());
  GuardResult sessions = RunGuardWithin(ws, {"sessions"}, kTimeoutSeconds);
  BOOST_TEST(sessions.exit_code == 0, sessions.err);
}

BOOST_AUTO_TEST_CASE(AStaticProgramStartedGetsAWarningEachTime) {
  BOOST_REQUIRE_MESSAGE(access("/bin/busybox", X_OK) == 0, "busybox-static is a test dependency (.ci/run installs it)");
  Workspace ws;
  GuardResult r = RunGuard(ws, Preload({"bash", "-c", "/bin/busybox true; /bin/busybox true; /bin/true"}));
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(CountLines(r.err, "--mode preload cannot see /bin/busybox (statically linked)") == 2u, r.err);
  BOOST_TEST(CountLines(r.err, "cannot see") == 2u, r.err);
  GuardResult direct = RunGuard(ws, Preload({"/bin/busybox", "true"}));
  BOOST_TEST(direct.exit_code == 0, DescribeResult(direct));
  BOOST_TEST(CountLines(direct.err, "guard: warning: --mode preload cannot see /bin/busybox") == 1u, direct.err);
}

// A thread killed by another thread's exec between the claim and the
// publication of its record would leave a claim whose owner (the same pid,
// now the shell) is alive: nothing put after it would reach the journal
// while the shell runs. The exec waits for the put (exec_quiesce.h), so the
// shell sees its own file's record arrive. (Under both shim modes: auto.)
BOOST_AUTO_TEST_CASE(AnExecByAnotherThreadWaitsForAPutInFlight) {
  Workspace ws;
  for (const char* mode : {"preload", "auto"}) {
    BOOST_TEST_CONTEXT(mode) {
      GuardRun run;
      run.command = {TestProgram("exec_mid_put"),
                     "echo after > after.txt; for i in $(seq 300); do "
                     "\"$GUARD\" show --session \"$GUARD_SESSION\" 2>/dev/null | grep -q after.txt && exit 0; "
                     "sleep 0.2; done; exit 9"};
      run.guard_options = {"--mode", mode};
      run.env["GUARD_SHIM_TEST_SLOW_PUT"] = "2000";
      run.env["GUARD"] = GuardBinary();
      run.timeout_seconds = 180;
      GuardResult r = RunGuard(ws, run);
      BOOST_TEST(r.exit_code == 0, DescribeResult(r));
    }
  }
}

// A single name is resolved through the call's own dirfd or cwd (the shim
// borrows it as the parent rather than opening one): when that directory
// was renamed after the program took hold of it, every record must name it
// by its name at the call, and undo must give back what was there, under
// both shim modes, for a dirfd and for the cwd. The program checks that
// its dirfd still works after each call (the shim must not close it).
BOOST_AUTO_TEST_CASE(CallsRelativeToARenamedDirectoryAreRecordedUnderItsNewNameAndUndone) {
  const OpKind kDelete = OpKind::kDelete, kRename = OpKind::kRename, kModify = OpKind::kModify,
               kMkdir = OpKind::kMkdir, kRmdir = OpKind::kRmdir;
  for (const char* mode : {"preload", "auto"}) {
    for (const char* how : {"dirfd", "cwd"}) {
      BOOST_TEST_CONTEXT(mode << " " << how) {
        Workspace ws;
        ws.Mkdir("d");
        ws.Write("d/gone", "deleted through the renamed directory\n");
        ws.Write("d/from", "moved\n");
        ws.Write("d/victim", "renamed over\n");
        ws.Write("d/trunc", "truncated\n");
        TreeSnapshot before = SnapshotTree(ws.tree());
        GuardRun run;
        run.command = {TestProgram("renamed_parent_calls"), how, "d", "e"};
        run.guard_options = {"--mode", mode};
        run.timeout_seconds = kTimeoutSeconds;
        GuardResult r = RunGuard(ws, run);
        BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
        BOOST_TEST(ws.Read("e/trunc") == "new\n");
        ExpectCapture(ws, r, before,
                      {{kRename, "d", "e"},
                       {kDelete, "e/gone"},
                       {kRename, "e/from", "e/victim"},
                       {kModify, "e/trunc"},
                       {kMkdir, "e/made"},
                       {kRmdir, "e/made"}});
        UndoGivesBack(ws, r, before, kTimeoutSeconds);
      }
    }
  }
}

// The shim asks for a read lease on a file before it links it into the
// pending area (nobody may have it open for writing) and lets the close of
// its fd remove the lease: a program that reopens that file for writing
// right after must not break a lease left behind (SIGIO would end it).
BOOST_AUTO_TEST_CASE(AFileRenamedOverCanBeReopenedForWritingRightAfter) {
  Workspace ws;
  ws.Write("from", "new\n");
  ws.Write("victim", "old\n");
  GuardResult r = RunGuard(ws, Preload({TestProgram("reopen_renamed_over"), "from", "victim"}));
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(ws.Read("victim") == "new\n");
  // No undo check: the write reached the linked pre-image itself (the
  // program reopened an inode it held read-only, which no lease tells).
}

BOOST_AUTO_TEST_CASE(WithoutTheShimPreloadRefusesToStartAndMakesNoSession) {
  Workspace ws;
  GuardRun run = Preload({"bash", "-c", "echo x > made"});
  run.env["GUARD_SHIM_PATH"] = ws.outside() + "/no-such-shim.so";
  GuardResult r = RunGuard(ws, run);
  BOOST_TEST(r.exit_code == 125, DescribeResult(r));
  BOOST_TEST(r.err.find("mode preload needs the shim") != std::string::npos, r.err);
  BOOST_TEST(!ws.Exists("made"));
  BOOST_TEST(ws.SessionIds().empty());
}

}  // namespace
}  // namespace guard::e2e
