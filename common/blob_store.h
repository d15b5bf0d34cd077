// BlobStore: the content-addressed store of file pre-images, shared by all
// sessions of one state directory. Layout and blob encoding are specified in
// docs/format.md ("Blob store"):
//
//   store/objects/XX/<32 hex>       raw content          (XX = first two hex digits)
//   store/objects/XX/<32 hex>.zst   one zstd frame of the content
//   store/objects/XX/<32 hex>.app   a base key and the bytes appended to it
//   store/pending/<name>            a file adopted by hard link, not yet hashed
//   store/resolved/<name>           symlink to the key a pending blob resolved to
//   store/tmp/                      blobs being written
//
// The key is XXH3-128 of the uncompressed content. A blob is written to tmp/,
// then renamed into objects/, so a reader never sees a partial blob; every read
// re-hashes the content and reports a mismatch as corruption. Memory use is
// bounded by a fixed buffer whatever the size of the content.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
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

class BlobEncoder;
namespace store_layout {
enum class ObjectKind;  // blob_store_layout.h
}

// Told of every object a BlobStore places or names again (the session's
// cap: supervisor/session/session_cap.h). Called from any thread that
// puts; must be quick.
class StoreObserver {
 public:
  virtual ~StoreObserver() = default;
  // A new object of `key` was placed: `bytes` on disk, its mtime.
  virtual void Placed(const BlobKey& key, uint64_t bytes, int64_t mtime_ns) = 0;
  // The object of `key`, already stored, is about to be named again (a
  // put of the same content, KeepAlive, the base of an append object):
  // called before its mtime is refreshed.
  virtual void Reusing(const BlobKey& key) = 0;
  // Pending blob `pending_name` was resolved to `key` (its marker made).
  virtual void Resolved(const std::string& pending_name, const BlobKey& key) {
    (void)pending_name, (void)key;
  }
};

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
  // PutFd of a file that may have grown from blob `latest` (`latest_size`
  // bytes), the last stored version of it: when its beginning is `latest`
  // or a version `latest` extends (hashed to check) and more follow, it is
  // stored as an append object, that version plus the new bytes
  // (docs/format.md (Part II), "Append objects", which says which version
  // is chosen); otherwise as PutFd stores it. *appended says which.
  Status PutFdAfter(int fd, const BlobKey& latest, uint64_t latest_size, BlobKey* key, uint64_t* size,
                    bool* appended = nullptr);

  // The session whose pending blobs this store adopts: from now on pending
  // names are "<owner>-<counter>-<random>" (docs/format.md, "Store layout"),
  // so that recovery can tell one session's pending blobs from another's.
  // Set before any AdoptByLink; without it names start with the pid.
  void SetPendingOwner(std::string owner) { pending_owner_ = std::move(owner); }
  // Whether pending name `name` was adopted for session `owner`.
  static bool PendingNameOf(const std::string& name, const std::string& owner);

  // O(1) capture of a file about to be deleted or renamed over: hard-links
  // `name` (relative to `dirfd`, never following a final symlink) into pending/
  // without reading it. Fails with the link's errno (EXDEV across filesystems,
  // EPERM under protected_hardlinks, EMLINK) and the caller then copies instead.
  // The key is computed later by ResolvePending.
  Status AdoptByLink(int dirfd, const std::string& name, std::string* pending_name);
  // O(1) copy of open regular file `fd` by a copy-on-write clone
  // (os::CloneFileAt) into pending/: a pending blob with an inode of its
  // own, resolved like the others (ResolvePending gives the inode its
  // object name, so the blocks stay shared). Fails with the clone's errno
  // (EOPNOTSUPP, EINVAL where the filesystem cannot clone, EXDEV when the
  // store is on another one) and the caller then copies instead.
  Status AdoptByClone(int fd, std::string* pending_name);
  // Takes `name`, a file the shim left in a session's inbox (`inbox_fd`,
  // a directory the session can write: docs/security.md; the file is in
  // its shard, InboxPath), into pending/
  // under the same name, once it is a regular file that is either the very
  // file `victim` (dev, ino: a pre-image the shim linked) or one of this
  // user's with a single name (a copy the shim made), or an orphan (below).
  // Nothing else there is
  // read or followed. A file swapped in between the check and the move is
  // dropped. kInvalidArgument when it is not what it should be.
  struct InboxVictim {
    bool known = false;  // the call's victim was a regular file
    dev_t dev = 0;
    ino_t ino = 0;
    // No record names the file (what is left in an inbox): one of this
    // user's with several names (a pre-image linked from a file that still
    // has its name) is taken too, as a copy of its own (DetachPending), if
    // it holds at most this many bytes (0: never).
    uint64_t orphan_max_bytes = 0;
  };
  Status TakeFromInbox(int inbox_fd, const std::string& name, const InboxVictim& victim);
  // Where the shim puts pre-image `name`, relative to the inbox: its shard's
  // directory and the name (common/inbox_layout.h).
  static std::string InboxPath(const std::string& name);
  // The link count of pending blob `pending_name`'s inode: 1 when the store
  // holds the only name of that content, more when a file outside the store
  // (the one it was adopted from) still shares it.
  Status PendingLinkCount(const std::string& pending_name, uint64_t* nlink) const;
  // The lstat of pending blob `pending_name` (its size, times, link count).
  Status StatPending(const std::string& pending_name, struct stat* st) const;
  // Gives pending blob `pending_name` an inode of its own: its content is
  // copied to a new file that replaces the pending name. For a file adopted
  // when it was deleted that a process can still open for writing (through
  // an fd's /proc link): the process then changes only the old inode, which
  // the store no longer holds.
  Status DetachPending(const std::string& pending_name);
  // Removes pending/<pending_name>, a pending blob nothing will resolve.
  // A missing name is not an error.
  Status RemovePending(const std::string& pending_name);
  // Hashes pending blob `pending_name`, gives it its place in objects/
  // (unless that content is already stored) and records the key as
  // resolved/<pending_name>. The pending name is removed by a later
  // SyncWritten, once all that is durable. Resolving a name again returns the
  // recorded key, so recovery may repeat a resolution a crash interrupted.
  Status ResolvePending(const std::string& pending_name, BlobKey* key);
  // ResolvePending of a pending blob that is the store's own copy (a
  // pre-image the shim copied) of a file that may have grown from blob
  // `latest` (`latest_size` bytes): stored as an append object when
  // PutFdAfter would store it so (*appended true; the copy is then removed
  // by a later SyncWritten, as a resolved name is), else resolved as
  // ResolvePending does. *size: the content's size (0 when the pending
  // blob was not there to look at: resolved before).
  Status ResolvePendingAfter(const std::string& pending_name, const BlobKey& latest, uint64_t latest_size,
                             BlobKey* key, uint64_t* size, bool* appended);
  Status ListPending(std::vector<std::string>* names) const;
  // Of those, only the names `wanted` accepts, asked before anything else
  // is looked at: the seal of a session of 100,000 deletes holds the few it
  // wants, not every name, and looks for no marker of the others.
  Status ListPending(std::vector<std::string>* names, const std::function<bool(std::string_view)>& wanted) const;

  bool Contains(const BlobKey& key) const;
  // Refreshes the mtime of `key`'s object, so that a garbage collection
  // running now keeps it (docs/format.md, Part II, "Garbage collection").
  // A writer that names in a record a key it did not just Put calls this
  // first; kNotFound means the object is gone and the content must be Put
  // again. Put* and ResolvePending do it themselves.
  Status KeepAlive(const BlobKey& key);
  // Writes the content of `ref` to `out_fd`, verifying it against its key
  // (a pending blob has no key yet and is copied as it is). A missing blob is
  // kNotFound; a blob whose content does not match its key is kCorruption.
  // Bytes reach `out_fd` before the whole content is verified: a caller
  // restoring a file writes to a temporary file and renames it into place
  // only when this returns ok.
  Status ReadTo(const BlobRef& ref, int out_fd, uint64_t* size) const;
  // ReadTo into `out_fd`, a new, empty file: runs of zeros become holes
  // (sparse_file.h), so that a sparse file is restored sparse.
  Status ReadToNewFile(const BlobRef& ref, int out_fd, uint64_t* size) const;
  Status ReadToString(const BlobRef& ref, std::string* out) const;
  // The content of `ref` handed to `sink` in pieces, verified as ReadTo
  // does: memory stays bounded whatever its size (a git checkpoint's blobs).
  Status ReadToSink(const BlobRef& ref, const std::function<Status(const char*, size_t)>& sink,
                    uint64_t* size) const;

  // Makes every blob stored since the last call durable. Called by the group
  // commit before the journal is synced, so that a blob is durable before the
  // record that names it. Where syncfs(2) reports writeback errors (Linux
  // 5.8 and later) this is one syncfs of the store's filesystem, which covers
  // blob data and directory entries alike; elsewhere it is an fsync of each
  // blob file and of each directory that got entries.
  Status SyncWritten();
  // How SyncWritten makes blobs durable.
  enum class SyncMode { kSyncfs, kFsyncEach };
  SyncMode sync_mode() const { return sync_mode_; }
  // Test hook: the other mode, to keep the fallback tested on new kernels.
  void SetSyncModeForTest(SyncMode mode) { sync_mode_ = mode; }

  // Whether Put* compress content that shrinks (the default), or store it
  // raw. A session's supervisor stores raw: compression took half of its
  // time, and the second core from the command; gc compresses afterwards
  // (store_compact.h, docs/format.md Part II, "Encodings").
  void SetCompress(bool compress) { compress_.store(compress, std::memory_order_relaxed); }

  // Test and policy hook: while `err` is non-zero every Put and AdoptByLink
  // fails with it, as a full or broken disk would make them.
  void InjectFailure(int err) { injected_errno_.store(err); }

  // Set before any put; null: none.
  void SetObserver(StoreObserver* observer) { observer_ = observer; }
  // Removes the object of `key` (every encoding of it), as a gc sweep does
  // (moved to trash/, its mtime looked at again, unlinked), only if its
  // mtime is still `mtime_ns`: one refreshed since (a writer about to name
  // it) stays. *removed: whether an object was removed; *freed: its bytes.
  Status RemoveIfUntouched(const BlobKey& key, int64_t mtime_ns, bool* removed, uint64_t* freed);

  const std::string& dir() const { return dir_; }
  // Path of the object file for `key` (raw or .zst, whichever exists), or "".
  std::string ObjectPath(const BlobKey& key) const;

 private:
  BlobStore(std::string dir, UniqueFd dirfd, SyncMode mode);
  // Gives `src_name` (a finished file under tmp/ or pending/, open as
  // `src_fd`) the object name of `key`: renamed, or hard-linked when
  // `keep_source`. When the key is already stored, a renamed source is
  // dropped instead. On failure `src_name` is left where it is.
  Status PlaceTemp(const std::string& src_name, UniqueFd src_fd, const BlobKey& key,
                   store_layout::ObjectKind kind, bool keep_source = false);
  // Encodes what `feed` gives into a new file under tmp/ and places it as
  // the object of its key (PutFd, PutBytes); no partial file stays behind.
  Status PutFed(const std::function<Status(BlobEncoder*)>& feed, BlobKey* key, uint64_t* size);
  // PutFdAfter's append object alone: *placed false (and nothing stored)
  // when the content is not one to store so.
  Status PutAppend(int fd, const BlobKey& latest, uint64_t latest_size, BlobKey* key, uint64_t* size,
                   bool* placed);
  // Step 2 of a resolution: resolved/<pending_name> names `key`, and the
  // pending name is unlinked by the next SyncWritten.
  Status RecordResolution(const std::string& pending_name, const BlobKey& key);
  // Raises store/VERSION to kStoreVersionAppend, once, before the first
  // append object is placed.
  Status NoteAppendObjects();
  // Makes sure objects/XX of `key` exists (subdirs_known_), or forgets it.
  Status KnowSubdir(const std::string& subdir, const BlobKey& key);
  // An object found already stored, that a record about to name it needs
  // synced too (it may come from a writer that has not synced it yet).
  Status SyncExisting(const std::string& existing, const std::string& subdir);
  void ForgetSubdir(const BlobKey& key);
  // Queues `fd` (if valid) and directory `subdir` for the next SyncWritten.
  void RememberUnsynced(UniqueFd fd, const std::string& subdir);
  // "<prefix>-<counter>-<random>"; the prefix is the pid when empty.
  std::string UniqueName(const std::string& prefix = std::string());

  std::string dir_;
  // Also the syncfs(2) fd: its errseq cursor, sampled at open, makes syncfs
  // report any writeback error on the filesystem since (or unseen before).
  UniqueFd dirfd_;
  SyncMode sync_mode_;
  std::atomic<int> injected_errno_{0};
  std::atomic<bool> compress_{true};
  std::atomic<bool> append_version_{false};  // VERSION is known to allow append objects
  std::atomic<uint64_t> counter_{0};
  uint64_t name_seed_ = 0;  // random, set at construction (UniqueName)
  // Which objects/XX this store has made or found (bit XX, 0-255): a put
  // into one asks no mkdir again. guard never removes them; one removed
  // from outside is made again at the link's ENOENT (PlaceTemp).
  std::atomic<uint64_t> subdirs_known_[4] = {};
  std::string pending_owner_;  // set before adoption starts, read-only after
  StoreObserver* observer_ = nullptr;  // set before puts start, read-only after
  // Lock order: sync_mu_ before mu_. sync_mu_ is held for a whole fsync batch
  // so that a SyncWritten cannot return while an earlier batch (the inline
  // one a Put starts past the cap) is still being synced.
  std::mutex sync_mu_;
  std::mutex mu_;
  // kFsyncEach: the files to fsync. kSyncfs keeps no fds (the filesystem is
  // synced whole), only whether anything is waiting.
  std::vector<UniqueFd> unsynced_files_;   // guarded by mu_
  bool unsynced_any_ = false;              // guarded by mu_
  std::vector<std::string> unsynced_dirs_; // guarded by mu_
  // Pending names resolved since the last SyncWritten, each ended by a NUL.
  // Each is unlinked only once its object and resolved/ marker are durable
  // (docs/format.md (Part II)). One buffer, not a string each: the seal of
  // 100,000 deletes resolves them all before its one sync (5.6 MB here
  // against 10 MB as strings).
  std::string resolved_pending_;  // guarded by mu_
  // The first fsync failure, returned by every later SyncWritten: Linux
  // reports a writeback error once, and the blobs it hit may be lost.
  Status sync_error_;                      // guarded by mu_
};

}  // namespace guard
