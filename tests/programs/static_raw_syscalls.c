// Changes files only through raw system calls (syscall(2), never the libc
// wrappers), linked -static: what Codex CLI, Go programs and Bun do, and what
// no LD_PRELOAD shim can see. Run in a tree prepared by the test
// (raw_syscall_capture_test.cc), it makes each call below once, in order,
// and exits 1 at the first one that does not behave as expected.
//
// Expected tree: sub/{inner.txt,gone.txt,x}, over-src, over-dst, y,
// emptydir/, mode.txt, trunc.txt, rdwr.txt, src.
//
// The last two steps go through the 32-bit (int 0x80) and x32 entry points,
// which guard's filter must refuse with ENOSYS: run outside guard, on a
// kernel with IA-32 emulation, the int 0x80 step succeeds and the program
// reports it.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static int step;

// Checks the result of step `what`: a non-negative result, or the errno the
// step expects (expect_errno != 0).
static long Check(const char* what, long rc, int expect_errno) {
  ++step;
  if (expect_errno == 0 && rc < 0) {
    fprintf(stderr, "static_raw_syscalls: step %d (%s) failed: %s\n", step, what, strerror(errno));
    exit(1);
  }
  if (expect_errno != 0 && (rc >= 0 || errno != expect_errno)) {
    fprintf(stderr, "static_raw_syscalls: step %d (%s) should have failed with %s, got %ld (%s)\n", step, what,
            strerror(expect_errno), rc, rc < 0 ? strerror(errno) : "success");
    exit(1);
  }
  return rc;
}

static void WriteAndClose(int fd, const char* text) {
  if (syscall(SYS_write, fd, text, strlen(text)) != (long)strlen(text)) {
    fprintf(stderr, "static_raw_syscalls: short write after step %d\n", step);
    exit(1);
  }
  syscall(SYS_close, fd);
}

// Whether this machine has the 32-bit `int 0x80` entry at all: a child
// makes an i386 getpid (20) through it, which faults (SIGSEGV) where the
// kernel has no IA-32 emulation; under guard the filter refuses it with
// ENOSYS, and the child exits normally either way.
static int Int80Exists(void) {
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    long rc;
    __asm__ volatile("int $0x80" : "=a"(rc) : "a"(20L) : "memory");
    (void)rc;
    _exit(0);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child) return 1;
  return !(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
}

