#include "interpose/linux/syscall_stub.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "common/syscall_stub_abi.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

typedef long (*stub_fn)(long, long, long, long, long, long, long);

static _Atomic int ready;
/* Set by shim_stub_leave: the stub is never used again in this image. */
static _Atomic int left;

int shim_stub_map(void) {
  if (atomic_load_explicit(&left, memory_order_acquire)) return EPERM;
  if (shim_stub_ready()) return 0;
  void* want = (void*)(unsigned long)GUARD_STUB_PAGE_ADDRESS;
  /* Writable only while it is filled, then read+exec for the rest of the
   * process's life. NOREPLACE: never over a mapping of the host's (a kernel
   * older than 4.17 takes the address as a hint, checked below). */
  long got = shim_raw_syscall(SYS_mmap, (long)want, GUARD_STUB_PAGE_SIZE, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (got < 0 && got >= -4095) return (int)-got;
  if ((void*)got != want) {
    shim_raw_syscall(SYS_munmap, got, GUARD_STUB_PAGE_SIZE, 0, 0, 0, 0);
    return EEXIST;
  }
  static const unsigned char code[] = GUARD_STUB_CODE;
  memset(want, 0xcc, GUARD_STUB_PAGE_SIZE); /* int3 everywhere else */
  memcpy(want, code, sizeof code);
  long rc = shim_raw_syscall(SYS_mprotect, (long)want, GUARD_STUB_PAGE_SIZE, PROT_READ | PROT_EXEC, 0, 0, 0);
  if (rc != 0) {
    shim_raw_syscall(SYS_munmap, (long)want, GUARD_STUB_PAGE_SIZE, 0, 0, 0, 0);
    return (int)-rc;
  }
  /* Release: a thread that sees ready sees the code (and mprotect's
   * effect, which the kernel made before the call returned). */
  atomic_store_explicit(&ready, 1, memory_order_release);
  return 0;
}

int shim_stub_ready(void) { return atomic_load_explicit(&ready, memory_order_acquire); }

void shim_stub_leave(void) {
  /* Release, both: a thread that sees ready at 0 goes raw; the page stays
   * mapped (a caller past its check may still be in it), so a later
   * shim_stub_map cannot map it again either. */
  atomic_store_explicit(&left, 1, memory_order_release);
  atomic_store_explicit(&ready, 0, memory_order_release);
}

long shim_stub_syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6) {
  stub_fn stub = (stub_fn)(unsigned long)GUARD_STUB_PAGE_ADDRESS;
  return stub(nr, a1, a2, a3, a4, a5, a6);
}

long shim_raw_syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6) {
  long rc;
  register long r10 __asm__("r10") = a4;
  register long r8 __asm__("r8") = a5;
  register long r9 __asm__("r9") = a6;
  __asm__ volatile("syscall"
                   : "=a"(rc)
                   : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return rc;
}

long shim_own_syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6) {
  return shim_stub_ready() ? shim_stub_syscall(nr, a1, a2, a3, a4, a5, a6)
                           : shim_raw_syscall(nr, a1, a2, a3, a4, a5, a6);
}

long shim_errno_result(long raw) {
  if (raw < 0 && raw >= -4095) {
    errno = (int)-raw;
    return -1;
  }
  return raw;
}
