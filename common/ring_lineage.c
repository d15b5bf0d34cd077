/* ring_lineage.c: a process's parent chain, read from /proc (see the
 * header). Raw system calls only, through the same switch as the ring
 * producer's (the shim makes them from its stub). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "common/ring_lineage.h"

#ifdef GUARD_RING_SYSCALL
long GUARD_RING_SYSCALL(long nr, ...);
#endif
#include "common/ring_os.h"

/* Writes v's decimal digits at path + at; returns the new end. */
/* The parent of `pid` (field 4 of /proc/PID/stat; for a thread id, its
 * process's parent), or -1 when it cannot be read. */
/* Whether `tid` is a thread of process `pid`: /proc/PID/task/TID exists. */
int guard_ring_descends_from(int pid, int ancestor) {
  if (pid <= 0 || ancestor <= 0) return -1;
  if (ancestor == 1) return 1;
  const int first = pid;
  for (int depth = 0; depth < GUARD_RING_LINEAGE_MAX_DEPTH; ++depth) {
    if (pid == ancestor) return 1;
    if (pid <= 1) {
      /* The stat of a thread id gives its process's parent, past the
       * process itself: a thread of the ancestor is found here. */
      return ring_os_thread_of(first, ancestor);
    }
    pid = ring_os_parent_of(pid);
    if (pid < 0) return -1;
  }
  return -1;
}
