// Retention: how much of the state directory each session holds, and which
// sessions a policy removes. Pure bookkeeping over an inventory of the store
// and the sessions' references; removing is store_gc.h's and the caller's.
//
// A session's size is what it alone holds (its own directory, and the blobs
// no other session names) and what it shares (blobs other sessions name
// too). The policy removes whole sessions, oldest first, while one is older
// than `keep` or the total is over `max_bytes`, and never a protected one:
// a running session, one that needs recovery or cannot be read, or one of
// the `keep_newest` newest sessions of its root.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/store_gc.h"
#include "common/store_refs.h"

namespace guard {

enum class Protection {
  kNone,
  kRunning,        // its supervisor is alive
  kNeedsRecovery,  // running, supervisor gone, not recovered (yet)
  kUnreadable,     // meta.json cannot be read (being created, or damaged)
  kNewest,         // among the newest sessions of its root
};
const char* ProtectionName(Protection p);

struct SessionUsage {
  std::string id;
  std::string root;
  int64_t started_ns = 0;
  int64_t ended_ns = 0;  // 0: unknown or still running
  Protection protection = Protection::kNone;
  uint64_t dir_bytes = 0;  // sessions/<id>/ itself: journal, meta.json, log
  SessionRefs refs;
  bool refs_complete = true;  // false: the journal could not be read whole
  // Computed by ComputeUsage:
  uint64_t own_bytes = 0;     // dir_bytes + blobs only this session names
  uint64_t shared_bytes = 0;  // blobs other sessions name too
  std::vector<size_t> inodes;  // indices into StoreUsage::inode_bytes
};

struct StoreUsage {
  std::vector<SessionUsage> sessions;  // sorted by id (start time)
  std::vector<uint64_t> inode_bytes;   // every blob file of the store, each inode once
  std::vector<int64_t> inode_mtime_ns; // the newest mtime/ctime among the inode's names
  std::vector<uint32_t> inode_refs;    // sessions naming it
  uint64_t store_bytes = 0;            // the whole store
  uint64_t sessions_bytes = 0;         // every session directory
  uint64_t unreferenced_bytes = 0;     // blobs no session names
  uint64_t total() const { return store_bytes + sessions_bytes; }
};

// Fills the byte counts of `usage` from `inv` and each session's refs.
void ComputeUsage(const StoreInventory& inv, StoreUsage* usage);

struct RetentionPolicy {
  int64_t keep_ns = 0;
  uint64_t max_bytes = 0;
  int64_t keep_newest = 3;
};

// Marks the newest `keep_newest` sessions of each root as kNewest (when not
// protected otherwise).
void ProtectNewest(int64_t keep_newest, StoreUsage* usage);

struct RetentionPlan {
  std::vector<std::string> remove;  // oldest first
  std::vector<std::string> why;     // per session: "age" (older than keep), "size" (over the cap), "asked"
  uint64_t total_before = 0;
  uint64_t total_after = 0;  // projected, once removed and swept (blobs newer than cut_ns stay)
  bool within_policy_before = true;
  bool within_policy_after = true;
};

// Which sessions `policy` removes at wall time `now_ns`; blobs changed at or
// after `cut_ns` are not counted as freed (a sweep keeps them).
RetentionPlan PlanRetention(const StoreUsage& usage, const RetentionPolicy& policy, int64_t now_ns, int64_t cut_ns);

// The plan for removing exactly `ids` (guard forget).
RetentionPlan PlanRemoval(const StoreUsage& usage, const std::vector<std::string>& ids, int64_t cut_ns);

// The start time encoded in a session id (YYYYMMDD-HHMMSS-mmm...), or 0.
int64_t SessionIdTimeNs(const std::string& id);

}  // namespace guard
