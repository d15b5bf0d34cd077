#include "supervisor/restore.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace guard {
namespace {

bool Matches(const SafeTree& tree, const std::string& rel, const FileState& cur, const FileState& want,
             std::map<std::string, BlobKey>* hashes) {
  if (cur.type != want.type) return false;
  switch (want.type) {
    case FileType::kAbsent:
      return true;
    case FileType::kSymlink:
      return cur.symlink_target == want.symlink_target;
    case FileType::kRegular: {
      if (cur.mode != want.mode) return false;
      if (want.blob.kind != BlobRef::Kind::kKey) return cur.size == want.size;  // content not comparable
      if (cur.size != want.size) return false;
      auto it = hashes->find(rel);
      if (it == hashes->end()) {
        BlobKey key;
        if (!tree.HashFile(rel, &key).ok()) return false;
        it = hashes->emplace(rel, key).first;
      }
      return it->second == want.blob.key;
    }
    default:
      return cur.mode == want.mode;
  }
}

bool IsUnder(const std::string& path, const std::string& dir) {
  if (dir == "." || path == dir) return true;
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
}

// Whether a directory above `p` is a symlink in the state being restored.
bool TargetHasSymlinkAbove(const SessionHistory& history, uint64_t boundary, std::string p) {
  for (size_t slash; (slash = p.rfind('/')) != std::string::npos;) {
    p.resize(slash);
    FileState st;
    if (history.StateAfter(p, boundary, &st) && st.type == FileType::kSymlink) return true;
  }
  return false;
}

size_t Depth(const std::string& p) { return static_cast<size_t>(std::count(p.begin(), p.end(), '/')); }

bool IsDirectoryMove(const HistoryOp& h) {
  return (h.op.kind == OpKind::kRename || h.op.kind == OpKind::kExchange) && h.inside() && h.inside2() &&
         (h.op.before.type == FileType::kDirectory || h.op.before2.type == FileType::kDirectory);
}

}  // namespace

size_t RestorePlan::conflicts() const {
  return static_cast<size_t>(std::count_if(changes.begin(), changes.end(),
                                           [](const RestoreItem& c) { return c.conflict; }));
}

std::string DescribeChange(const RestoreItem& c) {
  const FileState& cur = c.current;
  const FileState& t = c.target;
  if (t.type == FileType::kAbsent) return "remove";
  if (cur.type == FileType::kAbsent) {
    return t.type == FileType::kDirectory ? "create directory" : t.type == FileType::kSymlink ? "create symlink" : "create";
  }
  if (cur.type != t.type) return std::string("replace ") + FileTypeName(cur.type) + " with " + FileTypeName(t.type);
  if (t.type == FileType::kSymlink) return "retarget symlink";
  if (t.type == FileType::kRegular && cur.size == t.size && cur.mode != t.mode &&
      t.blob.kind == BlobRef::Kind::kKey) {
    return "restore";  // content may match too; the mode certainly differs
  }
  if (cur.mode != t.mode && t.type != FileType::kRegular) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "chmod %04o -> %04o", cur.mode, t.mode);
    return buf;
  }
  return "restore";
}