int main(void) {
  long fd = Check("openat O_CREAT|O_EXCL new.txt",
                  syscall(SYS_openat, AT_FDCWD, "new.txt", O_WRONLY | O_CREAT | O_EXCL, 0640), 0);
  WriteAndClose((int)fd, "created by a raw openat\n");

  // Not a mutation: the filter lets a read-only open through.
  long dfd = Check("openat sub O_DIRECTORY", syscall(SYS_openat, AT_FDCWD, "sub", O_RDONLY | O_DIRECTORY), 0);

  fd = Check("openat(dirfd) O_TRUNC sub/inner.txt", syscall(SYS_openat, dfd, "inner.txt", O_WRONLY | O_TRUNC), 0);
  WriteAndClose((int)fd, "rewritten through a dirfd\n");
  fd = Check("openat(dirfd) ../dotdot.txt",
             syscall(SYS_openat, dfd, "../dotdot.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644), 0);
  WriteAndClose((int)fd, "dotdot\n");

  Check("renameat2 over-src over-dst", syscall(SYS_renameat2, AT_FDCWD, "over-src", AT_FDCWD, "over-dst", 0), 0);
  Check("renameat2 RENAME_EXCHANGE sub/x y",
        syscall(SYS_renameat2, dfd, "x", AT_FDCWD, "y", RENAME_EXCHANGE), 0);
  Check("renameat2 RENAME_NOREPLACE onto an existing file",
        syscall(SYS_renameat2, AT_FDCWD, "new.txt", AT_FDCWD, "y", RENAME_NOREPLACE), EEXIST);
  Check("unlinkat(dirfd) gone.txt", syscall(SYS_unlinkat, dfd, "gone.txt", 0), 0);
  Check("mkdirat(dirfd) newdir", syscall(SYS_mkdirat, dfd, "newdir", 0750), 0);
  Check("unlinkat AT_REMOVEDIR emptydir", syscall(SYS_unlinkat, AT_FDCWD, "emptydir", AT_REMOVEDIR), 0);
  Check("fchmodat mode.txt", syscall(SYS_fchmodat, AT_FDCWD, "mode.txt", 0600), 0);
  Check("truncate trunc.txt", syscall(SYS_truncate, "trunc.txt", 3), 0);

  fd = Check("openat O_RDWR rdwr.txt", syscall(SYS_openat, AT_FDCWD, "rdwr.txt", O_RDWR), 0);
  Check("ftruncate rdwr.txt", syscall(SYS_ftruncate, fd, 1), 0);
  Check("fchmod rdwr.txt", syscall(SYS_fchmod, fd, 0700), 0);
  syscall(SYS_close, fd);

  Check("linkat src sub/hard", syscall(SYS_linkat, AT_FDCWD, "src", dfd, "hard", 0), 0);
  Check("symlinkat sub/sym", syscall(SYS_symlinkat, "../src", dfd, "sym"), 0);
  Check("mknodat fifo", syscall(SYS_mknodat, AT_FDCWD, "fifo", S_IFIFO | 0600, 0), 0);

  struct open_how how;
  memset(&how, 0, sizeof how);
  how.flags = O_WRONLY | O_CREAT;
  how.mode = 0644;
  fd = Check("openat2 via-openat2", syscall(SYS_openat2, AT_FDCWD, "via-openat2", &how, sizeof how), 0);
  WriteAndClose((int)fd, "openat2\n");

  // The x86_64 syscalls without a directory fd.
  fd = Check("open legacy-open", syscall(SYS_open, "legacy-open", O_WRONLY | O_CREAT | O_TRUNC, 0644), 0);
  WriteAndClose((int)fd, "legacy open\n");
  fd = Check("creat legacy-creat", syscall(SYS_creat, "legacy-creat", 0644), 0);
  WriteAndClose((int)fd, "legacy creat\n");
  Check("rename legacy-creat legacy-renamed", syscall(SYS_rename, "legacy-creat", "legacy-renamed"), 0);
  Check("mkdir legacy-dir", syscall(SYS_mkdir, "legacy-dir", 0700), 0);
  Check("rmdir legacy-dir", syscall(SYS_rmdir, "legacy-dir"), 0);
  Check("link legacy-open legacy-link", syscall(SYS_link, "legacy-open", "legacy-link"), 0);
  Check("symlink legacy-sym", syscall(SYS_symlink, "legacy-open", "legacy-sym"), 0);
  Check("chmod legacy-open", syscall(SYS_chmod, "legacy-open", 0600), 0);
  Check("unlink legacy-link", syscall(SYS_unlink, "legacy-link"), 0);

  // Another ABI: the filter's architecture check must stop these. The path
  // is static data, so its address fits in the 32-bit register.
  static const char kInt80Path[] = "via-int80";
  static const char kX32Path[] = "via-x32";
  long rc;
  if (Int80Exists()) {
    __asm__ volatile("int $0x80" : "=a"(rc) : "a"(8L /* i386 creat */), "b"(kInt80Path), "c"(0644L) : "memory");
    errno = rc < 0 ? (int)-rc : 0;
    Check("int 0x80 creat", rc < 0 ? -1 : rc, ENOSYS);
  } else {
    // No 32-bit entry on this machine (IA-32 emulation off, or a
    // hypervisor without it): the instruction faults before any system
    // call, so there is nothing to get past guard that way.
    ++step;
    fprintf(stderr, "static_raw_syscalls: int 0x80 faults on this machine; step %d skipped\n", step);
  }
  __asm__ volatile("syscall"
                   : "=a"(rc)
                   : "a"(0x40000000L | SYS_creat /* x32 */), "D"(kX32Path), "S"(0644L)
                   : "rcx", "r11", "memory");
  errno = rc < 0 ? (int)-rc : 0;
  Check("x32 creat", rc < 0 ? -1 : rc, ENOSYS);

  syscall(SYS_close, dfd);
  printf("static_raw_syscalls: %d steps done\n", step);
  return 0;
}
