/* raw_syscall: a system call made by the instruction itself, which no
 * interposition (the shim's syscall() included) sees: only the tracer. The
 * result as the kernel gives it: a negative errno on failure. */
#ifndef GUARD_TESTS_PROGRAMS_RAW_SYSCALL_H_
#define GUARD_TESTS_PROGRAMS_RAW_SYSCALL_H_

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline long raw_syscall4(long nr, long a1, long a2, long a3, long a4) {
#if defined(__x86_64__)
  long ret;
  register long r10 __asm__("r10") = a4;
  __asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10) : "rcx", "r11", "memory");
  return ret;
#elif defined(__aarch64__)
  register long x8 __asm__("x8") = nr;
  register long x0 __asm__("x0") = a1;
  register long x1 __asm__("x1") = a2;
  register long x2 __asm__("x2") = a3;
  register long x3 __asm__("x3") = a4;
  __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
  return x0;
#else
  long r = syscall(nr, a1, a2, a3, a4);
  return r < 0 ? -errno : r;
#endif
}

#endif /* GUARD_TESTS_PROGRAMS_RAW_SYSCALL_H_ */