Status PlanRestore(const SessionHistory& history, const SafeTree& tree, const BlobStore& store,
                   const RestoreRequest& request, RestorePlan* plan) {
  (void)store;
  *plan = RestorePlan();
  plan->direction = request.direction;
  uint64_t last = history.last_seq();
  bool undo = request.direction == RestoreDirection::kUndo;
  if (undo) {
    plan->boundary = request.to_seq ? request.to_seq - 1 : 0;
  } else {
    plan->boundary = request.to_seq ? request.to_seq : last;
  }
  // What the tree is expected to hold now: the session's end for an undo,
  // the state before it for a replay (after a revert).
  uint64_t expected_at = undo ? last : 0;

  std::set<std::string> paths;
  for (const HistoryOp& h : history.ops()) {
    if (h.inside()) paths.insert(h.op.path);
    if (h.inside2()) paths.insert(h.op.path2);
  }
  for (const auto& [p, state] : history.finals()) paths.insert(p);
  // A path below a moved directory had another name on the other side of
  // the move: both names must reach their target states.
  for (size_t round = 0; round <= history.ops().size(); ++round) {
    std::set<std::string> more;
    for (const HistoryOp& h : history.ops()) {
      if (!IsDirectoryMove(h)) continue;
      for (const std::string& p : paths) {
        if (IsUnder(p, h.op.path) && p != h.op.path) more.insert(h.op.path2 + p.substr(h.op.path.size()));
        if (IsUnder(p, h.op.path2) && p != h.op.path2) more.insert(h.op.path + p.substr(h.op.path2.size()));
      }
    }
    size_t before = paths.size();
    paths.insert(more.begin(), more.end());
    if (paths.size() == before) break;
  }

  auto wanted = [&](const std::string& p) {
    if (request.paths.empty()) return true;
    for (const std::string& dir : request.paths) {
      if (IsUnder(p, dir)) return true;
    }
    return false;
  };

  if (request.paths.empty()) {
    for (const HistoryOp& h : history.ops()) {
      bool in_window = undo ? h.op.seq > plan->boundary : h.op.seq <= plan->boundary;
      if (in_window && IsDirectoryMove(h)) plan->moves.push_back(&h);
    }
    if (undo) std::reverse(plan->moves.begin(), plan->moves.end());
  }
  // The name a path has now, before the directory moves are applied.
  auto present_name = [&](std::string p) {
    for (auto it = plan->moves.rbegin(); it != plan->moves.rend(); ++it) {
      const HistoryOp* h = *it;
      if (h->op.kind == OpKind::kExchange) {
        if (IsUnder(p, h->op.path)) p = h->op.path2 + p.substr(h->op.path.size());
        else if (IsUnder(p, h->op.path2)) p = h->op.path + p.substr(h->op.path2.size());
        continue;
      }
      const std::string& from = undo ? h->op.path2 : h->op.path;
      const std::string& to = undo ? h->op.path : h->op.path2;
      if (IsUnder(p, to)) p = from + p.substr(to.size());
    }
    return p;
  };

  std::map<std::string, BlobKey> hashes;
  for (const std::string& p : paths) {
    if (!wanted(p)) continue;
    if (p == "." || !SafeTree::IsSafeRelative(p)) {
      plan->unknown.push_back(p + ": refused: not a plain path beneath the root");
      continue;
    }
    RestoreItem c;
    c.path = p;
    c.present = present_name(p);
    if (!history.StateAfter(p, plan->boundary, &c.target)) {
      plan->unknown.push_back(p + ": the journal does not say what it held then");
      continue;
    }
    Status s = tree.Stat(c.present, &c.current);
    if (!s.ok()) {
      // Below a symlink that the target state has too (the session made
      // it), there is nothing to restore; below any other symlink the path
      // is refused and reported.
      if (s.code() == Status::Code::kInvalidArgument && c.target.type == FileType::kAbsent &&
          TargetHasSymlinkAbove(history, plan->boundary, p)) {
        continue;
      }
      plan->unknown.push_back(p + ": " + s.ToString());
      continue;
    }
    plan->targets.push_back(c);
    if (Matches(tree, c.present, c.current, c.target, &hashes)) continue;
    FileState expected;
    bool known = history.StateAfter(c.present, expected_at, &expected);
    c.conflict = known && !Matches(tree, c.present, c.current, expected, &hashes);
    plan->changes.push_back(std::move(c));
  }
  return Status::Ok();
}

