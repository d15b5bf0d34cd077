// SavedVersions: the last content a running session stored of each path
// (a pre-image, a post-image or an end state), so that the next one of a
// file that only grew (a log appended to with `>>`) is stored as that
// version and the bytes appended: an append object (BlobStore::PutFdAfter,
// docs/format.md (Part II), "Append objects"). Only a file of at least
// kAppendMinBase bytes is kept: a smaller one is copied whole anyway.
//
// A version found here is a hint, never trusted: the store hashes the
// file's beginning against it before it chains on it, so a file rewritten
// in place, truncated, written through another fd or a shared mapping, or
// replaced by another file under the same name is stored whole.
// Thread-safe: capture (the tracer's thread, the shim's feed) and the work
// saver both note and ask.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "common/blob_key.h"
#include "common/journal_record.h"

namespace guard {

struct SavedVersion {
  BlobKey key;
  uint64_t size = 0;
};

class SavedVersions {
 public:
  // `state` was stored as `rel`'s content (a regular file with a key).
  void Note(const std::string& rel, const FileState& state);
  // The last version noted of `rel`; false if none.
  bool Latest(const std::string& rel, SavedVersion* out) const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, SavedVersion> latest_;  // guarded by mu_
};

}  // namespace guard
