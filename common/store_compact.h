// Compaction of the blob store: the raw objects a session stored while it
// ran (BlobStore::SetCompress(false)) are compressed afterwards, by gc, so
// that the command never waits for zstd and the store still holds its
// content compressed once the session is over.
//
// An object is rewritten as objects/XX/<key>.zst beside its raw file, made
// durable, and only then is the raw file unlinked. Either encoding is valid
// for a key and readers try raw first, then .zst (docs/format.md, Part II),
// so a reader that races with compaction finds one of them. The .zst keeps
// the raw file's mtime (the newer one if a writer refreshed it meanwhile),
// so the sweep's age rule (store_gc.h) sees the same object as before.
// Left alone: content that does not shrink by 10% (as BlobEncoder decides),
// a raw file with other links (a pending blob resolved into it: compressing
// would store it twice), and one whose content does not match its key
// (damaged: a reader must still report it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/status.h"

namespace guard {

struct CompactReport {
  size_t compressed = 0;  // raw objects now .zst
  size_t left_raw = 0;    // looked at and kept raw (no gain, linked, damaged)
  uint64_t bytes_before = 0, bytes_after = 0;  // of the compressed ones, on disk
};

// Compresses the raw objects of the store at `store_dir` whose mtime is at
// or after `since_ns` (wall clock; 0: all). Stops at the first error that is
// not about one object (an unreadable objects/ directory, a full disk).
Status CompactStore(const std::string& store_dir, int64_t since_ns, CompactReport* report);

}  // namespace guard
