/* ring_thief: what a process of one session does to reach another
 * session's ring (issue 36, finding 2). It finds every ring name it can,
 * in the meta.json of every session under $GUARD_HOME (readable from any
 * session) and in /dev/shm, leaves out its own ($GUARD_SHIM_RING), and
 * tries to open each read-write: by name in /dev/shm, and through
 * /proc/PID/root/dev/shm of that session's supervisor (its pid is in the
 * same meta.json), and through /proc/PID/root/dev/shm of every other
 * process it can see (the other session's command has the ring in its
 * private /dev/shm). Prints "rings: N" (the other sessions' ring names it
 * found), then one line per attempt, "<path>: opened" or "<path>: <errno
 * name>" (through other processes: only "opened" lines, then "through
 * other processes: M tried"). Exits 0. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_RINGS 16

static char names[MAX_RINGS][64];
static long supervisors[MAX_RINGS];
static int count;

static void add(const char* name, size_t len, long supervisor) {
  const char* own = getenv("GUARD_SHIM_RING");
  if (len == 0 || len >= sizeof names[0]) return;
  if (own != NULL && strlen(own) == len && memcmp(own, name, len) == 0) return;
  for (int i = 0; i < count; ++i) {
    if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0) {
      if (supervisor > 0) supervisors[i] = supervisor;
      return;
    }
  }
  if (count == MAX_RINGS) return;
  memcpy(names[count], name, len);
  names[count][len] = '\0';
  supervisors[count++] = supervisor;
}

/* "guard-ring-..." after "ring" in a session's meta.json, and its
 * supervisor's pid. */
static void from_meta(const char* path) {
  char text[65536];
  FILE* f = fopen(path, "r");
  if (f == NULL) return;
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  const char* ring = strstr(text, "\"ring\"");
  if (ring == NULL || (ring = strstr(ring, "guard-ring-")) == NULL) return;
  size_t len = strcspn(ring, "\"");
  long supervisor = 0;
  const char* sup = strstr(text, "\"supervisor\"");
  if (sup != NULL && (sup = strstr(sup, "\"pid\"")) != NULL) supervisor = strtol(sup + 6 + strspn(sup + 6, " :"), NULL, 10);
  add(ring, len, supervisor);
}

static void attempt(const char* path) {
  int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (fd >= 0) {
    printf("%s: opened\n", path);
    close(fd);
  } else {
    printf("%s: %s\n", path, strerrorname_np(errno));
  }
}

int main(void) {
  const char* home = getenv("GUARD_HOME");
  char path[4096];
  if (home != NULL) {
    snprintf(path, sizeof path, "%s/sessions", home);
    DIR* d = opendir(path);
    for (struct dirent* e; d != NULL && (e = readdir(d)) != NULL;) {
      if (e->d_name[0] == '.') continue;
      snprintf(path, sizeof path, "%s/sessions/%s/meta.json", home, e->d_name);
      from_meta(path);
    }
    if (d != NULL) closedir(d);
  }
  DIR* shm = opendir("/dev/shm");
  for (struct dirent* e; shm != NULL && (e = readdir(shm)) != NULL;) {
    if (strncmp(e->d_name, "guard-ring-", 11) == 0) add(e->d_name, strlen(e->d_name), 0);
  }
  if (shm != NULL) closedir(shm);
  printf("rings: %d\n", count);
  int through = 0;
  for (int i = 0; i < count; ++i) {
    snprintf(path, sizeof path, "/dev/shm/%s", names[i]);
    attempt(path);
    if (supervisors[i] > 0) {
      snprintf(path, sizeof path, "/proc/%ld/root/dev/shm/%s", supervisors[i], names[i]);
      attempt(path);
    }
    DIR* proc = opendir("/proc");
    for (struct dirent* e; proc != NULL && (e = readdir(proc)) != NULL;) {
      long pid = strtol(e->d_name, NULL, 10);
      if (pid <= 0 || pid == getpid() || pid == supervisors[i]) continue;
      snprintf(path, sizeof path, "/proc/%ld/root/dev/shm/%s", pid, names[i]);
      ++through;
      int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
      if (fd >= 0) {
        printf("%s: opened\n", path);
        close(fd);
      }
    }
    if (proc != NULL) closedir(proc);
    printf("through other processes: %d tried\n", through);
  }
  return 0;
}
