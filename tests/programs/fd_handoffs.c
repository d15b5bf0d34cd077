/* fd_handoffs MODE FILE TEXT: FILE opened for writing without O_TRUNC
 * through libc (the shim captures such an fd at its first change, not at
 * the open: docs/shim.md, "The lazy capture"), then TEXT written at offset 0
 * by a way other than the write family: each asks whether the pre-image is
 * taken before that change. Exits 0 when every call succeeded, else prints
 * the failing call and exits 1.
 *
 *   splice            TEXT into a pipe, spliced from it into FILE
 *   syscall-splice    the same by syscall(SYS_splice)
 *   aio-write         POSIX AIO: aio_write, then waits for it
 *   lio-listio        POSIX AIO: lio_listio(LIO_WAIT) of one LIO_WRITE
 *   io-submit         Linux AIO by syscall(SYS_io_setup, SYS_io_submit, ...)
 *   io-submit-entry   Linux AIO through the io_submit entry point libaio's
 *                     callers reach (found by dlsym(RTLD_DEFAULT)), which
 *                     with no libaio loaded makes the system call itself
 *   mmap-syscall      a MAP_SHARED mapping made by syscall(SYS_mmap), TEXT
 *                     copied into it, msync
 *   fcntl-dupfd       fcntl(F_DUPFD), TEXT written through the copy
 *   fcntl-dupfd-cloexec
 *                     fcntl(F_DUPFD_CLOEXEC) (Python's os.dup), the same
 *   syscall-dup       syscall(SYS_dup), the same
 *   syscall-dup3      syscall(SYS_dup3) onto a free number, the same
 *   syscall-fcntl     syscall(SYS_fcntl, F_DUPFD_CLOEXEC), the same
 *   scm-self          the fd sent over a socketpair (SCM_RIGHTS) to this
 *                     process, TEXT written through the fd received
 *   scm-child         a child forked before the open receives the fd
 *                     (sendmsg) and writes TEXT through it
 *   scm-sendmmsg      as scm-child, sent by sendmmsg
 *   spawn-dup2        FILE opened O_CLOEXEC; posix_spawn of /bin/sh with a
 *                     file action that dup2s it onto stdout, the shell
 *                     prints TEXT
 *   syscall-execve    FILE opened as fd 3 (not close-on-exec), then
 *                     syscall(SYS_execve) of /bin/sh, which prints TEXT >&3
 *   __write           glibc's public __write (GLIBC_2.2.5), the same
 *                     function as write under another name
 *   __pwrite64        glibc's __pwrite64
 *   __dup2            glibc's __dup2, TEXT written through the copy
 *   __fcntl           glibc's __fcntl(F_DUPFD), the same
 *   __open            glibc's public __open with O_WRONLY|O_TRUNC (FILE
 *                     then holds TEXT alone)
 *   vfork-exec        FILE opened (not close-on-exec); a vfork child execs
 *                     /bin/sh, which prints TEXT through it (dash's and
 *                     Python's subprocess children are vfork children)
 *   thread-own-fds    a thread that unshared its fd table
 *                     (unshare(CLONE_FILES)) opens FILE's directory and
 *                     FILE (O_WRONLY|O_TRUNC) by numbers the main thread
 *                     then holds on other directories, and writes TEXT
 *   spawn-open        posix_spawn of /bin/sh with file actions that open
 *                     /dev/null as its stderr and FILE (O_WRONLY|O_TRUNC)
 *                     as its stdout, the shell prints TEXT (FILE then holds
 *                     TEXT alone); an open action refused prints
 *                     "refused ERRNO" and exits 0 without spawning
 */
#define _GNU_SOURCE
#include <aio.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <libgen.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/programs/scm_rights.h"

extern char** environ;

static int fail(const char* what) {
  perror(what);
  return 1;
}

static int write_at_start(int fd, const char* text) {
  size_t n = strlen(text);
  return pwrite(fd, text, n, 0) == (ssize_t)n ? 0 : fail("pwrite through the copy");
}

