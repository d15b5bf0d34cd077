// Calls every entry point the preload shim interposes, once each, in the
// current directory (a fresh one the test made), and exits 1 at the first
// that does not behave as without the shim. The test (shim_preload_test.cc)
// runs it with LD_PRELOAD of the shim and GUARD_SHIM_TEST_FD=2, and reads
// the shim's line for each call from stderr.
#define _GNU_SOURCE
#include <aio.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/fs.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "tests/programs/scm_rights.h"

int __open_2(const char* path, int flags);
int __open64_2(const char* path, int flags);
int __openat_2(int dirfd, const char* path, int flags);
int __openat64_2(int dirfd, const char* path, int flags);

int __dprintf_chk(int fd, int flag, const char* format, ...);
int __vdprintf_chk(int fd, int flag, const char* format, va_list ap);

static int CallVdprintf(int chk, int fd, const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  int n = chk ? __vdprintf_chk(fd, 1, format, ap) : vdprintf(fd, format, ap);
  va_end(ap);
  return n;
}

static void Check(const char* what, long rc) {
  if (rc < 0) {
    fprintf(stderr, "shim_entry_points: %s failed: %s\n", what, strerror(errno));
    exit(1);
  }
}

/* `fd` sent over the socketpair `sv` by sendmsg (or sendmmsg), the copy
 * received closed. */
static long SendFd(const int* sv, int fd, int many) {
  if (scm_send_fd(sv[0], fd, many) != 0) return -1;
  int got = scm_receive_fd(sv[1]);
  return got < 0 ? -1 : close(got);
}

/* One write queued by POSIX AIO (aio_write, aio_write64, lio_listio,
 * lio_listio64), waited for. */
static long AioWrite(const char* n, int fd) {
  struct aiocb64 cb;
  memset(&cb, 0, sizeof cb);
  cb.aio_fildes = fd;
  cb.aio_buf = (void*)"a";
  cb.aio_nbytes = 1;
  cb.aio_lio_opcode = LIO_WRITE;
  if (!strcmp(n, "lio_listio") || !strcmp(n, "lio_listio64")) {
    struct aiocb64* one[1] = {&cb};
    if ((!strcmp(n, "lio_listio") ? lio_listio(LIO_WAIT, (struct aiocb**)one, 1, NULL)
                                  : lio_listio64(LIO_WAIT, one, 1, NULL)) != 0) {
      return -1;
    }
  } else {
    if ((!strcmp(n, "aio_write") ? aio_write((struct aiocb*)&cb) : aio_write64(&cb)) != 0) return -1;
    const struct aiocb64* wait_for[1] = {&cb};
    while (aio_error64(&cb) == EINPROGRESS) aio_suspend64(wait_for, 1, NULL);
  }
  return aio_return64(&cb) == 1 ? 0 : -1;
}

/* One write by Linux AIO through the io_submit entry point libaio's callers
 * reach (the shim's, with no libaio loaded). */
static long IoSubmitWrite(int fd) {
  typedef int (*io_submit_fn)(aio_context_t, long, struct iocb**);
  io_submit_fn submit = (io_submit_fn)dlsym(RTLD_DEFAULT, "io_submit");
  aio_context_t ctx = 0;
  if (submit == NULL || syscall(SYS_io_setup, 1, &ctx) != 0) return -1;
  struct iocb cb;
  memset(&cb, 0, sizeof cb);
  cb.aio_lio_opcode = IOCB_CMD_PWRITE;
  cb.aio_fildes = (uint32_t)fd;
  cb.aio_buf = (uint64_t)(uintptr_t) "i";
  cb.aio_nbytes = 1;
  struct iocb* one[1] = {&cb};
  struct io_event ev;
  if (submit(ctx, 1, one) != 1 || syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL) != 1) return -1;
  return syscall(SYS_io_destroy, ctx);
}

static void Make(const char* path) {
  int fd = syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  Check(path, fd);
  Check("write", syscall(SYS_write, fd, "content\n", 8));
  syscall(SYS_close, fd);
}

