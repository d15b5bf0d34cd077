/* The shim's side of its handshake with the tracer (common/shim_hello.h):
 * what the shim read from its environment, told to the tracer in one
 * stopped call at its start, and what the answer makes of it. */
#ifndef GUARD_INTERPOSE_LINUX_SHIM_HELLO_H_
#define GUARD_INTERPOSE_LINUX_SHIM_HELLO_H_

#include "interpose/linux/capture_config.h"

enum shim_hello_answer {
  SHIM_HELLO_AGREED,  /* guard's tracer holds the same truth */
  SHIM_HELLO_REFUSED, /* guard's tracer holds another */
  SHIM_HELLO_NOBODY,  /* no tracer of guard's answered (the kernel, or a filter, did) */
};

/* Makes the handshake call for `c` (read and mapped, not yet ready), from
 * the shim's own text: never from the stub, which the filter lets by. */
enum shim_hello_answer shim_hello_exchange(const struct shim_config* c);

#endif /* GUARD_INTERPOSE_LINUX_SHIM_HELLO_H_ */
