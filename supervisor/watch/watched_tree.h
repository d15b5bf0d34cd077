// WatchedTree: what watch mode last saved of every path under the root, and
// the comparison that turns a hint (watch_source.h) into the changes it
// stands for. Platform-free: the Linux and macOS sources share it.
//
// Invariant: for every path under the root, the tree holds the state the
// path had when it was last looked at (its content in the store), or holds
// nothing for a path that did not exist then. A comparison reports a
// difference as the change from that saved state to the state now, and
// then saves the state now: so each change's pre-image is the post-image
// of the change before it, and the first one's is the baseline's.
//
// Paths are read beneath the root's own fd, one component at a time,
// never following a symlink (tree_walk.h): a name swapped for a symlink
// while guard looks is met as the symlink it is.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/blob_store.h"
#include "common/journal_record.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "supervisor/capture/mutation.h"
#include "supervisor/watch/watch_source.h"

namespace guard {

// Content the baseline need not copy because something else keeps it: a
// git repository's objects (supervisor/git/baseline_objects.h, through
// commands/session_watch.cc). The tree asks it of each regular file, and
// fetches the content into the store only when the file first changes.
class KeptContent {
 public:
  virtual ~KeptContent() = default;
  // Before the first Find: whether a file named .gitattributes lies under
  // the root (the baseline's first walk tells).
  virtual void AttributeFilesUnderRoot(bool any) { (void)any; }
  // Whether the content of regular file `rel` (relative to the root), read
  // as `st` (with its stat signature), is kept; *id names it.
  virtual bool Find(const std::string& rel, const FileState& st, std::string* id) = 0;
  // Copies kept content `id` into `store`.
  virtual Status Fetch(const std::string& id, BlobStore* store, BlobKey* key, uint64_t* size) = 0;
  // Keeps every id Find returned until the session's end. Called once,
  // between the baseline's first look at the tree and its reading: what
  // pinning writes under the root (a ref) is then part of the baseline,
  // not a change of the session's.
  virtual Status Pin() = 0;
};

struct WatchedTreeOptions {
  std::string root;  // absolute, canonical
  // guard's own directories below the root (its state, its configuration):
  // never walked, never reported.
  std::vector<std::string> excluded;
  // How many bytes of content the baseline saves at most. Files are taken
  // smallest first; past the budget, the larger ones are kept by name only
  // (their type, mode and size, not their content): a data set or a
  // node_modules tree does not hold the session's start for minutes.
  uint64_t baseline_budget = uint64_t{2} << 30;
  // A file hinted again less than this after its content was last read is
  // left for a later round (Catch's `deferred`): a file written without
  // pause is read a few times a second, not at every round.
  int64_t reread_after_ns = 200 * 1000 * 1000;
  // How the baseline saves a file's content, cheapest first: by `kept`'s
  // id (null: never); by a copy-on-write clone into the store's pending/
  // where the filesystem can (BlobStore::AdoptByClone; tried until it
  // first fails for want of support); by a copy. Kept and cloned files
  // cost no copying and are outside the budget.
  KeptContent* kept = nullptr;
  bool clone = true;
};

// What the baseline found and saved.
struct BaselineSummary {
  uint64_t files = 0;        // regular files
  uint64_t directories = 0;  // the root not counted
  uint64_t others = 0;       // symlinks, fifos, sockets, devices
  uint64_t bytes_saved = 0;  // content read into the store (before deduplication)
  uint64_t name_only = 0;    // regular files kept by name only (the budget)
  uint64_t name_only_bytes = 0;
  uint64_t unreadable = 0;   // paths that could not be read (kept as what their lstat said)
  uint64_t cloned = 0;       // regular files saved by a clone (no bytes read)
  uint64_t cloned_bytes = 0;
  uint64_t kept = 0;         // regular files saved by KeptContent's id (no bytes read)
  uint64_t kept_bytes = 0;
  std::string clone_error;   // why the first clone failed ("" when none was refused)
};

class WatchedTree {
 public:
  // A difference: the change, and whether its pre-image lacks content
  // (a file the baseline kept by name only, or could not read).
  using Emit = std::function<Status(const ObservedChange& change, bool before_not_captured)>;

  WatchedTree(WatchedTreeOptions options, BlobStore* store);

  // Opens the root and saves the state of every path under it. Before the
  // command runs: nothing is reported.
  Status Baseline(BaselineSummary* summary);

