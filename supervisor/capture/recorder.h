// Recorder: one running session's journal. Stamps records with their
// sequence number, times and process, appends them, keeps the set of paths
// the session changed, and seals the session at its end.
#pragma once

#include <sys/types.h>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/logger.h>

#include "common/blob_store.h"
#include "common/journal_writer.h"
#include "common/session_meta.h"
#include "common/status.h"
#include "supervisor/capture/capture_log.h"

namespace guard {

// Where the seal takes each path's state at the session's end from. Without
// one, it reads the tree. The work saver (work_saver.h) reuses what it
// saved while the session ran; recovery (recovery_end_state.h) decides
// between the tree and the session's last saved state.
class EndStateReader {
 public:
  virtual ~EndStateReader() = default;
  // Paths to seal besides those the recorder knows (every path that has a
  // post-image gets a final state, so that a reader that takes the last
  // final record of a path as its end is never misled by a post-image).
  virtual void AddPaths(std::set<std::string>* paths) const = 0;
  // The end state of `rel` (absolute `abs`), content saved, and the
  // RecordFlags of its final record. `beneath` false: a directory above
  // `rel` is now a file or a symlink, so the tree holds nothing at `rel`
  // beneath the root, and `abs` must not be looked at (it could lead out of
  // the root). Called from several threads at once.
  virtual Status Read(const std::string& rel, const std::string& abs, bool beneath, FileState* out,
                      uint32_t* flags) = 0;
};

class Recorder final : public CaptureLog {
 public:
  // What the recorder keeps of one path the session touched: 24 bytes, with
  // its name as the map's key. A session may touch 100,000 paths and more,
  // and the supervisor's memory must not grow by a whole FileState (and its
  // heap strings) for each: of the first state, the seal only needs to tell
  // whether the end state certainly equals it (SameState in recorder.cc).
  struct PathNote {
    enum class Id : uint8_t { kNone, kKey, kPendingName, kTarget };
    static constexpr uint8_t kChanged = 1;    // NoteChanged, or below a moved directory: sealed
    static constexpr uint8_t kHasFirst = 2;   // `type`, `mode`, `id` hold its first state
    static constexpr uint8_t kEndReader = 4;  // named by the EndStateReader only: sealed
    uint32_t mode = 0;
    FileType type = FileType::kAbsent;
    Id id_kind = Id::kNone;
    uint8_t bits = 0;
    // kKey: the content's key; kPendingName: the hash of the pending blob's
    // name (the seal maps it to the key it resolved to); kTarget: the hash
    // of the symlink's text.
    BlobKey id;
  };

  Recorder(SessionMeta meta, std::string meta_path, std::unique_ptr<JournalWriter> journal,
           BlobStore* store, std::shared_ptr<spdlog::logger> log);

  // Stamps (seq, wall and monotonic time) and appends `*r`. Operation records
  // count toward meta().ops. Thread-safe: the tracer and the work saver
  // both append; records reach the journal in the order of their seq.
  // `end_offset`, if given, receives the journal's size just after the record.
  Status Append(Record* r, uint64_t* end_offset = nullptr) override;
  // Called with each record once it is appended, under the append lock
  // (the store's cap in a session: session_cap.h). Set before any append.
  void SetAppendHook(std::function<void(const Record&)> hook) { appended_ = std::move(hook); }
  // Stamps and appends `records` in their order, with consecutive seqs and
  // one write(2) (JournalWriter::AppendAll): the seal's many records.
  Status AppendAll(const std::vector<Record*>& records);
  // A path under the root (relative) that an operation changed.
  void NoteChanged(const std::string& rel_path) override;
  // A directory (relative) that a rename or exchange moved: at Seal,
  // everything below it is recorded with kFinal too.
  void NoteMovedDirectory(const std::string& rel_path) override { moved_dirs_.insert(rel_path); }
  // What a path under the root held before the session first touched it
  // (only the first call per path counts).
  void NoteFirstState(const std::string& rel_path, const FileState& before) override;
  bool HasFirstState(const std::string& rel_path) const override {
    auto it = paths_.find(rel_path);
    return it != paths_.end() && (it->second.bits & PathNote::kHasFirst);
  }
  // A pending blob named by a record of this session, to be resolved at
  // Seal. Returns its index, by which PendingName gives the name back until
  // Seal (so that a caller that must find the name again keeps 4 bytes, not
  // a copy of it); DropPending of the last one noted frees its index.
  size_t NotePending(const std::string& pending_name) override;
  const std::string& PendingName(size_t index) const override { return pending_[index]; }
  // The pending blob of an operation that failed: nothing refers to it any more.
  void DropPending(const std::string& pending_name) override;
  // A pending blob no record names (a pre-image whose CALL never reached the
  // journal), kept by itself: resolved at Seal like the others, its
  // `blob-resolved` record flagged kUnnamedPreImage with `as_put` (the file
  // as it lay in the pending area: size, mtime, ctime) as its `after`.
  void NoteUnnamedPending(const std::string& pending_name, const FileState& as_put);
  // The pending names records of this session named (NotePending) that no
  // failed call dropped since: every one the seal will resolve. Sorted
  // views of the recorder's own names (16 bytes each, not a copy of each
  // name: a session of 100,000 deletes notes 100,000): valid while the
  // recorder lives; noting more keeps them valid, dropping does not.
  std::vector<std::string_view> NotedPending() const;

