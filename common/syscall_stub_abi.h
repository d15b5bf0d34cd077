/* The syscall stub shared by the preload shim (interpose/linux/syscall_stub.c),
 * which maps it, and the seccomp filter (supervisor/trace/seccomp_filter.cc),
 * which lets through exactly the calls made from it (docs/security.md, "The
 * shim's syscall stub").
 *
 * C, not C++: the shim is built as C. x86_64 only.
 *
 * The stub is one page at a fixed address, read+exec, holding a function
 *   long stub(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
 * in the SysV calling convention: it moves the arguments into the kernel's
 * registers, issues `syscall` and returns the kernel's raw result (-errno on
 * failure). The rest of the page is int3, so a jump anywhere else in it
 * faults. The filter compares seccomp_data.instruction_pointer, all 64 bits,
 * with GUARD_STUB_RETURN_ADDRESS: the address of the instruction after
 * `syscall`, which is what the kernel reports.
 *
 * The address is below the range the kernel picks for mmap and the stack
 * (0x7f...) and above where PIE executables and their heap load (0x55...,
 * 0x56...), so MAP_FIXED_NOREPLACE normally finds it free. Its two 32-bit
 * halves are both nonzero, so a filter that compared only the low half (as
 * rr's does) would be caught by the test that calls from an address equal
 * in the low half only. */
#ifndef GUARD_COMMON_SYSCALL_STUB_ABI_H_
#define GUARD_COMMON_SYSCALL_STUB_ABI_H_

#define GUARD_STUB_PAGE_ADDRESS 0x477561720000ull /* "Guar" */
#define GUARD_STUB_PAGE_SIZE 4096u

/* The stub's code, at offset 0 of the page. */
#define GUARD_STUB_CODE                                              \
  {                                                                  \
    0x48, 0x89, 0xf8,             /* mov %rdi,%rax      nr        */ \
        0x48, 0x89, 0xf7,         /* mov %rsi,%rdi      a1        */ \
        0x48, 0x89, 0xd6,         /* mov %rdx,%rsi      a2        */ \
        0x48, 0x89, 0xca,         /* mov %rcx,%rdx      a3        */ \
        0x4d, 0x89, 0xc2,         /* mov %r8,%r10       a4        */ \
        0x4d, 0x89, 0xc8,         /* mov %r9,%r8        a5        */ \
        0x4c, 0x8b, 0x4c, 0x24, 0x08, /* mov 8(%rsp),%r9  a6      */ \
        0x0f, 0x05,               /* syscall                      */ \
        0xc3                      /* ret                          */ \
  }
#define GUARD_STUB_RETURN_OFFSET 25u /* just after `syscall` */
#define GUARD_STUB_RETURN_ADDRESS (GUARD_STUB_PAGE_ADDRESS + GUARD_STUB_RETURN_OFFSET)

#endif /* GUARD_COMMON_SYSCALL_STUB_ABI_H_ */