static int by_splice(int fd, const char* text, int raw) {
  int p[2];
  if (pipe(p) != 0) return fail("pipe");
  size_t n = strlen(text);
  if (write(p[1], text, n) != (ssize_t)n) return fail("write to the pipe");
  loff_t off = 0;
  ssize_t got = raw ? syscall(SYS_splice, p[0], NULL, fd, &off, n, 0) : splice(p[0], NULL, fd, &off, n, 0);
  return got == (ssize_t)n ? 0 : fail("splice");
}

static int by_aio(int fd, const char* text, int list) {
  struct aiocb cb;
  memset(&cb, 0, sizeof cb);
  cb.aio_fildes = fd;
  cb.aio_buf = (void*)text;
  cb.aio_nbytes = strlen(text);
  cb.aio_lio_opcode = LIO_WRITE;
  if (list) {
    struct aiocb* one[1] = {&cb};
    if (lio_listio(LIO_WAIT, one, 1, NULL) != 0) return fail("lio_listio");
  } else {
    if (aio_write(&cb) != 0) return fail("aio_write");
    const struct aiocb* wait_for[1] = {&cb};
    while (aio_error(&cb) == EINPROGRESS) aio_suspend(wait_for, 1, NULL);
  }
  return aio_return(&cb) == (ssize_t)strlen(text) ? 0 : fail("aio_return");
}

typedef int (*io_submit_fn)(aio_context_t, long, struct iocb**);

static int by_io_submit(int fd, const char* text, int entry) {
  aio_context_t ctx = 0;
  if (syscall(SYS_io_setup, 4, &ctx) != 0) return fail("io_setup");
  struct iocb cb;
  memset(&cb, 0, sizeof cb);
  cb.aio_lio_opcode = IOCB_CMD_PWRITE;
  cb.aio_fildes = (uint32_t)fd;
  cb.aio_buf = (uint64_t)(uintptr_t)text;
  cb.aio_nbytes = strlen(text);
  struct iocb* one[1] = {&cb};
  long submitted;
  if (entry) {
    io_submit_fn fn = (io_submit_fn)dlsym(RTLD_DEFAULT, "io_submit");
    if (fn == NULL) {
      fprintf(stderr, "no io_submit entry point: %s\n", dlerror());
      return 1;
    }
    submitted = fn(ctx, 1, one);  // libaio's convention: -errno on failure
    if (submitted < 0) errno = (int)-submitted;
  } else {
    submitted = syscall(SYS_io_submit, ctx, 1, one);
  }
  if (submitted != 1) return fail("io_submit");
  struct io_event ev;
  if (syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL) != 1) return fail("io_getevents");
  if (ev.res != (int64_t)strlen(text)) return fprintf(stderr, "io_submit wrote %lld\n", (long long)ev.res), 1;
  return syscall(SYS_io_destroy, ctx) == 0 ? 0 : fail("io_destroy");
}

static int by_mmap_syscall(const char* file, const char* text) {
  int fd = open(file, O_RDWR);
  if (fd < 0) return fail(file);
  size_t n = strlen(text);
  char* m = (char*)syscall(SYS_mmap, NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) return fail("mmap");
  memcpy(m, text, n);
  if (msync(m, 4096, MS_SYNC) != 0) return fail("msync");
  return munmap(m, 4096) == 0 ? 0 : fail("munmap");
}

static int send_fd(int sock, int fd, int many) {
  return scm_send_fd(sock, fd, many) == 0 ? 0 : fail(many ? "sendmmsg" : "sendmsg");
}

static int by_scm_self(int fd, const char* text) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return fail("socketpair");
  if (send_fd(sv[0], fd, 0) != 0) return 1;
  int got = scm_receive_fd(sv[1]);
  if (got < 0) return fail("recvmsg");
  return write_at_start(got, text);
}

/* The child is forked before FILE is opened: the fd it writes through is
 * only the one it receives. */