Status ApplyRestore(const RestorePlan& plan, const BlobStore& store, SafeTree* tree, RestoreResult* result) {
  bool undo = plan.direction == RestoreDirection::kUndo;
  // 1. Directory moves, where the tree is still as the move left it (undo) or
  //    found it (replay). Anything else is settled by the pass below.
  for (const HistoryOp* h : plan.moves) {
    const std::string& a = h->op.path;
    const std::string& b = h->op.path2;
    FileState sa, sb;
    if (!tree->Stat(a, &sa).ok() || !tree->Stat(b, &sb).ok()) continue;
    if (h->op.kind == OpKind::kExchange) {
      if (sa.type != FileType::kAbsent && sb.type != FileType::kAbsent) tree->Exchange(a, b);
      continue;
    }
    const std::string& from = undo ? b : a;
    const std::string& to = undo ? a : b;
    const FileState& sfrom = undo ? sb : sa;
    const FileState& sto = undo ? sa : sb;
    if (sfrom.type == FileType::kDirectory && sto.type == FileType::kAbsent) tree->Rename(from, to);
  }

  // 2. Removals, deepest first, of what must be absent or of another type.
  // Every target is checked again here, after the moves: what the plan
  // listed was computed on the tree before them.
  std::map<std::string, BlobKey> hashes;
  std::vector<const RestoreItem*> order;
  for (const RestoreItem& c : plan.targets) {
    FileState cur;
    if (tree->Stat(c.path, &cur).ok() && Matches(*tree, c.path, cur, c.target, &hashes)) continue;
    order.push_back(&c);
  }
  std::vector<const RestoreItem*> by_path = order;
  std::stable_sort(order.begin(), order.end(),
                   [](const RestoreItem* x, const RestoreItem* y) { return Depth(x->path) > Depth(y->path); });
  std::set<std::string> failed;
  for (const RestoreItem* c : order) {
    FileState cur;
    Status s = tree->Stat(c->path, &cur);
    if (!s.ok()) {
      failed.insert(c->path);
      result->failed.push_back(c->path + ": " + s.ToString());
      continue;
    }
    bool must_go = cur.type != FileType::kAbsent &&
                   (c->target.type == FileType::kAbsent || cur.type != c->target.type ||
                    (cur.type == FileType::kSymlink && cur.symlink_target != c->target.symlink_target));
    if (!must_go) continue;
    s = tree->Remove(c->path);
    if (!s.ok()) {
      failed.insert(c->path);
      result->failed.push_back(c->path + ": " + s.ToString());
    } else if (c->target.type == FileType::kAbsent) {
      ++result->changed;
    }
  }

  // 3. Creations and updates, parents first (a parent sorts before its children).
  for (const RestoreItem* change : by_path) {
    const RestoreItem& c = *change;
    if (failed.count(c.path) || c.target.type == FileType::kAbsent) continue;
    FileState cur;
    Status s = tree->Stat(c.path, &cur);
    const FileState& t = c.target;
    if (s.ok()) {
      switch (t.type) {
        case FileType::kRegular:
          if (t.blob.kind == BlobRef::Kind::kNone) {
            s = Status::NotFound("its content was not captured");
          } else {
            s = tree->WriteFile(c.path, store, t.blob, t.mode);
          }
          break;
        case FileType::kDirectory:
          s = cur.type == FileType::kAbsent ? tree->MakeDir(c.path, t.mode) : tree->Chmod(c.path, t.mode);
          break;
        case FileType::kSymlink:
          s = cur.type == FileType::kAbsent ? tree->MakeSymlink(c.path, t.symlink_target) : Status::Ok();
          break;
        case FileType::kOther:
          s = cur.type == FileType::kAbsent ? tree->MakeFifo(c.path, t.mode) : tree->Chmod(c.path, t.mode);
          break;
        default:
          s = Status::Unsupported("cannot recreate a file of unknown type");
      }
    }
    if (s.ok()) {
      ++result->changed;
    } else {
      result->failed.push_back(c.path + ": " + s.ToString());
    }
  }
  return tree->SyncDirs();
}

}  // namespace guard
