/* ring_forger: a hostile process of the session that writes into the shim's
 * ring (docs/ring.md, "Reading past a claim", "Who is of the session"). It
 * finds the ring as any process of the session could: the segment the shim
 * mapped into it (a /dev/shm/guard-ring-* line of /proc/self/maps), else
 * the name in GUARD_SHIM_RING opened in /dev/shm.
 *
 *   ring_forger claim        an unpublished claim at the tail, made as a
 *                            producer makes one (a claim slot that names
 *                            it, the tail, a negative length) by pid 1 with
 *                            its real start time: alive, never publishing
 *   ring_forger slots        every claim slot taken by pid 1's identity
 *   ring_forger locks        every name lock word set to tid 1
 *   ring_forger count-locks  prints "tid1-locks N": the words that still
 *                            name tid 1
 *   ring_forger count-slots  prints "pid1-slots N ...": the claim slots
 *                            that still name pid 1
 *
 * Exits 0 when done, 3 when it finds no ring (--mode trace), 1 on error.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/ring_format.h"
#include "common/shim_interface.h"

/* The mapping of the ring the shim made in this process, or NULL. */
static void* mapped_ring(void) {
  FILE* maps = fopen("/proc/self/maps", "r");
  if (maps == NULL) return NULL;
  char line[4096];
  void* found = NULL;
  while (found == NULL && fgets(line, sizeof line, maps) != NULL) {
    if (strstr(line, "/dev/shm/guard-ring-") == NULL || strstr(line, " rw") == NULL) continue;
    unsigned long start = 0;
    if (sscanf(line, "%lx-", &start) == 1) found = (void*)start;
  }
  fclose(maps);
  return found;
}

/* The ring by the name the session's environment gives it, or NULL. */
static void* named_ring(void) {
  const char* name = getenv(GUARD_ENV_SHIM_RING);
  if (name == NULL || *name == '\0' || strchr(name, '/') != NULL) return NULL;
  char path[512];
  snprintf(path, sizeof path, "/dev/shm/%s", name);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct stat st;
  void* base = NULL;
  if (fstat(fd, &st) == 0 && st.st_size > 0) {
    base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) base = NULL;
  }
  close(fd);
  return base;
}

/* Field 22 of /proc/1/stat: pid 1's start time. */
static uint64_t pid1_start(void) {
  FILE* f = fopen("/proc/1/stat", "r");
  if (f == NULL) return 0;
  char buf[1024];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  char* p = strrchr(buf, ')');
  if (p == NULL) return 0;
  for (int field = 2; field < 22 && p != NULL; ++field) p = strchr(p + 1, ' ');
  return p == NULL ? 0 : strtoull(p + 1, NULL, 10);
}

/* A claim of 64 bytes at the tail, as guard_ring_put makes one, never
 * published. */
static int forge_claim(struct guard_ring_header* h, unsigned char* data, uint64_t identity) {
  uint32_t s = 0;
  for (;; ++s) {
    if (s == GUARD_RING_SLOTS) return 1;
    uint64_t expected = 0;
    if (__atomic_compare_exchange_n(&h->slots[s].identity, &expected, identity, 0, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED))
      break;
  }
  const uint64_t cap = h->capacity;
  const uint32_t n = 64;
  for (;;) {
    uint64_t tail = __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE);
    uint64_t pos = GUARD_RING_TAIL_POSITION(tail);
    uint32_t prev = GUARD_RING_TAIL_SLOT(tail);
    if (cap - (pos & (cap - 1)) < n) return 1; /* at the end of the data: not worth padding here */
    if (pos + n - __atomic_load_n(&h->head, __ATOMIC_ACQUIRE) > cap) return 1;
    struct guard_ring_slot* mine = &h->slots[s];
    uint32_t q = mine->seq;
    __atomic_store_n(&mine->seq, q + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&mine->start, pos, __ATOMIC_RELAXED);
    __atomic_store_n(&mine->claim, pos + n, __ATOMIC_RELAXED);
    __atomic_store_n(&mine->seq, q + 2, __ATOMIC_RELEASE);
    if (prev != GUARD_RING_NO_SLOT) {
      uint64_t expected = pos;
      __atomic_compare_exchange_n(&h->slots[prev].claim, &expected, pos | GUARD_RING_CLAIM_WON, 0, __ATOMIC_ACQ_REL,
                                  __ATOMIC_RELAXED);
    }
    if (!__atomic_compare_exchange_n(&h->tail, &tail, GUARD_RING_TAIL(pos + n, s), 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
      continue;
    struct guard_ring_record* rec = (struct guard_ring_record*)(data + (pos & (cap - 1)));
    rec->type = GUARD_RING_TYPE_FIRST_USER;
    rec->payload_length = n - GUARD_RING_RECORD_HEADER_SIZE;
    rec->pid = GUARD_RING_IDENTITY_PID(identity);
    rec->start_ticks = GUARD_RING_IDENTITY_START(identity);
    __atomic_store_n(&rec->length, -(int32_t)n, __ATOMIC_RELEASE);
    printf("forged claim at %llu\n", (unsigned long long)pos);
    return 0;
  }
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: ring_forger claim|slots|locks|count-locks\n");
    return 1;
  }
  void* base = mapped_ring();
  if (base == NULL) base = named_ring();
  if (base == NULL) {
    printf("no ring\n");
    return 3;
  }
  struct guard_ring_header* h = (struct guard_ring_header*)base;
  if (h->magic != GUARD_RING_MAGIC) return 1;
  unsigned char* data = (unsigned char*)base + GUARD_RING_HEADER_SIZE;
  uint64_t start = pid1_start();
  if (start == 0) return 1;
  const uint64_t pid1 = GUARD_RING_IDENTITY(1, start);
  const char* what = argv[1];
  if (strcmp(what, "claim") == 0) return forge_claim(h, data, pid1);
  if (strcmp(what, "slots") == 0) {
    for (uint32_t i = 0; i < GUARD_RING_SLOTS; ++i) __atomic_store_n(&h->slots[i].identity, pid1, __ATOMIC_RELEASE);
    printf("forged %u slots\n", GUARD_RING_SLOTS);
    return 0;
  }
  if (strcmp(what, "locks") == 0) {
    for (uint32_t i = 0; i < GUARD_RING_NAME_LOCKS; ++i) __atomic_store_n(&h->name_locks[i], 1u, __ATOMIC_RELEASE);
    printf("forged %u locks\n", GUARD_RING_NAME_LOCKS);
    return 0;
  }
  if (strcmp(what, "count-slots") == 0) {
    unsigned n = 0;
    for (uint32_t i = 0; i < GUARD_RING_SLOTS; ++i) n += __atomic_load_n(&h->slots[i].identity, __ATOMIC_ACQUIRE) == pid1;
    printf("pid1-slots %u starved %u consumer %llu\n", n, h->slots_starved,
           (unsigned long long)GUARD_RING_IDENTITY_PID(h->consumer));
    return 0;
  }
  if (strcmp(what, "count-locks") == 0) {
    unsigned n = 0;
    for (uint32_t i = 0; i < GUARD_RING_NAME_LOCKS; ++i)
      n += (__atomic_load_n(&h->name_locks[i], __ATOMIC_ACQUIRE) & GUARD_RING_LOCK_TID_MASK) == 1u;
    printf("tid1-locks %u\n", n);
    return 0;
  }
  fprintf(stderr, "ring_forger: unknown %s\n", what);
  return 1;
}
