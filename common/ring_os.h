/* ring_os.h: the few system calls of the ring (docs/ring.md), each a small
 * twin per platform chosen at build time, apart from the ring's logic:
 *   ring_os_futex_wait/wake_all  sleeping on a word of the shared segment
 *   ring_os_now_ns               the monotonic clock
 *   ring_os_start_ticks          when a process started (0: gone or a zombie)
 *   ring_os_parent_of            a process's parent (-1: gone)
 *   ring_os_thread_of            whether `tid` is a thread of process `pid`
 *   ring_os_pid_ns_inode         this process's pid namespace (0: none)
 *   ring_os_give_back            a range of the segment unmapped from this process
 * Linux (ring_os_linux.h): futex and /proc, through GUARD_RING_SYSCALL,
 * which the includer defines (the shim sends them through its stub).
 * macOS (ring_os_darwin.h): __ulock and proc_pidinfo; there is no shim
 * there, so nothing produces into a ring, but the consumer's code and
 * recovery build and run unchanged. Static inline: each includer takes
 * what it uses, C and C++ alike. */
#pragma once

#if defined(__APPLE__)
#include "common/ring_os_darwin.h"
#else
#include "common/ring_os_linux.h"
#endif