  // What was saved of one path: its state, and whether the store lacks its
  // content (a regular file kept by name only, or unreadable).
  struct SavedPath {
    std::string rel;
    FileState state;
    bool not_captured = false;
    // Content kept by KeptContent under this id and not yet fetched (the
    // baseline's git object id); state.blob is kNone then.
    std::string kept_id = {};
  };
  // Recovery's catch-up (session/watch_catch_up.h): opens the root and
  // takes `saved` as what was saved last of each path, without reading
  // the tree; Catch then compares the tree with it.
  Status Resume(const std::vector<SavedPath>& saved);
  // Each saved path, in path order (the baseline's file, watch_baseline.h).
  void ForEachSaved(const std::function<void(const SavedPath&)>& fn) const;

  // Compares each hinted name (HintSet::Take's: none covering another)
  // with its saved state and emits every difference, in an order that
  // undoing them in reverse puts the tree back: below a name, removals
  // deepest first, then creations and changes parents first. With
  // `deferred`, a regular file read less than reread_after_ns ago is not
  // read again: its hint is appended there, for a later round; without
  // it (a Barrier), every hinted name is compared now.
  Status Catch(const std::vector<WatchHint>& hints, const Emit& emit,
               std::vector<WatchHint>* deferred = nullptr);

  // The saved state of `rel` (relative to the root), or null.
  const FileState* Saved(const std::string& rel) const;
  size_t size() const { return saved_.size(); }
  const std::string& root() const { return options_.root; }

  // Every path saved now (relative, sorted): after the baseline, what was
  // there at the start.
  std::vector<std::string> Paths() const;

  // Removes the baseline's clones that no change named (pending blobs no
  // record will resolve). At the session's end, after the last round.
  void DropUnusedClones();

 private:
  struct Entry {
    FileState state;
    bool not_captured = false;  // a regular file whose content the store does not hold
    int64_t read_ns = 0;        // CLOCK_MONOTONIC when its content was read (0: never)
    // Content kept by KeptContent under this id, not yet in the store
    // (state.blob is kNone until Change fetches it).
    std::string kept_id;
  };
  // What ReadAt saves of a regular file's content: nothing; a copy; a clone
  // where the store can take one, else a copy (kBaseline); a clone or
  // nothing (kCloneOnly: a file past the baseline's budget).
  enum class Content { kNone, kCopy, kBaseline, kCloneOnly };
  // A path read now: its state (content saved when it differs), or absent.
  struct Now {
    std::string rel;
    Entry entry;
  };

  bool Excluded(const std::string& rel) const;
  // Reads `name` in `dir_fd` (lstat `st`) into *out: content saved into the
  // store when `content`. `previous`: the path's saved state, if any; a
  // file that grew from its stored content is stored as an append object
  // (docs/format.md (Part II), "Append objects").
  Status ReadAt(int dir_fd, const std::string& name, const struct stat& st, Content content, Entry* out,
                BaselineSummary* summary = nullptr, const FileState* previous = nullptr);
  // A baseline entry made ready to be a pre-image: kept content fetched.
  void Materialize(Entry* saved);
  // Whether the clone `pending` holds the content of blob `key`.
  bool CloneHolds(const std::string& pending, const BlobKey& key) const;
  // The state of `rel` now, beneath the root (absent when a component is
  // missing, not a directory, or a symlink); *st its lstat (st_mode 0 when
  // absent).
  Status ReadPath(const std::string& rel, Entry* out, struct stat* st);
  // *deferred: left for a later round (Catch).
  Status ComparePath(const std::string& rel, const Emit& emit, bool may_defer, bool* deferred);
  Status CompareTree(const std::string& rel, const Emit& emit);
  // The other saved names of the file `rel` now is (lstat `st`, more than
  // one link), compared now.
  Status CompareOtherNames(const std::string& rel, const struct stat& st, const Emit& emit);
  // The root directory's own state against root_state_: a chmod of the
  // root is a change of ".".
  Status CompareRoot(const Emit& emit);
  // Emits the change of `rel` from its saved state to `now` and saves `now`.
  Status Change(const std::string& rel, Entry now, const Emit& emit);
  std::string Abs(const std::string& rel) const;

  WatchedTreeOptions options_;
  BlobStore* store_;
  UniqueFd root_fd_;
  bool clone_refused_ = false;  // the store's filesystem cannot clone from the root's
  std::map<std::string, Entry> saved_;  // by path relative to the root; the root itself is root_state_
  FileState root_state_;                 // the root directory's own state (its mode), from the baseline on
};

}  // namespace guard
