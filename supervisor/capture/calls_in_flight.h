// CallsInFlight: the order between the calls of different threads, as
// Capture keeps it. Which recorded calls are in flight (let run, their end
// not yet seen), which names each one holds, and which calls handed to
// Capture since a call was recorded may have changed its names.
//
// Pure bookkeeping: no file I/O, no clock, no locks (Capture's caller
// serialises every call into it). Unit tests drive it with tables of call
// sequences (tests/unit/capture/calls_in_flight_test.cc).
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/journal_record.h"
#include "supervisor/capture/call_observer.h"
#include "supervisor/capture/learned_outcome.h"

namespace guard {

// An operation recorded before its call ran, waiting for the call's result.
struct PendingOp {
  uint64_t seq = 0;
  std::string abs_path, abs_path2;
  std::string rel_path, rel_path2;  // empty when outside the root
  std::string pending_blob;         // adopted by hard link for this op
  // A rename or exchange of a directory inside the root, or of one entering
  // the root from outside.
  bool moves_directory = false;
  // The records of the entries it carries across the root boundary
  // (supervisor/carried_entries.h), or of the other names of the inode it
  // changes (kSameInode): their seq and root-relative path.
  std::vector<std::pair<uint64_t, std::string>> carried;
  // A link or rename: its destination may be a new name of a linked file.
  bool names_a_file = false;
  // What the call may change, as the work saver is told (empty without one).
  ChangedPaths call;
  // Let run without an exit stop (learned_outcome.h): what learning its
  // outcome needs. `quiet_at`: CallsInFlight::calls_seen() just after it
  // was recorded; `alone`: no other call in flight then named its paths or
  // could move names below a directory (CallsInFlight::Alone).
  bool one_stop = false;
  OneStopCall learn;
  uint64_t quiet_at = 0;
  bool alone = false;
  // A rename or exchange that may move a directory, or a call whose names
  // guard could not tell: what it changes is not its paths alone.
  bool moves_names_below = false;
  // The inode adopted for `pending_blob`, and the path that held it.
  dev_t pending_dev = 0;
  ino_t pending_ino = 0;
  uint32_t pending_index = 0;  // CaptureLog::NotePending's, as adopted_ holds it
  std::string pending_from;
  // A call guard predicted would fail, which a call of another process
  // could have let succeed meanwhile (Capture::Described::kIfItSucceeds):
  // nothing is in the journal yet; `late` is the record to append, its
  // states still to read, if the call succeeds (capture_late.cc).
  std::optional<Record> late;
  // Its `before` states are the producer's, taken before the call (the
  // shim's: Mutation::pre), not to be read from the tree after it.
  bool late_states_taken = false;
  // Its producer held it until others on its names had ended, and holds
  // others for it (Mutation::holdable, Verdict::wait_for).
  bool holdable = false;
};

class CallsInFlight {
 public:
  // A call is handed to Capture (recorded or not): every call counts.
  void Count() { ++calls_seen_; }
  uint64_t calls_seen() const { return calls_seen_; }

  // Notes that the call being handled names `abs` (and `abs2`, if not
  // null); `moves`: it may move names below a directory (a rename of a
  // directory, an exchange, a name guard cannot tell apart from its own).
  void Stamp(const std::string& abs, const std::string* abs2, bool moves);
  // The call being handled names what guard could not resolve: it may move
  // anything.
  void StampUnknown() { last_tree_move_ = calls_seen_; }

  // Another thread whose recorded call, which its producer can hold others
  // for, names `abs` or `abs2` (or moves a directory above one) and has not
  // been seen to end; 0 if none. Invariant kept with it: two threads' calls
  // on one name run in the order of their records.
  pid_t HolderOf(pid_t tid, const std::string& abs, const std::string* abs2) const;
  // For a call whose names are not known: another thread's holdable call in
  // flight that may move names (it may be making them); 0 if none.
  pid_t MoverInFlight(pid_t tid) const;
  // No call of another thread in flight names `abs` or `abs2`, nor may move
  // names below a directory: the tree will tell what this one did.
  bool Alone(pid_t tid, const std::string& abs, const std::string* abs2) const;
  // Whether no call handed over since `op` was recorded can have changed
  // its paths (stamps after op.quiet_at are other calls').
  bool Quiet(const PendingOp& op) const;

  // The recorded call of `tid`, opened for it (empty if new).
  PendingOp& Open(pid_t tid) { return ops_[tid]; }
  bool Has(pid_t tid) const { return ops_.count(tid) != 0; }
  const PendingOp* Find(pid_t tid) const;
  // Removes and returns the call of `tid`, if any.
  std::optional<PendingOp> Take(pid_t tid);
  void Drop(pid_t tid) { ops_.erase(tid); }
  size_t size() const { return ops_.size(); }

  static constexpr size_t kTouchSlots = 4096;

 private:
  uint64_t& Touched(const std::string& abs) { return touched_[std::hash<std::string>{}(abs) % kTouchSlots]; }
  uint64_t Touched(const std::string& abs) const { return touched_[std::hash<std::string>{}(abs) % kTouchSlots]; }

  // The recorded call each thread is inside, until its result is known.
  std::unordered_map<pid_t, PendingOp> ops_;
  // Calls handed over so far (each counts, recorded or not): a call let run
  // without an exit stop is settled quietly when no other came in meanwhile.
  uint64_t calls_seen_ = 0;
  // Which calls since a one-stop call may have changed its paths: for each
  // path (a slot per hash of its absolute name: a collision only makes a
  // call look less quiet), calls_seen_ at the last call that named it; and
  // at the last call that may move names below a directory (Stamp).
  std::array<uint64_t, kTouchSlots> touched_{};
  uint64_t last_tree_move_ = 0;
};

}  // namespace guard
