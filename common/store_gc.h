// Garbage collection of the blob store: what is in it (an inventory, with
// the bytes each file holds on disk), and the sweep that removes what no
// kept session names. Which sessions to keep is decided above this
// (common/retention.h); the rule that makes a sweep safe while sessions
// capture is in docs/format.md (Part II, "Garbage collection"):
//
//   every writer that is about to name key K in a record has, since it
//   decided to, placed K's object or refreshed its mtime (BlobStore does
//   both: Put*, ResolvePending, KeepAlive); a sweep removes only objects
//   whose mtime is older than its cut, which is before the start of the
//   sweep and of every session that may still write; and it removes an
//   object by moving it to store/trash/, then checking its mtime again,
//   so that a refresh racing with the move puts it back.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"

namespace guard {

struct StoreFile {
  std::string rel;       // relative to the store: "objects/ab/ab12...", "pending/N"
  uint64_t bytes = 0;    // on disk (st_blocks * 512)
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  ino_t ino = 0;
};

struct StoreInventory {
  std::map<std::string, std::vector<StoreFile>> objects;  // key (hex) -> its files (raw, .zst, .app)
  // key (hex) of an append object -> its base's key: an object that is
  // some append object's base is kept while that append object is there.
  std::map<std::string, std::string> append_base;
  std::map<std::string, StoreFile> pending;               // pending name -> pending/<name>
  std::map<std::string, StoreFile> resolved;              // pending name -> resolved/<name>
  std::map<std::string, std::string> resolved_key;        // pending name -> the key its marker holds
  std::vector<StoreFile> temps;                           // tmp/
  // Bytes of every file, each inode once (a pending name and the object it
  // resolved to share one), VERSION and directories left out.
  uint64_t TotalBytes() const;
};

// Lists the store at `store_dir`. Names it does not know are left out.
Status TakeInventory(const std::string& store_dir, StoreInventory* inv);

// Moves back into objects/ whatever store/trash/ holds: objects a sweep
// that was killed had taken away before it could check them again. Every
// BlobStore::Open does this; it only ever undoes a removal.
void RestoreTrash(int store_dirfd);

// What the kept sessions name (their SessionRefs together).
struct StoreMarks {
  std::set<std::string> keys;
  std::set<std::string> pending;
};

struct SweepOptions {
  // Objects, markers and pending blobs changed at or after this wall-clock
  // time are kept whatever the marks say.
  int64_t cut_ns = 0;
  // tmp/ files are removed once this old, and only if their writer is gone.
  int64_t temp_age_ns = 3600LL * 1000000000;
  bool dry_run = false;
  std::function<void(size_t done, size_t total)> progress;  // may be empty
};

struct SweepReport {
  size_t objects = 0, pending = 0, markers = 0, temps = 0;
  size_t kept_recent = 0;  // unmarked, but newer than the cut
  uint64_t bytes = 0;      // freed (each inode once)
};

// Removes from the store every object, pending blob, resolved marker and
// stale temporary file that `marks` do not name and that is older than the
// cut. A pending name that is marked keeps its marker and the object it
// resolved to; an append object in the inventory keeps its base (and that
// base its own), whether or not the append object itself is kept: a sweep
// removes a chain from its newest end, one link per sweep at most.
Status SweepStore(const std::string& store_dir, const StoreInventory& inv, const StoreMarks& marks,
                  const SweepOptions& options, SweepReport* report);

}  // namespace guard
