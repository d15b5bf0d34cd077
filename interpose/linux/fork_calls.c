/* The entry points that start a child the atfork handler does not reach,
 * or one that shares this memory: vfork, clone (CLONE_VM without
 * CLONE_THREAD), _Fork, and syscall() of the fork and clone numbers. Each
 * tells shim_process.h to stop keeping the pid (shim_process_pid_uncached)
 * before the child can run, so that a child never takes its parent's pid
 * for its own; a fork() child is refreshed by the atfork handler instead
 * (shim_init.c). Nothing is captured here.
 *
 * vfork and clone are jumped to, not called: a vfork child returns through
 * its parent's stack, so no frame of the shim may stand between the host
 * and libc's function. The few instructions below ask fork_prepare (on the
 * parent's stack, before the child exists) for libc's function and jump to
 * it with the host's arguments and return address untouched. */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "interpose/linux/interposer.h"
#include "interpose/shim_process.h"

#ifndef CLONE_VM
#define CLONE_VM 0x00000100
#endif
#ifndef CLONE_THREAD
#define CLONE_THREAD 0x00010000
#endif

static _Atomic(void*) real_vfork;
static _Atomic(void*) real_clone;

/* libc's vfork, the pid no longer kept: the assembly below jumps to it.
 * NULL when libc's cannot be found (before the loader can answer): the
 * assembly then makes the system call as libc's own vfork does. */
__attribute__((visibility("hidden"), used)) void* shim_vfork_prepare(void) {
  shim_process_pid_uncached();
  return shim_real(&real_vfork, "vfork");
}

/* libc's clone; the pid no longer kept when the child shares this memory
 * but is no thread of this process. NULL: clone fails with ENOSYS. */
__attribute__((visibility("hidden"), used)) void* shim_clone_prepare(long flags) {
  if ((flags & CLONE_VM) && !(flags & CLONE_THREAD)) shim_process_pid_uncached();
  return shim_real(&real_clone, "clone");
}

/* A failed raw vfork (-errno in rc), or a clone with no libc function:
 * syscall()'s convention. Only the parent gets here (no child exists). */
__attribute__((visibility("hidden"), used)) long shim_fork_failed(long rc) {
  errno = (int)-rc;
  return -1;
}

__asm__(
    ".text\n"
    ".globl vfork\n"
    ".type vfork, @function\n"
    "vfork:\n"
    "  .cfi_startproc\n"
    "  sub $8, %rsp\n"
    "  .cfi_adjust_cfa_offset 8\n"
    "  call shim_vfork_prepare\n"
    "  add $8, %rsp\n"
    "  .cfi_adjust_cfa_offset -8\n"
    "  test %rax, %rax\n"
    "  jz 1f\n"
    "  jmp *%rax\n"
    "1:\n"
    /* As glibc's: the return address off the stack while the child runs
     * on it, back before returning. */
    "  pop %rdi\n"
    "  .cfi_adjust_cfa_offset -8\n"
    "  mov $" "58" ", %eax\n"
    "  syscall\n"
    "  push %rdi\n"
    "  .cfi_adjust_cfa_offset 8\n"
    "  cmp $-4095, %rax\n"
    "  jae 2f\n"
    "  ret\n"
    "2:\n"
    "  mov %rax, %rdi\n"
    "  jmp shim_fork_failed\n"
    "  .cfi_endproc\n"
    ".size vfork, .-vfork\n"
    ".globl clone\n"
    ".type clone, @function\n"
    "clone:\n"
    "  .cfi_startproc\n"
    "  push %rdi\n"
    "  push %rsi\n"
    "  push %rdx\n"
    "  push %rcx\n"
    "  push %r8\n"
    "  push %r9\n"
    "  sub $8, %rsp\n"
    "  .cfi_adjust_cfa_offset 56\n"
    "  mov %rdx, %rdi\n"
    "  call shim_clone_prepare\n"
    "  mov %rax, %r11\n"
    "  add $8, %rsp\n"
    "  pop %r9\n"
    "  pop %r8\n"
    "  pop %rcx\n"
    "  pop %rdx\n"
    "  pop %rsi\n"
    "  pop %rdi\n"
    "  .cfi_adjust_cfa_offset -56\n"
    "  test %r11, %r11\n"
    "  jz 1f\n"
    "  jmp *%r11\n"
    "1:\n"
    "  mov $-" "38" ", %rdi\n" /* ENOSYS */
    "  jmp shim_fork_failed\n"
    "  .cfi_endproc\n"
    ".size clone, .-clone\n");

_Static_assert(SYS_vfork == 58, "the vfork number in the assembly above");
_Static_assert(ENOSYS == 38, "the ENOSYS in the assembly above");

SHIM_REAL_SLOT(_Fork);

/* glibc's fork without the atfork handlers: the child forgets the pid its
 * parent kept (its memory is its own, so the parent keeps it). */
SHIM_EXPORT pid_t _Fork(void) {
  __typeof__(&_Fork) real = SHIM_REAL(_Fork);
  if (real == NULL) {
    errno = ENOSYS;
    return -1;
  }
  pid_t pid = real();
  if (pid == 0) shim_process_pid_uncached();
  return pid;
}

void shim_resolve_fork_family(void) {
  (void)shim_real(&real_vfork, "vfork");
  (void)shim_real(&real_clone, "clone");
  (void)SHIM_REAL(_Fork);
}

void shim_fork_number(long nr) {
  if (nr == SYS_fork || nr == SYS_vfork || nr == SYS_clone || nr == SYS_clone3) shim_process_pid_uncached();
}
