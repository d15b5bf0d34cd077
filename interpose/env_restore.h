/* Putting guard's environment back into an exec whose program cleared or
 * rebuilt it (env -i, a sandboxing launcher, Python's subprocess with env=),
 * so that the shim loads again in the new image.
 *
 * "guard's environment" is what this process started with: the LD_PRELOAD
 * entry that loaded the shim and every GUARD_* variable. It is copied once,
 * at the shim's start, into static storage; an exec then gets an envp with
 * those put back, built in arrays on the caller's stack (no heap: an exec
 * runs in vfork children and after fork in threaded programs).
 *
 * The bound: SHIM_ENV_MAX entries in the host's envp. Beyond it (or with an
 * LD_PRELOAD longer than SHIM_ENV_SCRATCH) the exec proceeds with the
 * host's environment unchanged and the shim reports it (the test report's
 * "env-not-restored"): the new program then runs without the shim, seen by
 * the tracer alone in --mode auto; in --mode preload that is a capture
 * failure, whose policy the supervisor applies when the ring carries it. */
#ifndef GUARD_INTERPOSE_ENV_RESTORE_H_
#define GUARD_INTERPOSE_ENV_RESTORE_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHIM_ENV_MAX 1024     /* entries of the host's envp */
#define SHIM_ENV_SAVED_MAX 64 /* guard's own variables */
#define SHIM_ENV_SCRATCH 4096 /* bytes for a merged LD_PRELOAD=... */

/* Room for the envp an exec gets: the host's entries and guard's. */
struct shim_env_frame {
  char* entries[SHIM_ENV_MAX + SHIM_ENV_SAVED_MAX + 2]; /* + LD_PRELOAD + NULL */
  char scratch[SHIM_ENV_SCRATCH];
};

/* Copies guard's variables out of `envp` (at the shim's start). `shim_path`
 * is the file the loader opened for the shim, used when LD_PRELOAD does not
 * name it (a shim loaded by dlopen). */
void shim_env_snapshot(char* const* envp, const char* shim_path);

/* The environment to exec with: `envp` itself when it already holds guard's
 * variables, else one built in `frame`; `envp` unchanged (and reported)
 * beyond the bounds. */
char* const* shim_env_restore(char* const* envp, struct shim_env_frame* frame);

#ifdef __cplusplus
}
#endif

#endif /* GUARD_INTERPOSE_ENV_RESTORE_H_ */
