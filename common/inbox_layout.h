/* The session's inbox (docs/security.md, "Which of the shim's own calls need
 * guard's directories"), shared by the preload shim, which links and copies
 * pre-images into it, and the supervisor, which takes them out of it
 * (BlobStore::TakeFromInbox) and empties it.
 *
 * C, not C++: the shim is built as C.
 *
 * The inbox holds GUARD_INBOX_SHARDS subdirectories, "0" to "7", made with
 * the inbox, and a pre-image named NAME is <inbox>/<shard>/NAME, where the
 * shard is NAME's call counter (the decimal digits that end every name the
 * shim makes, common/blob_store_layout.h) modulo GUARD_INBOX_SHARDS. A
 * process's consecutive pre-images therefore go to different directories,
 * so that the supervisor taking one pre-image out of its directory (a
 * rename, which holds that directory's lock) does not hold up the command
 * linking its next pre-image in: with one directory, `rm -rf` of 9,851
 * files spent 14% of its samples waiting for that lock in its `linkat`, and
 * under 1% with eight (`perf record -g`, session 13).
 * A name without trailing digits is in shard 0. */
#ifndef GUARD_COMMON_INBOX_LAYOUT_H_
#define GUARD_COMMON_INBOX_LAYOUT_H_

#include <stddef.h>

#define GUARD_INBOX_SHARDS 8u

/* The shard of `name` (`len` bytes): its trailing number modulo 8, read from
 * its last three digits (1000 is a multiple of 8). */
static inline unsigned guard_inbox_shard(const char* name, size_t len) {
  unsigned value = 0, scale = 1;
  for (int i = 0; i < 3 && len > 0; ++i) {
    char ch = name[len - 1];
    if (ch < '0' || ch > '9') break;
    value += (unsigned)(ch - '0') * scale;
    scale *= 10;
    --len;
  }
  return value % GUARD_INBOX_SHARDS;
}

/* The shard's directory name: one character, '0' to '7'. */
static inline char guard_inbox_shard_char(unsigned shard) { return (char)('0' + shard); }

#endif /* GUARD_COMMON_INBOX_LAYOUT_H_ */
