// Capture: decides, for one mutating call a producer (the tracer) stopped,
// what the undo log must hold before the call may proceed, and records it.
//
// Invariant: when Before() lets a call proceed, every record describing it,
// and the blob of every pre-image it names, has been handed to the kernel
// (journal write(2) done, blob renamed into the store). A supervisor killed
// after that point loses nothing; the group commit bounds what a power loss
// can cost.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <map>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <spdlog/logger.h>

#include "common/journal_record.h"
#include "supervisor/capture/call_observer.h"
#include "supervisor/capture/calls_in_flight.h"
#include "supervisor/capture/capture_log.h"
#include "supervisor/capture/learned_outcome.h"
#include "supervisor/capture/link_index.h"
#include "supervisor/capture/mutation.h"

namespace guard {

enum class CaptureFailurePolicy { kBlock, kAllow };

struct CaptureConfig {
  std::string root;       // absolute, canonical: the protected tree
  std::string state_dir;  // absolute, canonical: guard's own state, never writable by tracees
  // The shim's inbox root (state_dir.h), written by the shim's own calls
  // only: protected from every other call as state_dir is. "" if none.
  std::string inbox_dir;
  // guard's configuration directory (config.h): its retention settings
  // decide what gc removes, so it is protected as state_dir is. "" if none.
  std::string config_dir;
  CaptureFailurePolicy on_failure = CaptureFailurePolicy::kBlock;
};

class Capture final : public MutationSink {
 public:
  // `log` receives the records (the session's Recorder; a fake in unit
  // tests). `saver`, if given, is told of every call that may change a path
  // under the root, before its records are appended and once it has
  // returned (the session's WorkSaver).
  Capture(CaptureConfig config, CaptureLog* log, std::shared_ptr<spdlog::logger> logger,
          CallObserver* saver = nullptr);

  Verdict Before(const Mutation& m) override;
  // `result` is the syscall's return value (negative errno on failure).
  void After(pid_t tid, long result) override;
  // A call let run without an exit stop has returned: its outcome is
  // recorded when the tree shows what it did, else left unknown
  // (learned_outcome.h).
  void Returned(pid_t tid) override;
  // `tid` died inside its recorded call (its outcome will never be known):
  // the call may have happened, so its paths count as changed and their
  // final states are recorded when the session is sealed.
  void Abandon(pid_t tid) override;
  // The program of `tid` changed (exec) or it exited: forget its name.
  void ForgetProcess(pid_t tid) override { comm_.erase(tid); }
  // Appends a kMark record (capture_mark.cc).
  long Mark(pid_t tid, std::string_view label, bool step) override;
  // The result of a call that a producer reported to Before only once it
  // had run (the shim: Mutation::pre), with what that producer saw the call
  // leave right after it: `result_errno` 0 when it succeeded, `after` the
  // state of the path it left something at (a rename's or link's
  // destination, else its path); unused when it failed.
  void Ran(pid_t tid, int32_t result_errno, const FileState& after);
  // `tid`, past the call Before let run with settle_later, has made another
  // that a producer reports with `seen`, the lstat of `path` it made just
  // before that next call: the state the first left at `path` when it names
  // it (a producer that reports calls after they ran, the shim, cannot let
  // the tree speak: it may show later calls). Otherwise as Returned.
  void ReturnedBefore(pid_t tid, const std::string& path, const KnownLstat& seen);
  // A change a producer saw after it happened (ObservedChange): appends
  // the operation record it amounts to, with `before` as its pre-image, and
  // its outcome with `after` (capture_observed.cc). Changes outside the
  // root, or of guard's own state, are not recorded.
  Status Observed(const ObservedChange& change);
  // Watch mode as the net under the shim (`--mode auto` where ptrace is
  // refused; docs/capture.md, "The net"): `existed` says whether a path
  // (relative) was there when the session started. A call recorded on a
  // path no record named before, that finds something there which was not
  // there at the start, is preceded by the creation no producer saw (a
  // file made by a raw system call), flagged kObserved (capture_observed.cc).
  void SetStartTree(std::function<bool(const std::string& rel)> existed) { existed_at_start_ = std::move(existed); }
  // Whether a record has named `abs` (a path under the root).
  bool Named(const std::string& abs) const;
  // Whether a call of `tid` is recorded and waits for its result.
  bool InCall(pid_t tid) const { return calls_.Has(tid); }

