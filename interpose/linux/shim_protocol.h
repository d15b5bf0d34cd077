/* The protocol check at the shim's start (common/shim_interface.h): guard
 * names the protocol it speaks in GUARD_SHIM_PROTOCOL; a shim that speaks
 * another captures nothing, prints nothing into its host, and says so in
 * the ring header's shim_mismatch word, which guard reads and reports in
 * one line. Its calls then go to the real functions: the tracer's under
 * --mode auto, the capture-failure policy's alone (capture_alone.h). */
#ifndef GUARD_INTERPOSE_LINUX_SHIM_PROTOCOL_H_
#define GUARD_INTERPOSE_LINUX_SHIM_PROTOCOL_H_

#include <stdint.h>

/* The protocol this shim speaks: GUARD_SHIM_PROTOCOL, or in a test build
 * of the shim GUARD_SHIM_PROTOCOL_OVERRIDE (tests/CMakeLists.txt). */
uint32_t shim_protocol_own(void);

/* 1 when envp's GUARD_SHIM_PROTOCOL is this shim's. Otherwise 0, once the
 * mismatch is reported into the ring envp names (if it maps: magic checked,
 * nothing else of it trusted), with `alone` and `block` saying what this
 * shim does with the calls it leaves. */
int shim_protocol_agrees(char* const* envp, int alone, int block);

#endif /* GUARD_INTERPOSE_LINUX_SHIM_PROTOCOL_H_ */
