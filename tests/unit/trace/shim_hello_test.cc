// The tracer's side of the shim's handshake (supervisor/trace/shim_hello.h):
// a hello agrees only when every text and identity is the supervisor's;
// one field off, whichever, is refused and named.
#define BOOST_TEST_MODULE shim_hello
#include <boost/test/unit_test.hpp>

#include <sys/syscall.h>

#include <functional>
#include <string>
#include <vector>

#include "common/shim_interface.h"
#include "supervisor/trace/shim_hello.h"

namespace guard {
namespace {

ShimTruth Truth() {
  ShimTruth t;
  t.root = "/work/tree";
  t.state_dir = "/home/u/.local/state/guard";
  t.pending = "/home/u/.local/state/guard-inbox/S1";
  t.inbox_root = "/home/u/.local/state/guard-inbox";
  t.config_dir = "/home/u/.config/guard";
  t.session = "S1";
  t.root_id = {0x801, 100};
  t.pending_id = {0x801, 200};
  t.ring_id = {0x16, 300};
  return t;
}

// The hello an honest shim of this session sends.
ShimHello Honest() {
  ShimTruth t = Truth();
  ShimHello h;
  h.fixed.protocol = GUARD_SHIM_PROTOCOL;
  h.fixed.root_dev = t.root_id.dev, h.fixed.root_ino = t.root_id.ino;
  h.fixed.pending_dev = t.pending_id.dev, h.fixed.pending_ino = t.pending_id.ino;
  h.fixed.ring_dev = t.ring_id.dev, h.fixed.ring_ino = t.ring_id.ino;
  h.root = t.root, h.state_dir = t.state_dir, h.pending = t.pending;
  h.inbox_root = t.inbox_root, h.config_dir = t.config_dir, h.session = t.session;
  return h;
}

BOOST_AUTO_TEST_CASE(AnHonestHelloAgrees) { BOOST_TEST(CompareShimHello(Honest(), Truth()) == ""); }

BOOST_AUTO_TEST_CASE(EachFieldOffIsRefusedAndNamed) {
  struct Row {
    const char* what;  // a word of the refusal
    std::function<void(ShimHello*)> forge;
  };
  const std::vector<Row> rows = {
      {"protocol", [](ShimHello* h) { h->fixed.protocol = GUARD_SHIM_PROTOCOL + 1; }},
      {"GUARD_SHIM_ALONE", [](ShimHello* h) { h->fixed.flags |= GUARD_SHIM_HELLO_ALONE; }},
      {"root /work/tree/decoy", [](ShimHello* h) { h->root = "/work/tree/decoy"; }},
      {"state directory", [](ShimHello* h) { h->state_dir = "/nowhere"; }},
      {"inbox /tmp/elsewhere", [](ShimHello* h) { h->pending = "/tmp/elsewhere"; }},
      {"inboxes", [](ShimHello* h) { h->inbox_root = ""; }},
      {"configuration directory", [](ShimHello* h) { h->config_dir = "/tmp/cfg"; }},
      {"session S2", [](ShimHello* h) { h->session = "S2"; }},
      {"the root's identity", [](ShimHello* h) { h->fixed.root_ino = 101; }},
      {"the root's identity", [](ShimHello* h) { h->fixed.root_dev = 0x802; }},
      {"the inbox's identity", [](ShimHello* h) { h->fixed.pending_ino = 201; }},
      // A ring the session made itself, under the name it was told.
      {"the ring's identity", [](ShimHello* h) { h->fixed.ring_ino = 301; }},
      {"the ring's identity", [](ShimHello* h) { h->fixed.ring_dev = 0x17; }},
  };
  for (const Row& row : rows) {
    ShimHello h = Honest();
    row.forge(&h);
    std::string why = CompareShimHello(h, Truth());
    BOOST_TEST(why.find(row.what) != std::string::npos, row.what << ": " << why);
  }
}

BOOST_AUTO_TEST_CASE(OnlyTheHandshakesArgumentsAreTheHandshake) {
  uint64_t args[6] = {static_cast<uint64_t>(static_cast<int64_t>(GUARD_SHIM_HELLO_DIRFD)), 0, 0, 0x1000, 64,
                      GUARD_SHIM_HELLO_MAGIC};
  BOOST_TEST(IsShimHello(SYS_mkdirat, args));
  BOOST_TEST(!IsShimHello(SYS_mknodat, args));
  uint64_t named[6] = {args[0], 0x2000, 0, 0x1000, 64, GUARD_SHIM_HELLO_MAGIC};  // a path: a real mkdirat
  BOOST_TEST(!IsShimHello(SYS_mkdirat, named));
  uint64_t other[6] = {args[0], 0, 0, 0x1000, 64, GUARD_SHIM_HELLO_MAGIC + 1};
  BOOST_TEST(!IsShimHello(SYS_mkdirat, other));
}

}  // namespace
}  // namespace guard
