// Under --mode auto the shim's syscall stub is a way past the tracer
// (docs/security.md): guard therefore runs the command in a user and mount
// namespace of its own in which the state directory is a locked read-only
// mount (supervisor/trace/state_isolation.h). A static program that jumps
// from the stub's address at the journal fails at every attempt, through
// /proc/PID/root of the namespaces outside included, and the journal holds
// the session all the same; the inbox the shim writes pre-images into is
// refused to ordinary calls as the state directory is; with hide_state =
// "off" the same program gets through, which is what the isolation stops.
#define BOOST_TEST_MODULE state_isolation
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>

#include "tests/e2e/support/expect_capture.h"

namespace guard::e2e {
namespace {

GuardResult RunJumper(const Workspace& ws, const std::string& hide_state) {
  GuardRun run;
  run.guard_options = {"--mode", "auto"};
  run.env["GUARD_HIDE_STATE"] = hide_state;
  run.command = {"bash", "-c", "rm gone && " + TestProgram("static_stub_state_jumper")};
  return RunGuard(ws, run);
}

BOOST_AUTO_TEST_CASE(CallsFromTheStubCannotReachTheStateDirectory) {
  Workspace ws;
  ws.Write("gone", "deleted by the session before the attempts\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  GuardResult r = RunJumper(ws, "auto");
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "exit " << r.exit_code << "\nstdout:\n" << r.out << "stderr:\n" << r.err);
  for (const char* attempt : {"append to the journal: EROFS", "truncate the journal: EROFS",
                              "delete the journal: EROFS", "rename the state directory: EBUSY",
                              "write the configuration: EROFS"}) {
    BOOST_TEST(r.out.find(attempt) != std::string::npos, attempt << " in:\n" << r.out);
  }
  BOOST_TEST(r.out.find("unmount the state directory: DONE") == std::string::npos, r.out);
  BOOST_TEST(r.out.find("DONE") == std::string::npos, r.out);
  // The session's journal is whole: the delete before the attempts is in it.
  SessionView s = ExpectCapture(ws, r, before, {{OpKind::kDelete, "gone"}});
  ExpectPreImagesOf(s, before, {"gone"});
}

BOOST_AUTO_TEST_CASE(WithHideStateOffTheSameCallsGetThrough) {
  Workspace ws;
  ws.Write("gone", "x\n");
  GuardResult r = RunJumper(ws, "off");
  // The journal was appended to, truncated and deleted from the stub.
  BOOST_TEST(r.exit_code == 1, "exit " << r.exit_code << "\n" << r.out << r.err);
  BOOST_TEST(r.out.find("delete the journal: DONE") != std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(TheInboxIsRefusedToOrdinaryCalls) {
  Workspace ws;
  ws.Write("f", "content\n");
  GuardRun run;
  run.guard_options = {"--mode", "auto"};
  run.command = {"bash", "-c", R"sh(
I="$GUARD_SHIM_INBOX"; [ -n "$I" ] || exit 9
rm f
ls "$I/$GUARD_SESSION" > /dev/null; echo "list: $?"
echo x > "$I/$GUARD_SESSION/planted"; echo "plant: $?"
rm -rf "$I" 2> /dev/null; echo "rm -rf: $?"
mv "$I" "$I.moved" 2> /dev/null; echo "mv: $?"
exit 0
)sh"};
  TreeSnapshot before = SnapshotTree(ws.tree());
  GuardResult r = RunGuard(ws, run);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "exit " << r.exit_code << "\n" << r.err);
  // Hidden by name, its own included (the shim reaches it by fd: docs/shim.md,
  // "The inbox by fd"); what a name reaches is refused.
  BOOST_TEST(r.out == "list: 2\nplant: 1\nrm -rf: 1\nmv: 1\n");
  SessionView s = ExpectCapture(ws, r, before, {{OpKind::kDelete, "f"}});
  ExpectPreImagesOf(s, before, {"f"});
  // Emptied and removed at the session's end.
  BOOST_TEST(!PathExists(ws.home() + "-inbox/" + r.new_sessions.at(0)));
}

// An ordinary user's session: namespace A's maps are the user's own ids
// only (written under the kernel's rules for an unprivileged writer), and
// the same attempts fail. Run as uid 65534 by setpriv where the suite runs
// as root (CI); skipped otherwise.
BOOST_AUTO_TEST_CASE(AnOrdinaryUsersStateDirectoryIsHiddenToo) {
  if (geteuid() != 0 || !PathExists("/usr/bin/setpriv")) {
    BOOST_TEST_MESSAGE("SKIPPED: needs root (to become an ordinary user) and setpriv");
    return;
  }
  Workspace ws;
  ws.Write("gone", "deleted by the session before the attempts\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  for (const auto& e : std::filesystem::recursive_directory_iterator(ws.dir())) {
    BOOST_REQUIRE(lchown(e.path().c_str(), 65534, 65534) == 0);
  }
  BOOST_REQUIRE(chown(ws.dir().c_str(), 65534, 65534) == 0);
  GuardRun run;
  run.guard_options = {"--mode", "auto"};
  run.env["GUARD_HIDE_STATE"] = "required";
  run.command = {"bash", "-c", "rm gone && id -u && " + TestProgram("static_stub_state_jumper")};
  ProcessSpec spec = GuardSpec(ws, run);
  spec.argv.insert(spec.argv.begin(), {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
  ProcessResult r = RunProcess(spec);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "exit " << r.exit_code << "\nstdout:\n" << r.out << "stderr:\n" << r.err);
  BOOST_TEST(r.out.rfind("65534\n", 0) == 0, r.out);
  BOOST_TEST(r.out.find("delete the journal: EROFS") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("DONE") == std::string::npos, r.out);
  BOOST_TEST(!ws.Exists("gone"));
}

}  // namespace
}  // namespace guard::e2e
