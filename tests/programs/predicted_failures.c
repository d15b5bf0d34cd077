/* predicted_failures MODE: three processes racing over one name, "slot",
 * in the current directory, so that calls guard expects to fail (from what
 * it sees of their paths just before them) succeed because another process
 * changed a path in between. Each process p (0..2) makes ROUNDS successes.
 * Exits 0 when every process made them all, else 1.
 *
 *   noreplace  renameat2(p-J, slot, RENAME_NOREPLACE) until it succeeds
 *              (EEXIST while another's file is there), then unlinks slot.
 *              The files p-J (0 <= J < ROUNDS) must exist beforehand. A
 *              rename guard saw blocked, let run unrecorded, moved p-J
 *              away for good.
 *   link       link(slot, p-J) until it succeeds; ENOENT: it makes slot
 *              itself (O_CREAT|O_EXCL), then tries again; after, unlinks
 *              slot. A link guard saw without a source made p-J unrecorded.
 *   exchange   renameat2(p, slot, RENAME_EXCHANGE) until it succeeds;
 *              ENOENT: it makes slot; after, unlinks slot. The files 0, 1
 *              and 2 must exist beforehand. An exchange guard saw without
 *              one side swapped p with another's file unrecorded.
 *   rename     rename(slot, p-J) until it succeeds; ENOENT: it makes slot
 *              and tries again (the three shells of session 19, in C).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

enum { kProcs = 3, kRounds = 25, kTries = 1000000 };

/* Makes slot, holding who made it; EEXIST is no failure (another did). */
static int make_slot(int p, int j) {
  int fd = open("slot", O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) return errno == EEXIST ? 0 : -1;
  char text[32];
  int n = snprintf(text, sizeof text, "slot of %d-%d\n", p, j);
  int rc = write(fd, text, (size_t)n) == n ? 0 : -1;
  close(fd);
  return rc;
}

/* One success of `mode` by process p in round j: 0, or -1 (errno). */
static int attempt(const char* mode, int p, int j, int* done) {
  char mine[32];
  snprintf(mine, sizeof mine, "%d-%d", p, j);
  *done = 0;
  if (strcmp(mode, "noreplace") == 0) {
    if (renameat2(AT_FDCWD, mine, AT_FDCWD, "slot", RENAME_NOREPLACE) == 0) {
      *done = 1;
      return unlink("slot") == 0 || errno == ENOENT ? 0 : -1;
    }
    return errno == EEXIST ? 0 : -1;
  }
  if (strcmp(mode, "link") == 0) {
    if (link("slot", mine) == 0) {
      *done = 1;
      return unlink("slot") == 0 || errno == ENOENT ? 0 : -1;
    }
    return errno == ENOENT ? make_slot(p, j) : -1;
  }
  if (strcmp(mode, "exchange") == 0) {
    snprintf(mine, sizeof mine, "%d", p);
    if (renameat2(AT_FDCWD, mine, AT_FDCWD, "slot", RENAME_EXCHANGE) == 0) {
      *done = 1;
      return unlink("slot") == 0 || errno == ENOENT ? 0 : -1;
    }
    return errno == ENOENT ? make_slot(p, j) : -1;
  }
  if (strcmp(mode, "rename") == 0) {
    if (rename("slot", mine) == 0) {
      *done = 1;
      return 0;
    }
    return errno == ENOENT ? make_slot(p, j) : -1;
  }
  errno = EINVAL;
  return -1;
}

static int worker(const char* mode, int p) {
  for (int j = 0; j < kRounds; ++j) {
    int done = 0;
    for (int tries = 0; !done; ++tries) {
      if (tries == kTries || attempt(mode, p, j, &done) != 0) {
        fprintf(stderr, "%s: process %d, round %d: %s\n", mode, p, j,
                tries == kTries ? "no success" : strerror(errno));
        return 1;
      }
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: predicted_failures noreplace|link|exchange|rename\n");
    return 2;
  }
  pid_t kids[kProcs];
  for (int p = 0; p < kProcs; ++p) {
    kids[p] = fork();
    if (kids[p] < 0) return 1;
    if (kids[p] == 0) _exit(worker(argv[1], p));
  }
  int failed = 0;
  for (int p = 0; p < kProcs; ++p) {
    int status = 0;
    if (waitpid(kids[p], &status, 0) != kids[p] || !WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
  }
  return failed;
}
