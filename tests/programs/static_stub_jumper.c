// A program that makes its own copy of the shim's syscall stub at the
// stub's fixed address (common/syscall_stub_abi.h), as a program that jumps
// into the real one would, linked -static so that no shim is involved. Run
// under guard in a tree holding via-libc, via-low-half and via-stub, it
// deletes each: through libc's syscall(), from a copy of the stub 4 GiB
// above the address (equal in the low 32 bits), and from the stub's
// address itself. The filter stops the first two; the third runs unseen
// (docs/security.md says what that reaches). Exits 1 if a step fails, 2 if
// the stub's address was taken.
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/syscall_stub_abi.h"

typedef long (*StubFn)(long, long, long, long, long, long, long);

static StubFn MapStub(unsigned long long page) {
  void* want = (void*)(unsigned long)page;
  void* got = mmap(want, GUARD_STUB_PAGE_SIZE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (got != want) return NULL;
  static const unsigned char code[] = GUARD_STUB_CODE;
  memset(got, 0xcc, GUARD_STUB_PAGE_SIZE);
  memcpy(got, code, sizeof code);
  if (mprotect(got, GUARD_STUB_PAGE_SIZE, PROT_READ | PROT_EXEC) != 0) return NULL;
  return (StubFn)got;
}

int main(void) {
  if (syscall(SYS_unlink, "via-libc") != 0) return 1;
  StubFn low_half = MapStub(GUARD_STUB_PAGE_ADDRESS + (1ull << 32));
  StubFn stub = MapStub(GUARD_STUB_PAGE_ADDRESS);
  if (low_half == NULL || stub == NULL) return 2;
  if (low_half(SYS_unlink, (long)"via-low-half", 0, 0, 0, 0, 0) != 0) return 1;
  if (stub(SYS_unlink, (long)"via-stub", 0, 0, 0, 0, 0) != 0) return 1;
  return 0;
}
