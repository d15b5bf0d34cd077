/* shim_hello.h: the shim's handshake with the tracer (docs/shim.md, "The
 * handshake"). C, for the shim; C++, for the supervisor.
 *
 * The shim's environment is the session's to rewrite: a static `env` can
 * start a dynamic program with GUARD_ROOT or GUARD_SHIM_PENDING pointing
 * elsewhere, and nothing puts guard's values back. So at its start, before
 * it captures anything, the shim tells the tracer what it believes, in one
 * call the seccomp filter stops (made from the shim's own text, never from
 * the stub):
 *
 *   mkdirat(GUARD_SHIM_HELLO_DIRFD, NULL, 0, &hello, sizeof hello,
 *           GUARD_SHIM_HELLO_MAGIC)
 *
 * The tracer compares it with its own truth and skips the call, making it
 * return GUARD_SHIM_HELLO_AGREED or GUARD_SHIM_HELLO_REFUSED: both
 * positive, which no kernel answer to this call is (a NULL path is EFAULT)
 * and no seccomp filter of the session's can forge (SECCOMP_RET_ERRNO gives
 * 0 or a negative errno). What the shim does with each answer:
 *   AGREED    a tracer of guard's holds the same truth: capture.
 *   REFUSED   it holds another: capture nothing; every call goes to the
 *             real function, which the tracer stops and records.
 *   negative  nobody answered as guard's tracer. Where the environment
 *             says so (GUARD_SHIM_ALONE, --mode preload) the shim captures
 *             on its word, with its own calls no longer from the stub (if
 *             a filter of guard's is there after all, it stops them);
 *             otherwise a tracer was expected and none answered: capture
 *             nothing.
 * The identities (device and inode, as makedev(major, minor) and the
 * inode number statx gives) tell a decoy of the same name from the real
 * thing: the ring is the segment the shim mapped (so a ring the process
 * made itself, and named in GUARD_SHIM_RING, is refused). */
#ifndef GUARD_COMMON_SHIM_HELLO_H_
#define GUARD_COMMON_SHIM_HELLO_H_

#include <stdint.h>

#define GUARD_SHIM_HELLO_DIRFD (-0x68656c6f)              /* "helo"; not AT_FDCWD, never an fd */
#define GUARD_SHIM_HELLO_MAGIC UINT64_C(0x6775617264686921) /* "guardhi!" */
#define GUARD_SHIM_HELLO_AGREED 0x6f6bL                   /* "ok" */
#define GUARD_SHIM_HELLO_REFUSED 0x6e6fL                  /* "no" */

/* The environment says no tracer stands behind the shim (GUARD_SHIM_ALONE):
 * a tracer that answers refuses such a hello. */
#define GUARD_SHIM_HELLO_ALONE 1u

/* A text in the shim's memory: its address and length (no NUL counted). */
struct guard_shim_hello_text {
  uint64_t addr;
  uint64_t len;
};

/* Longest text the tracer reads; longer is refused. */
#define GUARD_SHIM_HELLO_TEXT_MAX 4096u

struct guard_shim_hello {
  uint32_t protocol; /* GUARD_SHIM_PROTOCOL of the shim */
  uint32_t flags;    /* GUARD_SHIM_HELLO_* */
  uint64_t root_dev, root_ino;       /* GUARD_ROOT, statx'd */
  uint64_t pending_dev, pending_ino; /* GUARD_SHIM_PENDING, statx'd */
  uint64_t ring_dev, ring_ino;       /* the segment mapped from GUARD_SHIM_RING */
  struct guard_shim_hello_text root, state, pending, inbox, config, session;
};

#endif /* GUARD_COMMON_SHIM_HELLO_H_ */
