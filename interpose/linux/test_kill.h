/* Test-only kill points (GUARD_SHIM_TEST_KILL="<phase>:<n>"): the n-th call
 * the shim captures in a process (counted from 1; a fork child counts from
 * 1 again) dies by SIGKILL at that phase, for the kill tests of
 * tests/e2e/auto_kill_point_test.cc:
 *   pre-image  its pre-images made (a pending link or copy), no CALL put;
 *   call       its CALL in the ring, the host's call not made;
 *   outcome    the host's call made, its OUTCOME not put.
 * guard never sets the variable; unset, each point is one load and a test.
 *
 * GUARD_SHIM_TEST_SLOW_PUT="<ms>": every ring put of the shim sleeps that
 * long between its claim and its publication, so that a test can make
 * another thread exec while one is mid-put (exec_quiesce.h). */
#ifndef GUARD_INTERPOSE_LINUX_TEST_KILL_H_
#define GUARD_INTERPOSE_LINUX_TEST_KILL_H_

#include "interpose/shim_capture.h"

enum shim_kill_phase { SHIM_KILL_NONE = 0, SHIM_KILL_PRE_IMAGE, SHIM_KILL_CALL, SHIM_KILL_OUTCOME };

/* Reads GUARD_SHIM_TEST_KILL from `envp` (the shim's start). */
void shim_test_kill_configure(char* const* envp);

/* The count starts again (fork's child). */
void shim_test_kill_restart(void);

/* Installs the slow-put hook on the shim's producer when asked (after
 * shim_config_load). */
struct guard_ring_producer;
void shim_test_slow_put_install(struct guard_ring_producer* p);

/* At the pre-image phase the call gets its number (c->kill_number); every
 * phase kills the process if it is the one asked for. */
void shim_test_kill_point(struct shim_call* c, enum shim_kill_phase phase);

#endif /* GUARD_INTERPOSE_LINUX_TEST_KILL_H_ */
