/* The calls that start a program: the exec family, posix_spawn(p), system
 * and popen (and a spawn's open actions, below). Each captures what is pending (shim_before_exec) and puts
 * guard's environment back when the program cleared it (env_restore.h), so
 * that the shim loads in the new image too. The new envp is built on this
 * stack frame: nothing is allocated, which matters in a vfork child.
 *
 * The reentrancy guard is dropped before the real call: an exec that
 * succeeds in a vfork child never returns, and its parent, which shares the
 * child's memory (and so this thread's guard), must find it free. */
#include <alloca.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interpose/env_restore.h"
#include "interpose/linux/capture_config.h"
#include "interpose/linux/capture_path.h"
#include "interpose/linux/exec_quiesce.h"
#include "interpose/linux/interposer.h"

extern char** environ;

SHIM_REAL_SLOT(execve);
SHIM_REAL_SLOT(execvpe);
SHIM_REAL_SLOT(fexecve);
SHIM_REAL_SLOT(execveat);
SHIM_REAL_SLOT(posix_spawn);
SHIM_REAL_SLOT(posix_spawnp);
SHIM_REAL_SLOT(system);
SHIM_REAL_SLOT(popen);

void shim_resolve_exec_family(void) {
  (void)SHIM_REAL(execve);
  (void)SHIM_REAL(execvpe);
  (void)SHIM_REAL(fexecve);
  (void)SHIM_REAL(execveat);
  (void)SHIM_REAL(posix_spawn);
  (void)SHIM_REAL(posix_spawnp);
}

/* Classifies the exec and returns the environment to pass it; NULL, with
 * errno set, when the exec must fail (a pending fd that survives it could
 * not be captured, under the "block" policy). `with_cloexec`: a
 * posix_spawn with file actions, which may dup2 a close-on-exec fd onto one
 * the new image keeps (shim_before_exec). */
static char* const* prepare(const char* entry, const char* what, char* const* envp, struct shim_env_frame* frame,
                            int with_cloexec) {
  struct shim_call c;
  if (!shim_begin(&c, entry)) return envp;
  shim_before_exec(&c, what, with_cloexec);
  /* system and popen run /bin/sh (whose own exec is checked in turn). */
  if (strcmp(entry, "system") != 0 && strcmp(entry, "popen") != 0) {
    int search = strcmp(entry, "execvp") == 0 || strcmp(entry, "execvpe") == 0 || strcmp(entry, "execlp") == 0 ||
                 strcmp(entry, "posix_spawnp") == 0;
    shim_alone_check_exec(what, search);
  }
  char* const* env = c.route == SHIM_ROUTE_FAIL ? NULL : shim_env_restore(envp, frame);
  shim_proceed(&c);
  if (c.route == SHIM_ROUTE_FAIL) errno = c.fail_errno;
  return env;
}

static int exec_env(const char* entry, const char* path, char* const argv[], char* const envp[]) {
  struct shim_env_frame frame;
  char* const* env = prepare(entry, path, envp, &frame, 0);
  if (env == NULL && envp != NULL) return -1;
  shim_exec_begin();
  int rc = (int)SHIM_REAL_OR_RAW(execve, (path, argv, env), SYS_execve, (long)path, (long)argv, (long)env);
  shim_exec_end();
  return rc;
}

static int execp_env(const char* entry, const char* file, char* const argv[], char* const envp[]) {
  struct shim_env_frame frame;
  char* const* env = prepare(entry, file, envp, &frame, 0);
  if (env == NULL && envp != NULL) return -1;
  __typeof__(&execvpe) real = SHIM_REAL(execvpe);
  if (real == NULL) {
    errno = ENOSYS;
    return -1;
  }
  shim_exec_begin();
  int rc = real(file, argv, env);
  shim_exec_end();
  return rc;
}

SHIM_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  return exec_env("execve", path, argv, envp);
}
SHIM_EXPORT int execv(const char* path, char* const argv[]) { return exec_env("execv", path, argv, environ); }
SHIM_EXPORT int execvp(const char* file, char* const argv[]) { return execp_env("execvp", file, argv, environ); }
SHIM_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  return execp_env("execvpe", file, argv, envp);
}

SHIM_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) {
  struct shim_env_frame frame;
  char* const* env = prepare("fexecve", NULL, envp, &frame, 0);
  if (env == NULL && envp != NULL) return -1;
  __typeof__(&fexecve) real = SHIM_REAL(fexecve);
  if (real == NULL) {
    errno = ENOSYS;
    return -1;
  }
  shim_exec_begin();
  int rc = real(fd, argv, env);
  shim_exec_end();
  return rc;
}

SHIM_EXPORT int execveat(int dirfd, const char* path, char* const argv[], char* const envp[], int flags) {
  struct shim_env_frame frame;
  char* const* env = prepare("execveat", path, envp, &frame, 0);
  if (env == NULL && envp != NULL) return -1;
  shim_exec_begin();
  int rc = (int)SHIM_REAL_OR_RAW(execveat, (dirfd, path, argv, env, flags), SYS_execveat, dirfd, (long)path,
                                 (long)argv, (long)env, flags);
  shim_exec_end();
  return rc;
}

/* execl, execlp, execle: the argument list gathered on the stack (alloca,
 * as glibc's own execl does: no bound but the stack's). */
