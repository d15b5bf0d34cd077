#include "interpose/linux/capture_record.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>

#include "interpose/linux/capture_config.h"
#include "interpose/linux/exec_quiesce.h"
#include "interpose/linux/pre_image.h"
#include "interpose/linux/process_name.h"
#include "interpose/linux/syscall_stub.h"
#include "interpose/shim_process.h"

_Static_assert(sizeof(struct guard_shim_stat) == 80, "guard_shim_stat layout");
_Static_assert(sizeof(struct guard_shim_call) % 8 == 0, "guard_shim_call pads to 8");

/* call_id: per process (a thread's ids are its own subset, still unique
 * with its tid; a vfork child shares it with its parent, harmlessly).
 * Relaxed: only uniqueness matters. */
static _Atomic uint64_t call_counter;

/* The thread's id, kept with the pid it was asked under (pid << 32 | tid,
 * one aligned store, so that a kill or a signal cannot leave half of it),
 * so that a call asks only getpid, which shim_call_pid asks anyway. A fork
 * child's thread has another pid and asks again, and forgets the pair at
 * once (shim_call_ids_forget, from the atfork handler), in case a later
 * process gets the parent's pid back. A vfork child runs on its parent's
 * thread and so on this very variable: its pid differs, it asks, and its
 * pair makes its parent ask again after it. (A raw clone of a thread that
 * shares this TLS shares the pair; no libc function is safe in one.)
 * Relaxed: only this thread, or a vfork child while it waits, uses it. */
static __thread _Atomic uint64_t ids __attribute__((tls_model("initial-exec")));

void shim_call_ids(struct shim_call* c) {
  uint32_t pid = (uint32_t)shim_call_pid(c);
  if (c->tid != 0) return;
  uint64_t kept = atomic_load_explicit(&ids, memory_order_relaxed);
  if (kept != 0 && (uint32_t)(kept >> 32) == pid) {
    c->tid = (int32_t)(uint32_t)kept;
    return;
  }
  c->tid = (int32_t)shim_own_syscall(SYS_gettid, 0, 0, 0, 0, 0, 0);
  if (c->tid > 0) atomic_store_explicit(&ids, (uint64_t)pid << 32 | (uint32_t)c->tid, memory_order_relaxed);
}

void shim_call_ids_forget(void) { atomic_store_explicit(&ids, 0, memory_order_relaxed); }

void shim_stat_unmade(struct guard_shim_stat* st) {
  memset(st, 0, sizeof *st);
  st->err = -1;
}

int shim_record_call(struct shim_call* c, uint32_t action, uint64_t flags, uint32_t mode,
                     const struct guard_shim_stat* before1, const struct guard_shim_stat* before2,
                     const struct shim_strings* strings) {
  /* The supervisor saw a forgery in the ring (its fail_closed word,
   * common/ring_format.h): no more CALLs. The call goes to the real
   * function, as after a put the ring refused: the tracer's under --mode
   * auto, the capture-failure policy's alone. */
  if (__atomic_load_n(&shim_config.ring.header->fail_closed, __ATOMIC_RELAXED) != 0) return -EPIPE;
  struct guard_shim_call rec;
  memset(&rec, 0, sizeof rec);
  rec.call_id = atomic_fetch_add_explicit(&call_counter, 1, memory_order_relaxed) + 1;
  shim_call_ids(c);
  rec.tid = c->tid;
  rec.action = action;
  rec.flags = flags;
  rec.mode = mode;
  if (before1 != NULL)
    rec.before1 = *before1;
  else
    shim_stat_unmade(&rec.before1);
  if (before2 != NULL)
    rec.before2 = *before2;
  else
    shim_stat_unmade(&rec.before2);
  struct guard_ring_part parts[1 + GUARD_SHIM_STR_COUNT];
  parts[0].data = &rec;
  parts[0].length = sizeof rec;
  const char* comm = NULL;
  size_t comm_len = shim_process_name(&comm);
  for (int i = 0; i < GUARD_SHIM_STR_COUNT; ++i) {
    const char* text = i == GUARD_SHIM_STR_COMM ? comm : strings->s[i];
    size_t n = i == GUARD_SHIM_STR_COMM ? comm_len : strings->s[i] != NULL ? strings->n[i] : 0;
    if (n > GUARD_SHIM_MAX_STRING) return -ENAMETOOLONG;
    rec.lengths[i] = (uint16_t)n;
    parts[1 + i].data = text;
    parts[1 + i].length = (uint32_t)n;
  }
  struct shim_inline_source src = {strings->inline_fd, strings->inline_size, 0};
  struct guard_ring_fill fill = {(uint32_t)strings->inline_size + 1, shim_pre_image_fill, &src};
  if (strings->has_inline) rec.content = GUARD_SHIM_CONTENT_INLINE;
  shim_put_begin();
  int rc = guard_ring_putv_fill_as(&shim_config.ring, c->pid, GUARD_SHIM_RECORD_CALL, parts, 1 + GUARD_SHIM_STR_COUNT,
                                   strings->has_inline ? &fill : NULL);
  shim_put_end();
  if (rc != 0 && src.err != 0) {
    /* The read into the ring failed, or found another size than the
     * lstat's (a writer at work): the content goes to the pending area as
     * a copy of what the fd holds now, and the CALL names it. */
    size_t name_len = 0;
    int err = shim_pre_image_copy_fd(c, strings->inline_fd, strings->spill_name, &name_len);
    if (err != 0) {
      c->spill_errno = err;
      return -err;
    }
    rec.content = 0;
    rec.lengths[GUARD_SHIM_STR_PENDING1] = (uint16_t)name_len;
    parts[1 + GUARD_SHIM_STR_PENDING1].data = strings->spill_name;
    parts[1 + GUARD_SHIM_STR_PENDING1].length = (uint32_t)name_len;
    shim_put_begin();
    rc = guard_ring_putv_as(&shim_config.ring, c->pid, GUARD_SHIM_RECORD_CALL, parts, 1 + GUARD_SHIM_STR_COUNT);
    shim_put_end();
    if (rc != 0) shim_pre_image_drop(strings->spill_name);
  }
  if (rc != 0) return rc;
  c->recorded = 1;
  c->action = action;
  c->call_id = rec.call_id;
  return 0;
}

void shim_record_outcome(const struct shim_call* c, long rc, int err, const struct guard_shim_stat* after) {
  struct guard_shim_outcome rec;
  memset(&rec, 0, sizeof rec);
  rec.call_id = c->call_id;
  rec.tid = c->tid;
  rec.err = rc < 0 ? err : 0;
  rec.result = rc;
  rec.after = *after;
  /* A failure here leaves the CALL alone, which reads as "may have
   * happened": the supervisor checks the path itself. */
  shim_put_begin();
  struct guard_ring_part part = {&rec, sizeof rec};
  (void)guard_ring_putv_as(&shim_config.ring, c->pid, GUARD_SHIM_RECORD_OUTCOME, &part, 1);
  shim_put_end();
}
