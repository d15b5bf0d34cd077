#include "interpose/linux/shim_protocol.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "common/shim_interface.h"
#include "interpose/env_find.h"
#include "interpose/linux/syscall_stub.h"

#ifdef GUARD_SHIM_PROTOCOL_OVERRIDE
#define SHIM_OWN_PROTOCOL ((uint32_t)(GUARD_SHIM_PROTOCOL_OVERRIDE))
#else
#define SHIM_OWN_PROTOCOL GUARD_SHIM_PROTOCOL
#endif

uint32_t shim_protocol_own(void) { return SHIM_OWN_PROTOCOL; }

/* The decimal value of `s` (at most 0xffff), or -1. */
static long parse_protocol(const char* s) {
  if (s == NULL || *s == '\0') return -1;
  long v = 0;
  for (; *s != '\0'; ++s) {
    if (*s < '0' || *s > '9') return -1;
    v = v * 10 + (*s - '0');
    if (v > 0xffff) return -1;
  }
  return v;
}

/* Sets the ring's shim_mismatch word to `word` unless a shim set it first.
 * Only line 0, whose layout every protocol keeps, is touched. */
static void report(const char* name, uint32_t word) {
  if (name == NULL || *name == '\0' || strlen(name) > 200 || strchr(name, '/') != NULL) return;
  char path[256] = "/dev/shm/";
  memcpy(path + 9, name, strlen(name) + 1);
  long fd = shim_own_syscall(SYS_openat, AT_FDCWD, (long)path, O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0, 0, 0);
  if (fd < 0) return;
  struct stat st;
  long rc = shim_own_syscall(SYS_fstat, fd, (long)&st, 0, 0, 0, 0);
  const long len = GUARD_RING_CACHE_LINE;
  long base = -1;
  if (rc == 0 && S_ISREG(st.st_mode) && st.st_size >= len) {
    base = shim_own_syscall(SYS_mmap, 0, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  shim_own_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
  if (base < 0 && base >= -4095) return;
  uint64_t magic;
  memcpy(&magic, (const void*)base, sizeof magic);
  if (magic == GUARD_RING_MAGIC) {
    uint32_t* slot = (uint32_t*)(base + GUARD_SHIM_MISMATCH_OFFSET);
    uint32_t expected = 0;
    /* Relaxed: the word is all there is to see; guard polls it. */
    __atomic_compare_exchange_n(slot, &expected, word, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  }
  shim_own_syscall(SYS_munmap, base, len, 0, 0, 0, 0);
}

int shim_protocol_agrees(char* const* envp, int alone, int block) {
  const long theirs = parse_protocol(shim_env_find(envp, GUARD_ENV_SHIM_PROTOCOL));
  if (theirs == (long)SHIM_OWN_PROTOCOL) return 1;
  uint32_t word = GUARD_SHIM_MISMATCH_SEEN | GUARD_SHIM_MISMATCH_PROTOCOL(SHIM_OWN_PROTOCOL);
  if (alone) word |= GUARD_SHIM_MISMATCH_ALONE;
  if (block) word |= GUARD_SHIM_MISMATCH_BLOCK;
  report(shim_env_find(envp, GUARD_ENV_SHIM_RING), word);
  return 0;
}
