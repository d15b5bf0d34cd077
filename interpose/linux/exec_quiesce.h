/* An exec kills the process's other threads. One killed between the claim
 * and the publication of a ring record would leave a claim whose owner
 * (same pid, same start time) lives on in the new image, which the ring
 * could then never reclaim (docs/ring.md, "Known limits"). So the exec
 * family waits for the puts in flight to end, and a put that begins while
 * an exec is pending waits for it: the exec kills it, or fails and lets it
 * go. A vfork child's exec kills no thread of the parent and skips this. */
#ifndef GUARD_INTERPOSE_LINUX_EXEC_QUIESCE_H_
#define GUARD_INTERPOSE_LINUX_EXEC_QUIESCE_H_

/* Around every ring put of the shim (capture_record.c). */
void shim_put_begin(void);
void shim_put_end(void);

/* Before the real exec (at most about 2 s of waiting: a put that waits for
 * room in a ring nobody drains any more must not hold the exec forever),
 * and after it, which is reached only when the exec failed. */
void shim_exec_begin(void);
void shim_exec_end(void);

#endif /* GUARD_INTERPOSE_LINUX_EXEC_QUIESCE_H_ */