int main(void) {
  Make("f");
  // The open family: the class each flag set gets.
  Check("open", close(open("f", O_RDONLY)));
  Check("open64", close(open64("f", O_RDWR)));
  Check("openat", close(openat(AT_FDCWD, "f", O_WRONLY | O_TRUNC)));
  Check("openat64", close(openat64(AT_FDCWD, "new-excl", O_WRONLY | O_CREAT | O_EXCL, 0644)));
  Check("__open_2", close(__open_2("f", O_RDONLY)));
  Check("__open64_2", close(__open64_2("f", O_WRONLY)));
  Check("__openat_2", close(__openat_2(AT_FDCWD, "f", O_RDWR | O_TRUNC)));
  Check("__openat64_2", close(__openat64_2(AT_FDCWD, "f", O_RDONLY)));
  Check("creat", close(creat("created", 0644)));
  Check("creat64", close(creat64("created", 0644)));
  FILE* s = fopen("f", "r+");
  Check("fopen", s ? 0 : -1);
  fclose(s);
  s = fopen64("fopened", "w");
  Check("fopen64", s ? 0 : -1);
  s = freopen("f", "a", s);
  Check("freopen", s ? 0 : -1);
  s = freopen64("f", "r", s);
  Check("freopen64", s ? 0 : -1);
  fclose(s);
  char t1[] = "tmpXXXXXX", t2[] = "tmpXXXXXX", t3[] = "tmpXXXXXX", t4[] = "tmpXXXXXX";
  char t5[] = "tmpXXXXXX.c", t6[] = "tmpXXXXXX.c", t7[] = "tmpXXXXXX.c", t8[] = "tmpXXXXXX.c";
  char d1[] = "dirXXXXXX";
  Check("mkstemp", close(mkstemp(t1)));
  Check("mkstemp64", close(mkstemp64(t2)));
  Check("mkostemp", close(mkostemp(t3, O_CLOEXEC)));
  Check("mkostemp64", close(mkostemp64(t4, O_CLOEXEC)));
  Check("mkstemps", close(mkstemps(t5, 2)));
  Check("mkstemps64", close(mkstemps64(t6, 2)));
  Check("mkostemps", close(mkostemps(t7, 2, 0)));
  Check("mkostemps64", close(mkostemps64(t8, 2, 0)));
  Check("mkdtemp", mkdtemp(d1) ? 0 : -1);
  // Names.
  Make("r1");
  Check("rename", rename("r1", "r2"));
  Check("renameat", renameat(AT_FDCWD, "r2", AT_FDCWD, "r3"));
  Check("renameat2", renameat2(AT_FDCWD, "r3", AT_FDCWD, "f", RENAME_EXCHANGE));
  Check("unlink", unlink("r3"));
  Make("u");
  Check("unlinkat", unlinkat(AT_FDCWD, "u", 0));
  Make("u");
  Check("remove", remove("u"));
  Check("mkdir", mkdir("d", 0755));
  Check("rmdir", rmdir("d"));
  Check("mkdirat", mkdirat(AT_FDCWD, "d", 0755));
  Check("link", link("f", "l1"));
  Check("linkat", linkat(AT_FDCWD, "f", AT_FDCWD, "l2", 0));
  Check("symlink", symlink("f", "s1"));
  Check("symlinkat", symlinkat("f", AT_FDCWD, "s2"));
  Check("mknod", mknod("p1", S_IFIFO | 0600, 0));
  Check("mknodat", mknodat(AT_FDCWD, "p2", S_IFIFO | 0600, 0));
  Check("mkfifo", mkfifo("p3", 0600));
  Check("mkfifoat", mkfifoat(AT_FDCWD, "p4", 0600));
  Check("truncate", truncate("f", 4));
  Check("truncate64", truncate64("f", 3));
  // Metadata.
  Check("chmod", chmod("f", 0640));
  Check("lchmod", lchmod("f", 0640) == 0 || errno == EOPNOTSUPP ? 0 : -1);
  Check("fchmodat", fchmodat(AT_FDCWD, "f", 0644, 0));
  Check("chown", chown("f", -1, -1));
  Check("lchown", lchown("s1", -1, -1));
  Check("fchownat", fchownat(AT_FDCWD, "f", -1, -1, 0));
  // Not an ACL: nothing to capture (user xattrs may be unsupported here).
  int xr = setxattr("f", "user.guard", "v", 1, 0);
  Check("setxattr", xr == 0 || errno == ENOTSUP ? 0 : -1);
  errno = 0;
  lsetxattr("f", "system.posix_acl_access", "", 0, 0);  // refused (EINVAL): still classified
  // Through fds: the lazy capture. One O_RDWR open, then each change.
  int fd = open("f", O_RDWR);
  Check("open O_RDWR", fd);
  Check("fchmod", fchmod(fd, 0644));
  Check("fchown", fchown(fd, -1, -1));
  fsetxattr(fd, "system.posix_acl_default", "", 0, 0);  // refused on a file: still classified
  Check("write", write(fd, "w", 1));  // the first change: captured here
  Check("pwrite", pwrite(fd, "p", 1, 0));  // nothing pending any more: silent
  close(fd);
  struct iovec iov = {(void*)"v", 1};
  const struct {
    const char* name;
  } lazy[] = {{"pwrite"}, {"pwrite64"}, {"writev"}, {"pwritev"}, {"pwritev64"}, {"pwritev2"}, {"pwritev64v2"},
              {"mmap"}, {"mmap64"}, {"ftruncate"}, {"ftruncate64"}, {"fallocate"}, {"fallocate64"},
              {"posix_fallocate"}, {"posix_fallocate64"}, {"copy_file_range"}, {"sendfile"}, {"sendfile64"},
              {"dup"}, {"dup2"}, {"dup3"}, {"syscall-write"}, {"fdopen"}, {"dprintf"}, {"vdprintf"},
              {"__dprintf_chk"}, {"__vdprintf_chk"}, {"splice"}, {"ioctl"}, {"fcntl"}, {"fcntl64"},
              {"sendmsg"}, {"sendmmsg"}, {"aio_write"}, {"aio_write64"}, {"lio_listio"}, {"lio_listio64"},
              {"io_submit"}};
  int src = open("created", O_RDONLY);
  Check("open src", src);
  int sv[2];
  Check("socketpair", socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
  int pipe_fds[2];
  Check("pipe", pipe(pipe_fds));
  for (size_t i = 0; i < sizeof lazy / sizeof lazy[0]; ++i) {
    const char* n = lazy[i].name;
    fd = open("f", O_RDWR);  // pending again: each call below is a first change
    Check("open O_RDWR", fd);
    long rc = 0;
    if (!strcmp(n, "pwrite")) rc = pwrite(fd, "p", 1, 0);
    if (!strcmp(n, "pwrite64")) rc = pwrite64(fd, "p", 1, 0);
    if (!strcmp(n, "writev")) rc = writev(fd, &iov, 1);
    if (!strcmp(n, "pwritev")) rc = pwritev(fd, &iov, 1, 0);
    if (!strcmp(n, "pwritev64")) rc = pwritev64(fd, &iov, 1, 0);
    if (!strcmp(n, "pwritev2")) rc = pwritev2(fd, &iov, 1, 0, 0);
    if (!strcmp(n, "pwritev64v2")) rc = pwritev64v2(fd, &iov, 1, 0, 0);
    if (!strcmp(n, "mmap") || !strcmp(n, "mmap64")) {
      void* m = !strcmp(n, "mmap") ? mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                                   : mmap64(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      rc = m == MAP_FAILED ? -1 : munmap(m, 4096);
    }
    if (!strcmp(n, "ftruncate")) rc = ftruncate(fd, 3);
    if (!strcmp(n, "ftruncate64")) rc = ftruncate64(fd, 3);
    if (!strcmp(n, "fallocate")) rc = fallocate(fd, 0, 0, 8) == 0 || errno == EOPNOTSUPP ? 0 : -1;
    if (!strcmp(n, "fallocate64")) rc = fallocate64(fd, 0, 0, 8) == 0 || errno == EOPNOTSUPP ? 0 : -1;
    if (!strcmp(n, "posix_fallocate")) rc = -posix_fallocate(fd, 0, 8);
    if (!strcmp(n, "posix_fallocate64")) rc = -posix_fallocate64(fd, 0, 8);
    if (!strcmp(n, "copy_file_range")) rc = copy_file_range(src, NULL, fd, NULL, 1, 0);
    if (!strcmp(n, "sendfile")) rc = sendfile(fd, src, &(off_t){0}, 1);
    if (!strcmp(n, "sendfile64")) rc = sendfile64(fd, src, &(off_t){0}, 1);
    if (!strcmp(n, "dup")) rc = close(dup(fd));
    if (!strcmp(n, "dup2")) rc = dup2(fd, 100) == 100 ? close(100) : -1;
    if (!strcmp(n, "dup3")) rc = dup3(fd, 101, O_CLOEXEC) == 101 ? close(101) : -1;
    if (!strcmp(n, "syscall-write")) rc = syscall(SYS_write, fd, "s", 1);
    if (!strcmp(n, "splice")) {
      rc = write(pipe_fds[1], "s", 1) == 1 ? splice(pipe_fds[0], NULL, fd, &(loff_t){0}, 1, 0) : -1;
    }
    // A reflink clone into the file: refused where the filesystem has none
    // (ext4, tmpfs), still classified.
    if (!strcmp(n, "ioctl")) rc = ioctl(fd, FICLONE, src) == 0 || errno != EBADF ? 0 : -1;
    if (!strcmp(n, "fcntl")) rc = close(fcntl(fd, F_DUPFD_CLOEXEC, 0));
    if (!strcmp(n, "fcntl64")) rc = close(fcntl64(fd, F_DUPFD, 0));
    if (!strcmp(n, "sendmsg")) rc = SendFd(sv, fd, 0);
    if (!strcmp(n, "sendmmsg")) rc = SendFd(sv, fd, 1);
    if (!strncmp(n, "aio_write", 9) || !strncmp(n, "lio_listio", 10)) rc = AioWrite(n, fd);
    if (!strcmp(n, "io_submit")) rc = IoSubmitWrite(fd);
    if (!strcmp(n, "dprintf")) rc = dprintf(fd, "%s", "d");
    if (!strcmp(n, "vdprintf")) rc = CallVdprintf(0, fd, "%s", "v");
    if (!strcmp(n, "__dprintf_chk")) rc = __dprintf_chk(fd, 1, "%s", "c");
    if (!strcmp(n, "__vdprintf_chk")) rc = CallVdprintf(1, fd, "%s", "k");
    if (!strcmp(n, "fdopen")) {
      // A stream's writes are glibc's own: the stream closes the fd.
      FILE* st = fdopen(fd, "r+");
      Check(n, st != NULL && fputs("s", st) >= 0 && fclose(st) == 0 ? 0 : -1);
      continue;
    }
    Check(n, rc);
    Check("close", close(fd));
  }
  // syscall() for the numbers the filter stops.
  Make("sc");
  Check("syscall openat", close(syscall(SYS_openat, AT_FDCWD, "sc", O_WRONLY | O_TRUNC)));
  Check("syscall open", close(syscall(SYS_open, "sc-new", O_WRONLY | O_CREAT | O_EXCL, 0644)));
  Check("syscall rename", syscall(SYS_rename, "sc-new", "sc-renamed"));
  Check("syscall unlink", syscall(SYS_unlink, "sc-renamed"));
  Check("syscall mkdir", syscall(SYS_mkdir, "sc-dir", 0755));
  Check("syscall rmdir", syscall(SYS_rmdir, "sc-dir"));
  Check("syscall chmod", syscall(SYS_chmod, "sc", 0600));
  Check("syscall getpid", syscall(SYS_getpid));
  return 0;
}
