// A program written against guard, linked -static (no shim): it maps its
// own copy of the shim's syscall stub at the stub's fixed address, so that
// its calls from there pass the seccomp filter unstopped (docs/security.md,
// "The shim's syscall stub"), and aims them at guard's state directory
// ($GUARD_STATE_DIR): it appends to, truncates and deletes the session's
// journal, renames the state directory, unmounts it, writes guard's
// configuration ($XDG_CONFIG_HOME/guard/config.toml), and tries it through
// /proc/PID/root of every process whose mount namespace is another. One
// line per attempt, "WHAT: ERRNO-NAME" or "WHAT: DONE"; exits 0 when every
// attempt failed, 1 when one succeeded, 2 on a setup error.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/syscall_stub_abi.h"
#include "common/shim_interface.h"

typedef long (*StubFn)(long, long, long, long, long, long, long);
static StubFn stub;
static int done_any;

static void Report(const char* what, long rc) {
  if (rc >= 0) {
    printf("%s: DONE\n", what);
    done_any = 1;
  } else {
    printf("%s: %s\n", what, strerrorname_np((int)-rc));
  }
}

static long Call(long nr, long a, long b, long c, long d) { return stub(nr, a, b, c, d, 0, 0); }

int main(void) {
  const char* state = getenv(GUARD_ENV_STATE_DIR);
  const char* session = getenv(GUARD_ENV_SESSION);
  if (state == NULL || session == NULL) return 2;
  void* want = (void*)(unsigned long)GUARD_STUB_PAGE_ADDRESS;
  void* got = mmap(want, GUARD_STUB_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                   -1, 0);
  if (got != want) return 2;
  static const unsigned char code[] = GUARD_STUB_CODE;
  memset(got, 0xcc, GUARD_STUB_PAGE_SIZE);
  memcpy(got, code, sizeof code);
  if (mprotect(got, GUARD_STUB_PAGE_SIZE, PROT_READ | PROT_EXEC) != 0) return 2;
  stub = (StubFn)got;

  char journal[4096], moved[4096];
  snprintf(journal, sizeof journal, "%s/sessions/%s/journal", state, session);
  snprintf(moved, sizeof moved, "%s.moved", state);
  long fd = Call(SYS_openat, AT_FDCWD, (long)journal, O_WRONLY | O_APPEND, 0);
  Report("append to the journal", fd);
  if (fd >= 0) close((int)fd);
  Report("truncate the journal", Call(SYS_truncate, (long)journal, 0, 0, 0));
  Report("delete the journal", Call(SYS_unlinkat, AT_FDCWD, (long)journal, 0, 0));
  Report("rename the state directory", Call(SYS_renameat, AT_FDCWD, (long)state, AT_FDCWD, (long)moved));
  Report("unmount the state directory", Call(SYS_umount2, (long)state, MNT_DETACH, 0, 0));
  Report("remount it writable", Call(SYS_mount, 0, (long)state, 0, MS_REMOUNT | MS_BIND));
  // guard's configuration: its retention settings decide what gc removes.
  const char* xdg = getenv("XDG_CONFIG_HOME");
  if (xdg != NULL) {
    char config[4096];
    snprintf(config, sizeof config, "%s/guard/config.toml", xdg);
    long cfd = Call(SYS_openat, AT_FDCWD, (long)config, O_WRONLY | O_CREAT | O_APPEND, 0600);
    Report("write the configuration", cfd);
    if (cfd >= 0) close((int)cfd);
  }

  // Through another mount namespace's root: the supervisor's, anyone's.
  char own[256] = "";
  ssize_t n = readlink("/proc/self/ns/mnt", own, sizeof own - 1);
  if (n > 0) own[n] = '\0';
  DIR* proc = opendir("/proc");
  if (proc == NULL) return 2;
  int tried = 0;
  struct dirent* e;
  while ((e = readdir(proc)) != NULL) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char link[64], ns[256];
    snprintf(link, sizeof link, "/proc/%s/ns/mnt", e->d_name);
    ssize_t m = readlink(link, ns, sizeof ns - 1);
    if (m > 0) ns[m] = '\0';
    if (m > 0 && strcmp(ns, own) == 0) continue;  // the session's own: the read-only bind
    char path[4200];
    snprintf(path, sizeof path, "/proc/%s/root%s", e->d_name, journal);
    long pfd = Call(SYS_openat, AT_FDCWD, (long)path, O_WRONLY | O_APPEND, 0);
    if (pfd >= 0) {
      printf("append through /proc/%s/root: DONE\n", e->d_name);
      done_any = 1;
      close((int)pfd);
    } else if (pfd != -ENOENT && pfd != -ESRCH) {
      ++tried;
    }
  }
  closedir(proc);
  printf("other namespaces tried: %d\n", tried);
  return done_any ? 1 : 0;
}