  // Guard saw, in this session, what no honest producer makes (`what`, in
  // plain words): appends an `incomplete` record (format 1.4) and writes
  // meta.json with it, once; later calls only return. Thread-safe.
  Status NoteIncomplete(const std::string& what);

  // Ends the session: resolves pending blobs (kBlobResolved), records the
  // final state of every changed path (kFinal), appends kSessionEnd, syncs,
  // and writes meta.json with how it ended.
  // `ended_ns` is when the session ended, if known better than "now"
  // (recovery uses the time of its last record). `end_states` says where
  // the final states come from (null: the tree). Nothing else may append
  // while it runs.
  Status Seal(SessionState state, int exit_code, int signal, int64_t ended_ns = 0,
              EndStateReader* end_states = nullptr);
  // Recovery continues a journal: the next record gets sequence number `seq`.
  void ContinueAt(uint64_t seq, uint64_t ops) {
    next_seq_ = seq;
    meta_.ops = ops;
  }

  JournalWriter* journal() { return journal_.get(); }
  BlobStore* store() override { return store_; }
  SavedVersions* versions() override { return &versions_; }
  const SessionMeta& meta() const { return meta_; }
  // A restore session's account (session_meta.h), written by Seal; as
  // Seal, with nothing else appending.
  void SetRestoreOf(const RestoreOf& restore) { meta_.restore = restore; }
  // Paths touched by the session (after Seal: every path it sealed), and
  // of those, the ones whose end state differs from their first state
  // (valid after Seal).
  size_t touched_count() const { return touched_; }
  size_t changed_count() const { return files_changed_; }

 private:
  void MarkChanged(const std::string& rel_path);
  void AddTreeBelow(const std::string& rel_dir);

  SessionMeta meta_;
  std::string meta_path_;
  std::unique_ptr<JournalWriter> journal_;
  BlobStore* store_;
  std::shared_ptr<spdlog::logger> log_;
  std::mutex append_mu_;  // orders seq numbers with journal appends
  uint64_t next_seq_ = 1;  // guarded by append_mu_ (and meta_.ops with it)
  std::map<std::string, PathNote> paths_;
  size_t touched_ = 0;  // paths_ with kChanged (after Seal: every path sealed)
  // Pending blobs to resolve at Seal, in the order noted (each adoption
  // makes a new name: a name is noted once, but for recovery, which may
  // note one twice); sorted and deduplicated at Seal. No tree node per
  // name, and a deque so that growing never holds two copies of the list.
  std::deque<std::string> pending_;
  // Dropped names that were not the last one noted (rare: another call was
  // recorded between the adoption and the failure): left out at Seal.
  std::set<std::string> dropped_;
  std::set<std::string> moved_dirs_;
  std::map<std::string, FileState> unnamed_;  // NoteUnnamedPending
  SavedVersions versions_;
  std::function<void(const Record&)> appended_;  // SetAppendHook
  size_t files_changed_ = 0;
};

}  // namespace guard
