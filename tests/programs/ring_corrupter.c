/* ring_corrupter: a hostile process of a --mode auto or preload session
 * forges framing in the shim's ring (docs/security.md, "Failing closed"):
 * it finds the ring the way such a process would, in its own mappings (the
 * shim's, a shared mapping that starts with the ring's magic) or else by
 * its name in the environment, claims room at the tail as a producer does,
 * and publishes there a record whose length no producer makes (12: not
 * whole 8-byte units). Then it waits, up to `wait_ms` (default 5000), for
 * guard to answer by setting the ring's fail_closed word.
 *
 *   ring_corrupter [wait_ms]
 *
 * Exit status: 0 once guard failed closed, 3 if it did not within wait_ms,
 * 2 if no ring was found or the claim could not be made. It writes nothing
 * else, and changes no file. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/ring_format.h"

/* A writable shared mapping of this process that starts with the ring's
 * header; NULL if none. */
static struct guard_ring_header* ring_in_mappings(void) {
  FILE* maps = fopen("/proc/self/maps", "r");
  if (maps == NULL) return NULL;
  char line[4096];
  struct guard_ring_header* found = NULL;
  while (found == NULL && fgets(line, sizeof line, maps) != NULL) {
    unsigned long start = 0, end = 0;
    char perms[8] = {0};
    if (sscanf(line, "%lx-%lx %7s", &start, &end, perms) != 3) continue;
    if (strcmp(perms, "rw-s") != 0 || end - start < GUARD_RING_HEADER_SIZE) continue;
    struct guard_ring_header* h = (struct guard_ring_header*)start;
    if (h->magic == GUARD_RING_MAGIC && h->version == GUARD_RING_VERSION) found = h;
  }
  fclose(maps);
  return found;
}

/* The ring by its name in /dev/shm (GUARD_SHIM_RING), mapped here. */
static struct guard_ring_header* ring_by_name(void) {
  const char* name = getenv("GUARD_SHIM_RING");
  if (name == NULL || *name == '\0') return NULL;
  char path[512];
  snprintf(path, sizeof path, "/dev/shm/%s", name[0] == '/' ? name + 1 : name);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct stat st;
  void* base = MAP_FAILED;
  if (fstat(fd, &st) == 0 && st.st_size >= (off_t)GUARD_RING_HEADER_SIZE) {
    base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  close(fd);
  if (base == MAP_FAILED) return NULL;
  struct guard_ring_header* h = base;
  return h->magic == GUARD_RING_MAGIC ? h : NULL;
}

/* Claims 32 bytes at the tail and publishes a record of length 12 there. */
static int forge(struct guard_ring_header* h) {
  unsigned char* data = (unsigned char*)h + GUARD_RING_HEADER_SIZE;
  const uint64_t mask = h->capacity - 1;
  for (int tries = 0; tries < 1000; ++tries) {
    uint64_t tail = __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE);
    uint64_t pos = GUARD_RING_TAIL_POSITION(tail);
    if ((pos & mask) + 32 > h->capacity) return -1; /* at the wrap: not worth the trouble here */
    uint64_t want = GUARD_RING_TAIL(pos + 32, GUARD_RING_NO_SLOT);
    if (!__atomic_compare_exchange_n(&h->tail, &tail, want, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) continue;
    struct guard_ring_record* rec = (struct guard_ring_record*)(data + (pos & mask));
    rec->type = GUARD_RING_TYPE_FIRST_USER;
    rec->payload_length = 0;
    rec->pid = (uint32_t)getpid();
    rec->start_ticks = 0;
    __atomic_store_n(&rec->length, 12, __ATOMIC_RELEASE);
    return 0;
  }
  return -1;
}

int main(int argc, char** argv) {
  long wait_ms = argc > 1 ? atol(argv[1]) : 5000;
  struct guard_ring_header* h = ring_in_mappings();
  if (h == NULL) h = ring_by_name();
  if (h == NULL) {
    fprintf(stderr, "ring_corrupter: no ring found\n");
    return 2;
  }
  if (forge(h) != 0) {
    fprintf(stderr, "ring_corrupter: no claim made\n");
    return 2;
  }
  /* The fail_closed word, just after shim_mismatch (common/ring_format.h),
   * read by its offset: a guard without it leaves zeroes there. */
  const uint32_t* fail_closed = (const uint32_t*)((const unsigned char*)h + offsetof(struct guard_ring_header, shim_mismatch) + 4);
  for (long waited = 0; waited < wait_ms; waited += 10) {
    if (__atomic_load_n(fail_closed, __ATOMIC_RELAXED) != 0) return 0;
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  fprintf(stderr, "ring_corrupter: guard did not fail closed within %ld ms\n", wait_ms);
  return 3;
}