static int by_scm_child(const char* file, const char* text, int many) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return fail("socketpair");
  pid_t child = fork();
  if (child < 0) return fail("fork");
  if (child == 0) {
    close(sv[0]);
    int got = scm_receive_fd(sv[1]);
    if (got < 0) _exit(fail("recvmsg"));
    _exit(write_at_start(got, text));
  }
  close(sv[1]);
  int fd = open(file, O_WRONLY);
  if (fd < 0) return fail(file);
  if (send_fd(sv[0], fd, many) != 0) return 1;
  int status = 0;
  if (waitpid(child, &status, 0) != child) return fail("waitpid");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

ssize_t __write(int fd, const void* buf, size_t n);
ssize_t __pwrite64(int fd, const void* buf, size_t n, off_t off);
int __dup2(int oldfd, int newfd);
int __fcntl(int fd, int cmd, ...);
int __open(const char* path, int flags, ...);

static int by_execve_syscall(const char* file, const char* text) {
  int fd = open(file, O_WRONLY);
  if (fd < 0) return fail(file);
  if (fd != 3 && (dup2(fd, 3) != 3 || close(fd) != 0)) return fail("dup2 onto 3");
  char* argv[] = {"/bin/sh", "-c", "printf %s \"$0\" >&3", (char*)text, NULL};
  syscall(SYS_execve, "/bin/sh", argv, environ);
  return fail("execve");
}