  uint64_t refused() const { return refused_; }
  uint64_t not_captured() const { return not_captured_; }

 private:
  struct Target;
  static void Classify(const Mutation& m, const CaptureConfig& config, Target* t);
  Verdict Unresolved(const Mutation& m);
  bool IsProtected(const MutationRequest& req, const Target& t) const;
  bool IsHarmless(const MutationRequest& req, const Target& t) const;
  // Removes the links Describe made into pending/ for `r`, which will not
  // be recorded (a capture looked at again, or refused). Not for the
  // shim's pre-images (the feed's).
  void DropUnrecordedPending(const Record& r);
  // What Describe finds a call to be.
  enum class Described {
    // It cannot change anything guard keeps: it acts outside it, or it
    // will fail, and were another process to change its paths first (a
    // name made, a name removed), that process's records would name them.
    kNothing,
    // Recorded before it runs: `r` is filled.
    kRecord,
    // It will fail as the tree stands, but another process could make it
    // succeed before it runs, and then it would change a name no record
    // names (a rename whose destination is taken, with RENAME_NOREPLACE,
    // takes its source away once the destination is removed; a link whose
    // source is absent makes a name once the source is made). Recorded
    // after it ran, if it succeeded: `r` has its kind and paths
    // (capture_late.cc). A call that would change or remove what it found
    // (OrderOnly: an unlink, rmdir, truncate, chmod or open for writing of a
    // name that is absent or of the wrong type) is the same: in flight, it
    // holds the calls of others on its name until it has run, so that it
    // cannot meet a file their records put there after it.
    kIfItSucceeds,
  };
  // The kinds a kIfItSucceeds call records that change or remove what
  // their name holds, rather than make or move a name: their success
  // meets a file no traced call made, whose state before them is unknown.
  static bool OrderOnly(OpKind k) {
    return k == OpKind::kDelete || k == OpKind::kRmdir || k == OpKind::kModify || k == OpKind::kChmod;
  }
  // The steps of Before (capture.cc), in order. Admit: false, with *v,
  // when the call is refused for what it names (guard's state, another
  // process's memory) or left alone (a pseudo-file, a foreign name outside
  // the root). DetachAdoptedTarget: gives the store its own copy of a file
  // the call would change that an earlier call adopted; false, with *v,
  // when that fails and the policy refuses. Look: Describe, looking again
  // when a name vanished in between. AwaitLateCall: a call Look found
  // kIfItSucceeds. RecordCall: appends the records of a kRecord call, with
  // what it carries, and opens its PendingOp; the verdict says how its end
  // is to be reported. NoteAdopted: the pending blob `pending`, linked from
  // `from`, is the store's until the seal.
  bool Admit(const Mutation& m, const Target& t, Verdict* v);
  bool DetachAdoptedTarget(const MutationRequest& req, Target* t, Verdict* v);
  Described Look(const Mutation& m, Target* t, Record* r, Status* capture_error);
  Verdict AwaitLateCall(const Mutation& m, const Target& t, Record r);
  Verdict RecordCall(const Mutation& m, const Target& t, Record r, bool moves_names_below);
  // `known`: the lstat of the file the pending blob was linked from, when
  // the producer saw it (a shim's CALL); else pending/ is looked at.
  void NoteAdopted(const std::string& pending, const std::string& from, PendingOp* op,
                   const KnownLstat* known = nullptr);
  // The shim's copy of `rel`'s content before a change in place (`before`,
  // recorded): resolved at once when the file is large enough to chain on,
  // as an append object when it grew from the last version the session
  // stored (a log opened with `>>`), so that the session keeps the bytes
  // appended, not a copy per open, and the next version can chain on it.
  void ChainShimPreImage(const std::string& rel, const FileState& before);
  // Fills op fields of `r` from the request.
  Described Describe(const MutationRequest& req, const Target& t, Record* r, Status* capture_error);
  // For a call Describe found kIfItSucceeds, on `abs` (and `abs2`, else
  // ""): waits for its result, which the producer must report (watch_exit).
  // `states_taken`: r's before states are the producer's own, taken before
  // the call (PendingOp::late_states_taken).
  Verdict AwaitLate(pid_t tid, const std::string& abs, const std::string& abs2, Record r, bool states_taken);
  // The call of `op` (op->late) ended with `result_errno`: when it
  // succeeded, appends its record, with the states its paths held just
  // before it as far as what it left tells (capture_late.cc), and makes
  // *op the op of that record; false when there is nothing to complete.
  // `after`, if given, is what the producer saw the call leave (Ran).
  bool RecordLate(PendingOp* op, int32_t result_errno, const FileState* after);
  // RecordLate's last step: appends `r`, the call having run.
  bool AppendLate(PendingOp* op, Record r, bool inside, bool inside2);
  // For a rename or exchange across the root boundary: the records of the
  // entries below the directory that leaves the root (`leaving`, to append
  // before `r`) and below the one that enters it (`arriving`, after `r`).
  // Returns the first failure to save a pre-image of a leaving entry.
  // *dir_arrives: a directory enters the root (whatever it holds).
  Status DescribeCarried(const Target& t, const Record& r, std::vector<Record>* leaving,
                         std::vector<Record>* arriving, bool* dir_arrives);
  // For a write or chmod of a file with several names: a record like `r`
  // for each other name of its inode inside the root (kSameInode).
  void DescribeSameInode(const Target& t, const Record& r, std::vector<Record>* same);
  // Appends `carried` records for the call `r` describes, noting them in *op.
  Status AppendCarried(const Record& r, std::vector<Record>* carried, PendingOp* op);
  // Applies the capture failure policy to `error`, the failure to save the
  // pre-image of `what`: false when the call must be refused (*v says how).
  bool MayProceedUncaptured(const std::string& what, const Status& error, Verdict* v);
  // A call on an open file with no name of its own (Mutation::unnamed):
  // false, with *v, when no name guard keeps changes; else true, with
  // *named the same call on a name the file still has under the root.
  bool NameUnnamed(const Mutation& m, Mutation* named, Verdict* v);
  // Gives the store its own copy of the file adopted as inode (dev, ino),
  // if this session adopted one (adopted_): a call about to change that
  // inode would change the pre-image. *was: it was adopted.
  Status DetachIfAdopted(dev_t dev, ino_t ino, bool* was);
  Verdict Refuse(const std::string& what, const Status& why);
  // The state call `seq` left at `abs`, for its outcome: kUnknown, logged,
  // when it cannot be examined.
  void AfterState(const std::string& abs, uint64_t seq, FileState* out);
  // Tells the work saver that the call of `op` has ended.
  void EndCall(const PendingOp& op, bool happened);
  // Records the outcome of `op`, the call of `tid`: `result_errno` 0 when
  // it happened. `after`, if given, is the state it left (else read now).
  void Complete(const PendingOp& op, pid_t tid, int32_t result_errno, const FileState* after);
  // `op` ended with no outcome to record: it may have happened, so its
  // paths count as changed and get final states at the seal.
  void LeaveUnknown(const PendingOp& op);
  // Notes in calls_ that the call now handed to Before names these paths;
  // returns whether it may move names below a directory.
  bool Stamp(const MutationRequest& req, const Target& t);
  // The file adopted for `op` is still at its name (the call did not
  // remove it): the store gets a copy of its own, since the journal keeps
  // naming it as the pre-image.
  void DetachIfStillInTree(const PendingOp& op);
  const std::string& Comm(pid_t tid);
  std::string Relative(const std::string& abs) const;
  // The creation of `rel` (now `now`) that no producer saw, when the net is
  // set and `rel` was not there at the start (SetStartTree).
  Status RecordUnseenCreation(const std::string& rel, const FileState& now);

  CaptureConfig config_;
  CaptureLog* recorder_;
  std::function<bool(const std::string& rel)> existed_at_start_;  // SetStartTree
  std::shared_ptr<spdlog::logger> log_;
  CallObserver* saver_;
  std::unordered_map<pid_t, std::string> comm_;
  // The recorded calls in flight and their order (calls_in_flight.h).
  CallsInFlight calls_;
  LinkIndex links_;
  // Files this session adopted into the store by hard link (pending blobs
  // not yet resolved), by inode. A deleted file can still be opened for
  // writing through an fd's /proc link: such a call detaches it first.
  // The name is the log's (NotePending's index, CaptureLog::PendingName):
  // every deleted file is adopted, and a copy of its name here would cost
  // as much again as the index map itself.
  std::map<std::pair<dev_t, ino_t>, uint32_t> adopted_;
  // The call Before is handling was reported after it ran (Mutation::pre).
  bool ran_already_ = false;
  uint64_t refused_ = 0;
  uint64_t not_captured_ = 0;
  uint64_t marks_ = 0;
};

}  // namespace guard
