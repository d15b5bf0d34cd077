// SessionHistory: one session read back from its journal, in the form the
// restore and review commands need: the operations that took effect, in
// order, with blob references resolved, and the answer to "what did this path
// hold just after operation K?".
//
// How states are derived (docs/restore.md): a path's state just after op K is
// the state recorded *before* the next operation that touches it (before for
// its `path`, before2 for its `path2`), or its kFinal state if no later
// operation touches it. Where that recorded state carries no content (a
// rename's source, a chmod), the content is followed: it moved with the
// rename to path2, or it is unchanged by the chmod, so the search goes on
// from there.
//
// Post-images (kFinal records flagged kPostImage, written while the session
// ran) stand in for the final state of a path that has none (the session
// died and was not recovered), when no operation names the path, or moves a
// directory above it, after the post-image (docs/format.md, Part IV).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/journal_record.h"
#include "common/session_meta.h"
#include "common/state_dir.h"
#include "common/status.h"

namespace guard {

struct HistoryOp {
  Record op;                     // the operation record, blob refs resolved where known
  bool outcome_known = false;    // a kOutcome was recorded
  int result_errno = 0;          // from the kOutcome
  FileState after;               // from the kOutcome
  uint64_t outcome_seq = 0;      // the kOutcome's own seq
  // No outcome was recorded (the process or guard died during the call) and
  // what the journal says of the path afterwards shows the call did not take
  // effect: a rename whose source is still there, an exchange whose first
  // name still holds its own file. Left out of ops().
  bool not_run = false;
  bool inside() const { return !(op.flags & kOutsideRoot); }
  bool inside2() const { return !op.path2.empty() && !(op.flags & kOutsideRoot2); }
};

class SessionHistory {
 public:
  // Reads meta.json and the journal of session `id`. Journal damage does not
  // fail the load: it is described in problems() and the readable records are
  // used.
  static Status Load(const StateDir& state, const std::string& id, SessionHistory* out);
  // For tests and tools: from records already read.
  static SessionHistory FromRecords(SessionMeta meta, const std::vector<Record>& records);

  const SessionMeta& meta() const { return meta_; }
  const std::vector<std::string>& problems() const { return problems_; }
  // Operations that took effect (success, or outcome unknown because the
  // process or guard died during the call, unless not_run), in sequence
  // order. Failed calls are left out.
  const std::vector<HistoryOp>& ops() const { return ops_; }
  // Every operation record read, failed ones included, for the timeline.
  const std::vector<HistoryOp>& all_ops() const { return all_ops_; }
  // The session's marks (kMark records, `guard mark`), in sequence order;
  // common/session_marks.h names and finds them.
  const std::vector<Record>& marks() const { return marks_; }
  // The `incomplete` records (format 1.4), in sequence order: guard saw a
  // forgery, and the log may lack changes from the first one's time on
  // (meta().incomplete_ns says the same, taken from here when meta.json
  // lacks it).
  const std::vector<Record>& incomplete() const { return incomplete_; }
  // Whether a `thinned` record (1.5) names `key`: the session dropped that
  // version when the store's cap bound (docs/gc.md), so a restore that
  // needs it cannot be exact.
  bool Thinned(const BlobKey& key) const { return thinned_.count({key.high, key.low}) > 0; }
  // The pre-images kept without a record that names them: `blob-resolved`
  // records of pending names no other record holds (flagged
  // kUnnamedPreImage when the seal kept them; by recovery's orphan sweep
  // without), in sequence order.
  const std::vector<Record>& unnamed_pre_images() const { return unnamed_pre_images_; }
  bool sealed() const { return sealed_; }
  // The end state of every path that has one: its final state, else its
  // last post-image if no later operation supersedes it.
  const std::map<std::string, FileState>& finals() const { return finals_; }
  // The RecordFlags of final states that carry any (kChangedAfterEnd,
  // kEndNotSaved: recovery found the tree changed after the session ended).
  const std::map<std::string, uint32_t>& final_flags() const { return final_flags_; }
  // Whether recovery found the tree changed after the session ended (a
  // final flagged kChangedAfterEnd): the tree it walked below moved
  // directories was not the session's end.
  bool changed_after_end() const { return changed_after_end_; }
  // Paths with at least one post-image.
  std::vector<std::string> PostImagedPaths() const;
  // Every name an operation or a post-image used, under the name the
  // directory moves after it give it at the end of the session: where the
  // session's end may have something the tree no longer shows.
  std::set<std::string> NamesAtEnd() const;