static int by_vfork_exec(const char* file, const char* text) {
  int fd = open(file, O_WRONLY);
  if (fd < 0) return fail(file);
  char script[64];
  snprintf(script, sizeof script, "printf %%s \"$0\" >&%d", fd);
  char* argv[] = {"/bin/sh", "-c", script, (char*)text, NULL};
  pid_t pid = vfork();
  if (pid < 0) return fail("vfork");
  if (pid == 0) {
    execve("/bin/sh", argv, environ);
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return fail("waitpid");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

struct own_fds {
  const char* file;
  const char* text;
  pthread_barrier_t unshared, taken;
  int result;
};

static void* own_fds_thread(void* arg) {
  struct own_fds* o = arg;
  if (unshare(CLONE_FILES) != 0) {
    o->result = fail("unshare");
    pthread_barrier_wait(&o->unshared);
    pthread_barrier_wait(&o->taken);
    return NULL;
  }
  pthread_barrier_wait(&o->unshared);
  pthread_barrier_wait(&o->taken);  // the main thread holds the same numbers on "/" now
  char copy[4096];
  snprintf(copy, sizeof copy, "%s", o->file);
  int dir = open(dirname(copy), O_RDONLY | O_DIRECTORY);
  int fd = open(o->file, O_WRONLY | O_TRUNC);
  if (dir < 0 || fd < 0) {
    o->result = fail("open in the thread");
    return NULL;
  }
  size_t n = strlen(o->text);
  o->result = write(fd, o->text, n) == (ssize_t)n ? 0 : fail("write in the thread");
  return NULL;
}

static int by_thread_own_fds(const char* file, const char* text) {
  struct own_fds o = {file, text, {{0}}, {{0}}, 1};
  pthread_barrier_init(&o.unshared, NULL, 2);
  pthread_barrier_init(&o.taken, NULL, 2);
  pthread_t t;
  if (pthread_create(&t, NULL, own_fds_thread, &o) != 0) return fail("pthread_create");
  pthread_barrier_wait(&o.unshared);
  // The numbers the thread's opens will get, on directories outside the
  // root in the process's own table.
  if (open("/", O_RDONLY | O_DIRECTORY) < 0 || open("/", O_RDONLY | O_DIRECTORY) < 0) return fail("open /");
  pthread_barrier_wait(&o.taken);
  pthread_join(t, NULL);
  return o.result;
}

/* posix_spawn of /bin/sh with `fa`, which prints TEXT on its stdout; its
 * exit status. */
static int spawn_printf(const posix_spawn_file_actions_t* fa, const char* text) {
  char* argv[] = {"/bin/sh", "-c", "printf %s \"$0\"", (char*)text, NULL};
  pid_t pid;
  int err = posix_spawn(&pid, "/bin/sh", fa, NULL, argv, environ);
  if (err != 0) {
    errno = err;
    return fail("posix_spawn");
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return fail("waitpid");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int by_spawn_open(const char* file, const char* text) {
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa) != 0) return fail("file actions");
  int err = posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  if (err != 0) {
    errno = err;
    return fail("addopen /dev/null");
  }
  err = posix_spawn_file_actions_addopen(&fa, 1, file, O_WRONLY | O_TRUNC, 0);
  if (err != 0) {
    printf("refused %d\n", err);
    return 0;
  }
  return spawn_printf(&fa, text);
}

static int by_spawn_dup2(const char* file, const char* text) {
  int fd = open(file, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return fail(file);
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa) != 0) return fail("file actions");
  if (posix_spawn_file_actions_adddup2(&fa, fd, 1) != 0) return fail("adddup2");
  return spawn_printf(&fa, text);
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s MODE FILE TEXT\n", argv[0]);
    return 2;
  }
  const char* mode = argv[1];
  const char* file = argv[2];
  const char* text = argv[3];
  if (strcmp(mode, "mmap-syscall") == 0) return by_mmap_syscall(file, text);
  if (strcmp(mode, "scm-child") == 0) return by_scm_child(file, text, 0);
  if (strcmp(mode, "scm-sendmmsg") == 0) return by_scm_child(file, text, 1);
  if (strcmp(mode, "spawn-dup2") == 0) return by_spawn_dup2(file, text);
  if (strcmp(mode, "syscall-execve") == 0) return by_execve_syscall(file, text);
  if (strcmp(mode, "spawn-open") == 0) return by_spawn_open(file, text);
  if (strcmp(mode, "vfork-exec") == 0) return by_vfork_exec(file, text);
  if (strcmp(mode, "thread-own-fds") == 0) return by_thread_own_fds(file, text);
  if (strcmp(mode, "__open") == 0) {
    int fd = __open(file, O_WRONLY | O_TRUNC);
    if (fd < 0) return fail("__open");
    return write_at_start(fd, text);
  }
  int fd = open(file, O_WRONLY);
  if (fd < 0) return fail(file);
  if (strcmp(mode, "splice") == 0) return by_splice(fd, text, 0);
  if (strcmp(mode, "syscall-splice") == 0) return by_splice(fd, text, 1);
  if (strcmp(mode, "aio-write") == 0) return by_aio(fd, text, 0);
  if (strcmp(mode, "lio-listio") == 0) return by_aio(fd, text, 1);
  if (strcmp(mode, "io-submit") == 0) return by_io_submit(fd, text, 0);
  if (strcmp(mode, "io-submit-entry") == 0) return by_io_submit(fd, text, 1);
  if (strcmp(mode, "scm-self") == 0) return by_scm_self(fd, text);
  if (strcmp(mode, "__write") == 0) {
    return __write(fd, text, strlen(text)) == (ssize_t)strlen(text) ? 0 : fail("__write");
  }
  if (strcmp(mode, "__pwrite64") == 0) {
    return __pwrite64(fd, text, strlen(text), 0) == (ssize_t)strlen(text) ? 0 : fail("__pwrite64");
  }
  int copy = -1;
  if (strcmp(mode, "fcntl-dupfd") == 0) copy = fcntl(fd, F_DUPFD, 10);
  else if (strcmp(mode, "fcntl-dupfd-cloexec") == 0) copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  else if (strcmp(mode, "syscall-dup") == 0) copy = (int)syscall(SYS_dup, fd);
  else if (strcmp(mode, "syscall-dup3") == 0) copy = (int)syscall(SYS_dup3, fd, 100, O_CLOEXEC);
  else if (strcmp(mode, "syscall-fcntl") == 0) copy = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 0);
  else if (strcmp(mode, "__dup2") == 0) copy = __dup2(fd, 50);
  else if (strcmp(mode, "__fcntl") == 0) copy = __fcntl(fd, F_DUPFD, 60);
  else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  if (copy < 0) return fail(mode);
  return write_at_start(copy, text);
}
