// Garbage collection of a state directory: `guard gc`, `guard forget`, and
// the automatic gc after a session ends. It recovers orphaned sessions
// first, measures what each session holds, removes whole sessions (as the
// retention policy, or the user, says), then sweeps the blobs no kept
// session names (common/store_gc.h). One gc at a time: $GUARD_HOME/gc.lock.
//
// Kill safety: a session is removed by renaming its directory to a hidden
// name (ListSessions skips those), syncing sessions/, then deleting it; the
// next gc finishes a deletion a kill interrupted. Blobs are swept only
// after every removal is durable, and only those no remaining session
// names, so a kill at any point leaves every kept session complete.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/retention.h"
#include "common/store_compact.h"
#include "common/state_dir.h"
#include "common/status.h"
#include "supervisor/session/recovery.h"

namespace guard {

// What every session holds, measured now; *cut_ns is the sweep cut that
// measurement allows (docs/format.md, Part II, "Garbage collection").
Status MeasureStore(const StateDir& state, StoreInventory* inv, StoreUsage* usage, int64_t* cut_ns);

struct GcRequest {
  RetentionPolicy policy;
  // Non-empty: remove exactly these sessions (guard forget), not the policy's.
  std::vector<std::string> forget;
  bool dry_run = false;
  // Do nothing when the store is within the policy (the automatic gc).
  bool only_if_over = false;
  // Wait for another gc to finish; else return at once (ran stays false).
  bool wait_for_lock = true;
  // Called as work advances: phase ("reading journals", "sweeping"), done, total.
  std::function<void(const char*, size_t, size_t)> progress;
};

struct GcReport {
  bool ran = false;  // false: another gc held the lock, or within policy (only_if_over)
  std::vector<RecoveryReport> recovered;
  RetentionPlan plan;
  std::vector<std::string> removed;
  std::vector<std::string> skipped;  // "ID: why", sessions asked for or planned but left
  bool swept = false;
  std::string no_sweep;  // why blobs were not swept, when they were not
  SweepReport sweep;
  CompactReport compact;  // raw objects compressed (store_compact.h)
  std::string compact_error;  // why compaction stopped, when it did
  uint64_t total_after = 0;  // measured again at the end (projected for a dry run)
  double seconds = 0;
};

Status CollectGarbage(const StateDir& state, const GcRequest& request, GcReport* report);

}  // namespace guard
