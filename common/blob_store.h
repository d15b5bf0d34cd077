// BlobStore: the content-addressed store of file pre-images, shared by all
// sessions of one state directory. Layout and blob encoding are specified in
// docs/format.md ("Blob store"):
//
//   store/objects/XX/<32 hex>       raw content          (XX = first two hex digits)
//   store/objects/XX/<32 hex>.zst   one zstd frame of the content
//   store/pending/<name>            a file adopted by hard link, not yet hashed
//   store/tmp/                      blobs being written
//
// The key is XXH3-128 of the uncompressed content. A blob is written to tmp/,
// then renamed into objects/, so a reader never sees a partial blob; every read
// re-hashes the content and reports a mismatch as corruption. Memory use is
// bounded by a fixed buffer whatever the size of the content.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/blob_key.h"
#include "common/journal_record.h"
#include "common/status.h"
#include "common/unique_fd.h"

namespace guard {

class BlobStore {
 public:
  // Opens the store at `dir`, creating it and its subdirectories with mode 0700.
  static Status Open(const std::string& dir, std::unique_ptr<BlobStore>* out);
  ~BlobStore();

  // Streams the content of `fd` (from offset 0, by pread, to end of file) into
  // the store. Compresses with zstd when a sample of the content shrinks by at
  // least 10%. Content already present is not stored twice.
  Status PutFd(int fd, BlobKey* key, uint64_t* size);
  Status PutBytes(std::string_view data, BlobKey* key);

  // O(1) capture of a file about to be deleted or renamed over: hard-links
  // `name` (relative to `dirfd`, never following a final symlink) into pending/
  // without reading it. Fails with the link's errno (EXDEV across filesystems,
  // EPERM under protected_hardlinks, EMLINK) and the caller then copies instead.
  // The key is computed later by ResolvePending.
  Status AdoptByLink(int dirfd, const std::string& name, std::string* pending_name);
  // Hashes pending blob `pending_name` and moves it to its place in objects/
  // (dropping it when that content is already stored).
  Status ResolvePending(const std::string& pending_name, BlobKey* key);
  Status ListPending(std::vector<std::string>* names) const;

  bool Contains(const BlobKey& key) const;
  // Writes the content of `ref` to `out_fd`, verifying it against its key
  // (a pending blob has no key yet and is copied as it is). A missing blob is
  // kNotFound; a blob whose content does not match its key is kCorruption.
  Status ReadTo(const BlobRef& ref, int out_fd, uint64_t* size) const;
  Status ReadToString(const BlobRef& ref, std::string* out) const;

  // Makes every blob stored since the last call durable: fsync of each blob
  // file and of the directories it was renamed into. Called by the group
  // commit before the journal is synced, so that a blob is durable before the
  // record that names it.
  Status SyncWritten();

  // Test and policy hook: while `err` is non-zero every Put and AdoptByLink
  // fails with it, as a full or broken disk would make them.
  void InjectFailure(int err) { injected_errno_.store(err); }

  const std::string& dir() const { return dir_; }
  // Path of the object file for `key` (raw or .zst, whichever exists), or "".
  std::string ObjectPath(const BlobKey& key) const;

 private:
  BlobStore(std::string dir, UniqueFd dirfd);
  Status PlaceTemp(const std::string& tmp_name, const BlobKey& key, bool compressed);
  void RememberUnsynced(UniqueFd fd, const std::string& subdir);

  std::string dir_;
  UniqueFd dirfd_;
  std::atomic<int> injected_errno_{0};
  std::atomic<uint64_t> counter_{0};
  std::mutex mu_;
  std::vector<UniqueFd> unsynced_files_;   // guarded by mu_
  std::vector<std::string> unsynced_dirs_; // guarded by mu_
};

}  // namespace guard
