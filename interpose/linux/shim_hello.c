#include "interpose/linux/shim_hello.h"

#include <sys/syscall.h>

#include "common/shim_hello.h"
#include "interpose/linux/shim_protocol.h"
#include "interpose/linux/syscall_stub.h"

static struct guard_shim_hello_text text(const char* s, size_t len) {
  struct guard_shim_hello_text t = {(uint64_t)(unsigned long)s, (uint64_t)len};
  return t;
}

enum shim_hello_answer shim_hello_exchange(const struct shim_config* c) {
  struct guard_shim_hello h = {0};
  h.protocol = shim_protocol_own();
  h.flags = c->alone ? GUARD_SHIM_HELLO_ALONE : 0;
  h.root_dev = c->root_dev;
  h.root_ino = c->root_ino;
  h.pending_dev = c->pending_dev;
  h.pending_ino = c->pending_ino;
  h.ring_dev = c->ring_dev;
  h.ring_ino = c->ring_ino;
  h.root = text(c->root, c->root_len);
  h.state = text(c->state, c->state_len);
  h.pending = text(c->pending, c->pending_len);
  h.inbox = text(c->inbox, c->inbox_len);
  h.config = text(c->config_dir, c->config_dir_len);
  h.session = text(c->session, c->session_len);
  /* Raw, from this text: the filter stops it, and only a tracer can make
   * the answer positive (common/shim_hello.h). */
  long rc = shim_raw_syscall(SYS_mkdirat, GUARD_SHIM_HELLO_DIRFD, 0, 0, (long)&h, (long)sizeof h,
                             (long)GUARD_SHIM_HELLO_MAGIC);
  if (rc == GUARD_SHIM_HELLO_AGREED) return SHIM_HELLO_AGREED;
  if (rc == GUARD_SHIM_HELLO_REFUSED) return SHIM_HELLO_REFUSED;
#ifdef GUARD_SHIM_TEST_BELIEVES_ENVIRONMENT
  /* A test's shim run without guard (shim_capture_test): it captures on its
   * environment's word, as a shim under an agreeing tracer. Never installed. */
  return SHIM_HELLO_AGREED;
#else
  return SHIM_HELLO_NOBODY;
#endif
}
