// Git blobs whose content lives in guard's store, hashed and packed by
// streaming it in pieces: a checkpoint's memory stays bounded whatever the
// size of the files it holds (docs/workflows.md). And the session's cache of
// their ids, so that a file a checkpoint already holds is not read again.
//
// BlobIdCache: sessions/<id>/git-blob-ids, one line per store blob whose git
// id a checkpoint or commit of the session computed: "<32 hex store key>
// <size> <40 hex git blob id>\n" (docs/format.md, Part III). A store key is
// the hash of the content, so the line holds for as long as the blob does;
// lines are only appended, a torn or unreadable line is skipped.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/blob_store.h"
#include "common/journal_record.h"
#include "common/status.h"
#include "supervisor/git/git_handles.h"

namespace guard {

// A blob of a tree guard builds whose content is `ref` in the store.
struct StoredBlob {
  git_oid id{};
  BlobRef ref;
  uint64_t size = 0;
};

// The git blob id of `ref`'s content, `expected_size` bytes long as its
// state says (read once more with the real size if it is not).
Status HashStoredBlob(const BlobStore& store, const BlobRef& ref, uint64_t expected_size, git_oid* id,
                      uint64_t* size);

class BlobIdCache {
 public:
  // Reads `path` (none yet: an empty cache).
  static BlobIdCache Load(const std::string& path);
  bool Find(const BlobRef& ref, git_oid* id, uint64_t* size) const;
  void Add(const BlobRef& ref, const git_oid& id, uint64_t size);
  // Appends the lines added since Load.
  Status Save() const;

 private:
  struct Entry {
    git_oid id;
    uint64_t size;
  };
  std::string path_;
  std::map<std::string, Entry> by_key_;  // by the store key's hex
  std::vector<std::string> added_;       // lines to append
};

}  // namespace guard
