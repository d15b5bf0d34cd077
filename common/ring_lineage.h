/* ring_lineage.h: whether a process is of the session whose ring it is
 * (docs/ring.md, "Who is of the session").
 *
 * The supervisor, the ring's consumer, is a child subreaper under every mode
 * that runs the ring, so every process of the session descends from it: a
 * process whose parent dies is reparented to it, never past it. A process
 * whose parent chain (field 4 of /proc/PID/stat) does not reach the
 * consumer's pid is not of the session, and nothing it claims in the ring
 * or in the name locks is honoured. Asked only when something is stalled
 * (a claim not published, a name lock held), never on the fast path.
 *
 * C, async-signal-safe, no allocation: the shim (name_lock.c) uses it as
 * the consumer does. */
#ifndef GUARD_COMMON_RING_LINEAGE_H_
#define GUARD_COMMON_RING_LINEAGE_H_

#ifdef __cplusplus
extern "C" {
#endif

/* How many parents the walk reads at most before it answers "unknown": a
 * session is never that deep, and a walk must end. */
#define GUARD_RING_LINEAGE_MAX_DEPTH 1024

/* 1: `pid` (a process or thread id) is `ancestor` or descends from it; 0: its
 * chain ends (pid 1 or 0) without meeting it; -1: unknown (a /proc read
 * failed on the way: the process ended, or /proc cannot be read). A pid 1
 * ancestor has every process for descendant. */
int guard_ring_descends_from(int pid, int ancestor);

#ifdef __cplusplus
}
#endif

#endif /* GUARD_COMMON_RING_LINEAGE_H_ */
