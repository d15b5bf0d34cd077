/* shim_interface.h: everything guard and its preload shim (interpose/) agree
 * on, in one place, with one protocol version both sides check at start
 * (docs/shim.md, "The interface"). C, for the shim; C++, for the supervisor.
 *
 * The contract is: the environment guard gives the shim (the names below and
 * what their values mean), and the layouts of what they share, each in a
 * header of its own:
 *   common/ring_format.h      the shared-memory ring (its own version,
 *                             GUARD_RING_VERSION, checked as it is mapped)
 *   common/shim_record.h      the CALL and OUTCOME records in the ring
 *   common/inbox_layout.h     the session's inbox, where pre-images go
 *   common/syscall_stub_abi.h the syscall stub the seccomp filter lets through
 *   common/shim_hello.h       the handshake: what the shim believes, held
 *                             by the tracer to the supervisor's truth
 * Any change to one of them, or to what a variable means, is a new
 * GUARD_SHIM_PROTOCOL: a new ring version is one such change.
 *
 * The check: guard sets GUARD_ENV_SHIM_PROTOCOL to the protocol it speaks;
 * a shim that speaks another (or finds none) captures nothing and reports
 * itself in the ring header's `shim_mismatch` word (GUARD_SHIM_MISMATCH),
 * which guard reads while the session runs. Frozen in every protocol, so
 * that two sides of different protocols still understand each other that
 * far: GUARD_ENV_SHIM_PROTOCOL, GUARD_ENV_SHIM_RING, GUARD_ENV_SHIM_ALONE,
 * GUARD_ENV_ON_CAPTURE_FAILURE, the ring header's line 0 (magic, version and
 * shim_mismatch at their offsets) and the word's encoding below. */
#ifndef GUARD_COMMON_SHIM_INTERFACE_H_
#define GUARD_COMMON_SHIM_INTERFACE_H_

#include <stddef.h>
#include <stdint.h>

#include "common/inbox_layout.h"
#include "common/ring_format.h"
#include "common/shim_hello.h"
#include "common/shim_record.h"
#include "common/syscall_stub_abi.h"

/* The protocol this build speaks. 2: the handshake (common/shim_hello.h).
 * 3: the inbox by an inherited fd (GUARD_ENV_SHIM_INBOX_FD). */
#define GUARD_SHIM_PROTOCOL 3u

/* Every variable of guard's starts so: the shim keeps them all and puts them
 * back into an exec that cleared them (interpose/env_restore.h). */
#define GUARD_ENV_PREFIX "GUARD_"

/* Set by guard for the command (trace/shim_launch.cc, commands/run_command.cc),
 * read by the shim at its start (interpose/linux/capture_config.c). */
#define GUARD_ENV_SHIM_PROTOCOL "GUARD_SHIM_PROTOCOL"   /* decimal: the protocol guard speaks */
#define GUARD_ENV_SHIM_RING "GUARD_SHIM_RING"           /* the ring's name in /dev/shm */
#define GUARD_ENV_SHIM_PENDING "GUARD_SHIM_PENDING"     /* the session's inbox, absolute */
#define GUARD_ENV_SHIM_INBOX "GUARD_SHIM_INBOX"         /* the directory of every inbox, guarded */
#define GUARD_ENV_SHIM_INBOX_FD "GUARD_SHIM_INBOX_FD"   /* decimal: the inbox as an inherited fd (auto, inboxes hidden) */
#define GUARD_ENV_SHIM_ALONE "GUARD_SHIM_ALONE"         /* "1": no tracer behind the shim (--mode preload) */
#define GUARD_ENV_ON_CAPTURE_FAILURE "GUARD_ON_CAPTURE_FAILURE" /* "block" (default) or "allow" */
#define GUARD_ENV_SESSION "GUARD_SESSION"               /* the session's id; set in every session */
#define GUARD_ENV_ROOT "GUARD_ROOT"                     /* the protected root, canonical */
#define GUARD_ENV_STATE_DIR "GUARD_STATE_DIR"           /* guard's state directory, canonical */
#define GUARD_ENV_CONFIG_DIR "GUARD_CONFIG_DIR"         /* guard's configuration directory, guarded */
#define GUARD_ENV_STATE_SEALED "GUARD_STATE_SEALED"     /* "1": the state directory is a read-only bind */

/* Test-only hooks the shim reads (docs/shim.md, "Test-only hooks"); guard
 * never sets them. */
#define GUARD_ENV_SHIM_TEST_FD "GUARD_SHIM_TEST_FD"
#define GUARD_ENV_SHIM_TEST_RAISE "GUARD_SHIM_TEST_RAISE"
#define GUARD_ENV_SHIM_TEST_RAISE_AT "GUARD_SHIM_TEST_RAISE_AT"
#define GUARD_ENV_SHIM_TEST_KILL "GUARD_SHIM_TEST_KILL"
#define GUARD_ENV_SHIM_TEST_SLOW_PUT "GUARD_SHIM_TEST_SLOW_PUT"

/* The ring header's `shim_mismatch` word: 0 until a shim refuses the
 * session's protocol; then SEEN, what that shim does with the calls it does
 * not capture (ALONE: no tracer stops them, so BLOCK refuses them or, without
 * it, they run unrecorded; neither: the tracer captures them), and the
 * shim's own protocol in the low 16 bits. The first shim to refuse sets it
 * (CAS from 0); guard says so once. */
#define GUARD_SHIM_MISMATCH_SEEN (UINT32_C(1) << 31)
#define GUARD_SHIM_MISMATCH_ALONE (UINT32_C(1) << 17)
#define GUARD_SHIM_MISMATCH_BLOCK (UINT32_C(1) << 16)
#define GUARD_SHIM_MISMATCH_PROTOCOL(word) ((uint32_t)(word) & 0xffffu)
#define GUARD_SHIM_MISMATCH_OFFSET 32u /* of the word in the ring header, frozen */

#ifdef __cplusplus
static_assert(offsetof(struct guard_ring_header, magic) == 0, "frozen: line 0");
static_assert(offsetof(struct guard_ring_header, version) == 8, "frozen: line 0");
static_assert(offsetof(struct guard_ring_header, shim_mismatch) == GUARD_SHIM_MISMATCH_OFFSET, "frozen: line 0");
static_assert(GUARD_SHIM_PROTOCOL <= 0xffffu, "the protocol fits the mismatch word");
#else
_Static_assert(offsetof(struct guard_ring_header, magic) == 0, "frozen: line 0");
_Static_assert(offsetof(struct guard_ring_header, version) == 8, "frozen: line 0");
_Static_assert(offsetof(struct guard_ring_header, shim_mismatch) == GUARD_SHIM_MISMATCH_OFFSET, "frozen: line 0");
#endif

#endif /* GUARD_COMMON_SHIM_INTERFACE_H_ */