  // What the journal alone says `path` held at the session's end: its last
  // post-image, when no operation names it or moves a directory above it
  // afterwards (*no_writer: nobody had it open for writing then); else the
  // state its last operation, a success, leaves it in when the records say
  // it whole: absent after a delete, rmdir or rename away (of it or of a
  // directory above it), a directory after mkdir, a symlink after symlink,
  // and after a chmod, a link or a rename onto it (or a move of a directory
  // above it) the state it (or the same file under its name before the
  // move) had just before, as far as that is known, with the mode the chmod
  // set. False otherwise.
  bool LastRecordedState(const std::string& path, FileState* out, bool* no_writer) const;
  uint64_t last_seq() const { return ops_.empty() ? 0 : ops_.back().op.seq; }

  // Paths whose state at the end of the session differs from their state
  // before it (type, mode, symlink target or content), sorted.
  std::vector<std::string> ChangedPaths() const;
  // Paths under the root touched by operations with from < seq <= to.
  std::set<std::string> TouchedPaths(uint64_t from_seq, uint64_t to_seq) const;
  // The state of `path` just after op `seq` (0: before the session). Returns
  // false when the history does not know it (never touched after `seq` and
  // no final state recorded). Then `*lost_at`, if given, is the name where
  // the trail ended: `path` itself, or the name its content had moved to
  // along renames (whose state at the end the journal lost).
  // `end_name`, if given, is set to the name whose end state (finals())
  // the answer came from, or cleared when it came from an operation.
  bool StateAfter(const std::string& path, uint64_t seq, FileState* out, std::string* lost_at = nullptr,
                  std::string* end_name = nullptr) const;

  // The first and the last sequence number of the records one call made
  // together with operation `seq`: a rename that moved a directory across
  // the root boundary and the entries it carried (docs/format.md, Part IV,
  // "Entries carried across the root boundary"); else `seq` itself. A
  // restore to "before SEQ" or "after SEQ" uses them, so that it never
  // lands between the records of one call.
  uint64_t CallStart(uint64_t seq) const;
  uint64_t CallEnd(uint64_t seq) const;

 private:
  // The first operation after `at` that names `p`, or moves a directory
  // holding it (or onto a place holding it), else null.
  const HistoryOp* NextEvent(const std::string& p, uint64_t at) const;
  // The last such operation before `before_seq`, else null.
  const HistoryOp* LastEvent(const std::string& p, uint64_t before_seq = UINT64_MAX) const;
  // LastRecordedState as of just before `before_seq`.
  bool RecordedStateBefore(const std::string& p, uint64_t before_seq, FileState* out, bool* no_writer,
                           int depth) const;
  // finals_ from sealed_finals_ and the post-images that still hold.
  void MergePostImages();
  // Builds by_path_ and moves_ from ops_.
  void Index();
  // Indices into all_ops_ of the first and last record of `seq`'s call.
  bool CallBounds(uint64_t seq, size_t* first, size_t* last) const;
  // The sequence numbers of each thread's records, ascending, by thread id.
  using ThreadSeqs = std::unordered_map<int32_t, std::vector<uint64_t>>;
  // Whether `h`, a call without an outcome, did not take effect, as far as
  // the later records of its paths show (see HistoryOp::not_run), taking a
  // record of another thread as evidence only once h's thread is seen past
  // h (`thread_seqs`).
  bool ShowsNotRun(const HistoryOp& h, const ThreadSeqs& thread_seqs) const;
  // The state of `p` as recorded next after op `seq`: the pre-image of the
  // next operation naming it, else its final state; null when that is not
  // known (a directory above is moved first, or no final state).
  const FileState* NextRecordedState(const std::string& p, uint64_t seq) const;
  // Whether a call of a thread other than h's may have put something at
  // h's path after h ran, unseen by the records that follow h: one recorded
  // after it ran (kAfterItRan) later than h, or one recorded before h whose
  // outcome came after h, or never.
  bool MayBeRemadeAfter(const HistoryOp& h) const;

  SessionMeta meta_;
  std::vector<std::string> problems_;
  std::vector<HistoryOp> ops_;
  std::vector<HistoryOp> all_ops_;
  std::vector<Record> marks_;
  std::vector<Record> incomplete_;
  std::set<std::pair<uint64_t, uint64_t>> thinned_;  // keys of `thinned` records
  std::vector<Record> unnamed_pre_images_;
  std::map<std::string, FileState> finals_;
  std::map<std::string, FileState> sealed_finals_;  // kFinal records without kPostImage
  std::map<std::string, uint32_t> final_flags_;
  bool changed_after_end_ = false;
  struct PostImage {
    uint64_t seq = 0;
    FileState state;
    uint32_t flags = 0;
  };
  std::map<std::string, std::vector<PostImage>> post_images_;  // by path, in seq order
  bool sealed_ = false;
  std::unordered_map<std::string, std::vector<size_t>> by_path_;  // indices into ops_, by seq
  std::vector<size_t> moves_;  // indices into ops_ of directory renames and exchanges, by seq
};

}  // namespace guard