#define SHIM_GATHER_ARGS(first, argv_out, envp_out)            \
  size_t argc_ = 1;                                             \
  va_list ap_;                                                  \
  va_start(ap_, first);                                         \
  while (va_arg(ap_, const char*) != NULL) ++argc_;             \
  va_end(ap_);                                                  \
  char** argv_out = alloca((argc_ + 1) * sizeof(char*));        \
  argv_out[0] = (char*)(first);                                 \
  va_start(ap_, first);                                         \
  for (size_t i_ = 1; i_ <= argc_; ++i_) argv_out[i_] = va_arg(ap_, char*); \
  char* const* envp_out = va_arg(ap_, char* const*);            \
  va_end(ap_);                                                  \
  (void)envp_out;

SHIM_EXPORT int execl(const char* path, const char* arg, ...) {
  SHIM_GATHER_ARGS(arg, argv, unused_envp);
  return exec_env("execl", path, argv, environ);
}

SHIM_EXPORT int execlp(const char* file, const char* arg, ...) {
  SHIM_GATHER_ARGS(arg, argv, unused_envp);
  return execp_env("execlp", file, argv, environ);
}

SHIM_EXPORT int execle(const char* path, const char* arg, ...) {
  SHIM_GATHER_ARGS(arg, argv, envp);
  return exec_env("execle", path, argv, envp);
}

SHIM_EXPORT int posix_spawn(pid_t* pid, const char* path, const posix_spawn_file_actions_t* actions,
                            const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) {
  struct shim_env_frame frame;
  char* const* env = prepare("posix_spawn", path, envp, &frame, actions != NULL);
  if (env == NULL && envp != NULL) return errno;
  __typeof__(&posix_spawn) real = SHIM_REAL(posix_spawn);
  return real != NULL ? real(pid, path, actions, attr, argv, env) : ENOSYS;
}

SHIM_EXPORT int posix_spawnp(pid_t* pid, const char* file, const posix_spawn_file_actions_t* actions,
                             const posix_spawnattr_t* attr, char* const argv[], char* const envp[]) {
  struct shim_env_frame frame;
  char* const* env = prepare("posix_spawnp", file, envp, &frame, actions != NULL);
  if (env == NULL && envp != NULL) return errno;
  __typeof__(&posix_spawnp) real = SHIM_REAL(posix_spawnp);
  return real != NULL ? real(pid, file, actions, attr, argv, env) : ENOSYS;
}

/* system and popen take no environment: they spawn /bin/sh with environ.
 * When environ lacks guard's variables, environ points at the restored
 * array for the length of the call and back after it. Another thread that
 * calls setenv meanwhile gets a fresh array of its own from glibc (it never
 * writes into this one), and its change is then undone by the restore: a
 * race only with a program that clears its environment, then calls system
 * while another thread sets variables. */
SHIM_EXPORT int system(const char* command) {
  __typeof__(&system) real = SHIM_REAL(system);
  if (real == NULL) {
    errno = ENOSYS;
    return -1;
  }
  struct shim_env_frame frame;
  char** before = environ;
  char* const* env = prepare("system", command, environ, &frame, 0);
  if (env == NULL && before != NULL) return -1;
  if (env != before) environ = (char**)env;
  int rc = real(command);
  int err = errno;
  if (environ == env && env != before) environ = before;
  errno = err;
  return rc;
}

SHIM_EXPORT FILE* popen(const char* command, const char* mode) {
  __typeof__(&popen) real = SHIM_REAL(popen);
  if (real == NULL) {
    errno = ENOSYS;
    return NULL;
  }
  struct shim_env_frame frame;
  char** before = environ;
  char* const* env = prepare("popen", command, environ, &frame, 0);
  if (env == NULL && before != NULL) return NULL;
  if (env != before) environ = (char**)env;
  FILE* f = real(command, mode);
  int err = errno;
  if (environ == (char**)env && env != before) environ = before;
  errno = err;
  return f;
}

/* A posix_spawn file action that opens a file: glibc's child makes that open
 * by its internal __open, which no interposition reaches. Under --mode auto
 * the tracer stops it in the child and captures it; under --mode preload
 * nothing would, so an action that can change a file of the root (write
 * access, O_CREAT or O_TRUNC, a path inside the root or unsure) is a miss
 * here, at the action's making, before any child exists: refused with EPERM
 * under "block" (the function returns its error number, as it does for its
 * own errors), let through under "allow", with the process's one line either
 * way (capture_alone.h). The path is placed from this process's cwd: a
 * chdir action added before it is not followed (it can only move the path
 * from outside the root to inside, never the reverse for an absolute one). */
SHIM_REAL_SLOT(posix_spawn_file_actions_addopen);

static int action_may_change(const char* path, int oflag) {
  if ((oflag & O_ACCMODE) == O_RDONLY && !(oflag & (O_CREAT | O_TRUNC))) return 0;
  if (!shim_config.alone) return 0;
  struct shim_path p;
  if (shim_path_resolve(&p, AT_FDCWD, path) != 0) return 1;
  enum shim_place place = shim_place_of(p.parent, p.abs, p.len);
  shim_path_close(&p);
  return place != SHIM_PLACE_OUTSIDE;
}

SHIM_EXPORT int posix_spawn_file_actions_addopen(posix_spawn_file_actions_t* actions, int fd, const char* path,
                                                 int oflag, mode_t mode) {
  struct shim_call c;
  if (shim_begin(&c, "posix_spawn_file_actions_addopen")) {
    if (action_may_change(path, oflag)) c.cls = SHIM_CAPTURE_AT_OPEN;  /* a change the shim leaves undone */
    shim_proceed(&c);
    if (c.route == SHIM_ROUTE_FAIL) return c.fail_errno;
  }
  __typeof__(&posix_spawn_file_actions_addopen) real = SHIM_REAL(posix_spawn_file_actions_addopen);
  return real != NULL ? real(actions, fd, path, oflag, mode) : ENOSYS;
}
