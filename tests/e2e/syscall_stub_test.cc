// The seccomp filter's allowance for the shim's syscall stub, under the
// real tracer: a static program (no shim) maps its own copy of the stub at
// the fixed address, and another 4 GiB above it (equal in the low 32 bits),
// and deletes one file through each and one through libc's syscall(). The
// filter stops the libc call and the one from the look-alike page, which
// guard records; the one from the stub's exact address runs unseen. That
// hole is what docs/security.md ("The shim's syscall stub") describes.
#define BOOST_TEST_MODULE syscall_stub
#include <boost/test/unit_test.hpp>

#include "tests/e2e/support/expect_capture.h"

namespace guard::e2e {
namespace {

BOOST_AUTO_TEST_CASE(CallFromTheStubAddressRunsUnseenAndFromElsewhereIsStopped) {
  Workspace ws;
  ws.Write("via-libc", "deleted through syscall()\n");
  ws.Write("via-low-half", "deleted from a page equal in the low 32 bits\n");
  ws.Write("via-stub", "deleted from the stub's address\n");
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardRun run;
  run.command = {TestProgram("static_stub_jumper")};
  GuardResult r = RunGuard(ws, run);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "exit " << r.exit_code << "; stderr:\n" << r.err);

  BOOST_TEST(!ws.Exists("via-stub"));
  SessionView s = ExpectCapture(ws, r, before, {{OpKind::kDelete, "via-libc"}, {OpKind::kDelete, "via-low-half"}});
  ExpectPreImagesOf(s, before, {"via-libc", "via-low-half"});
}

}  // namespace
}  // namespace guard::e2e
