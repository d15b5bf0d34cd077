// Planning and applying a restore: `guard undo` (back to the state before the
// session, or before operation SEQ) and `guard replay` (forward to the state
// the session left, or just after operation SEQ). Specified in docs/restore.md.
//
// The target state of every path the session touched comes from
// SessionHistory::StateAfter. Applying it is a pass over those paths
// (removals deepest first, then creations and updates shallowest first), after
// the session's directory moves have been reversed (undo) or repeated
// (replay), so that files below a moved directory that the session never
// named move back with it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/blob_store.h"
#include "common/session_history.h"
#include "common/status.h"
#include "supervisor/safe_tree.h"

namespace guard {

enum class RestoreDirection { kUndo, kReplay };

struct RestoreRequest {
  RestoreDirection direction = RestoreDirection::kUndo;
  uint64_t to_seq = 0;             // 0: the whole session
  std::vector<std::string> paths;  // root-relative; empty: every path
};

struct RestoreItem {
  std::string path;
  std::string present;  // where what will be at `path` is now (differs below moved directories)
  FileState current;
  FileState target;
  bool conflict = false;  // current is neither the expected start nor the target
};

struct RestorePlan {
  RestoreDirection direction = RestoreDirection::kUndo;
  uint64_t boundary = 0;             // targets are StateAfter(path, boundary)
  std::vector<RestoreItem> targets;   // every path with a known target, sorted by path
  std::vector<RestoreItem> changes;   // those whose present state differs from the target
  std::vector<std::string> unknown;  // "path: why" for targets the history cannot tell
  std::vector<const HistoryOp*> moves;  // directory moves, in the order to apply them
  size_t conflicts() const;
};

Status PlanRestore(const SessionHistory& history, const SafeTree& tree, const BlobStore& store,
                   const RestoreRequest& request, RestorePlan* plan);

struct RestoreResult {
  size_t changed = 0;
  std::vector<std::string> failed;  // "path: reason", one per path not restored
};

// Applies `plan` (conflicting paths included: the caller decides whether to
// proceed with conflicts). Syncs what it wrote before returning.
Status ApplyRestore(const RestorePlan& plan, const BlobStore& store, SafeTree* tree, RestoreResult* result);

// "modify", "create", "remove", "chmod", ... for listing a change.
std::string DescribeChange(const RestoreItem& c);

}  // namespace guard
