#include "supervisor/restore/restore.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "common/path_util.h"
#include "supervisor/base/tree_walk.h"
#include "supervisor/restore/restore_names.h"

namespace guard {
namespace {

// The content key of regular file `rel`, hashed once per restore.
bool HashOf(const SafeTree& tree, const std::string& rel, std::map<std::string, BlobKey>* hashes, BlobKey* key) {
  auto it = hashes->find(rel);
  if (it == hashes->end()) {
    BlobKey fresh;
    if (!tree.HashFile(rel, &fresh).ok()) return false;
    it = hashes->emplace(rel, fresh).first;
  }
  *key = it->second;
  return true;
}

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
      BlobKey key;
      return HashOf(tree, rel, hashes, &key) && key == want.blob.key;
    }
    default:
      return cur.mode == want.mode;
  }
}

// Whether a directory above `p` is a symlink in the state being restored.
bool TargetHasSymlinkAbove(const SessionHistory& history, uint64_t boundary, const std::string& p) {
  return ForEachAncestor(p, [&](const std::string& dir) {
    FileState st;
    return history.StateAfter(dir, boundary, &st) && st.type == FileType::kSymlink;
  });
}

// Whether the content of regular file `rel` is in the store.
bool InStore(const SafeTree& tree, const BlobStore& store, const std::string& rel,
             std::map<std::string, BlobKey>* hashes) {
  BlobKey key;
  return HashOf(tree, rel, hashes, &key) && store.Contains(key);
}

size_t Depth(const std::string& p) { return static_cast<size_t>(std::count(p.begin(), p.end(), '/')); }

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

namespace {

// For a path Stat refused because a parent is a symlink: whether the restore
// replaces that symlink (the deepest one above `p`) by something else, so
// that `p` counts as absent now.
bool BelowReplacedSymlink(const SessionHistory& history, const SafeTree& tree, uint64_t boundary,
                          const std::string& p) {
  bool replaced = false;
  ForEachAncestor(p, [&](const std::string& dir) {
    FileState now;
    if (!tree.Stat(dir, &now).ok() || now.type != FileType::kSymlink) return false;
    FileState then;
    replaced = history.StateAfter(dir, boundary, &then) &&
               (then.type != FileType::kSymlink || then.symlink_target != now.symlink_target);
    return true;  // the deepest symlink decides
  });
  return replaced;
}

// For a directory that the restore must remove or replace: the first entry
// in it that no record names (someone put it there since; the restore would
// have to destroy it), else "".
std::string UnknownEntry(const SafeTree& tree, const std::string& dir, const std::set<std::string>& names) {
  std::vector<std::string> entries;
  if (!tree.List(dir, &entries).ok()) return "";
  std::sort(entries.begin(), entries.end());
  for (const std::string& e : entries) {
    if (!names.count(dir + "/" + e)) return dir + "/" + e;
  }
  return "";
}

}  // namespace

Status PlanRestore(const SessionHistory& history, const SafeTree& tree, const BlobStore& store,
                   const RestoreRequest& request, RestorePlan* plan) {
  *plan = RestorePlan();
  plan->direction = request.direction;
  uint64_t last = history.last_seq();
  bool undo = request.direction == RestoreDirection::kUndo;
  // Never between the records of one call (a directory moved across the
  // root boundary and the entries it carried).
  if (request.exact_boundary) {
    plan->boundary = request.boundary;
  } else if (undo) {
    plan->boundary = request.to_seq ? history.CallStart(request.to_seq) - 1 : 0;
  } else {
    plan->boundary = request.to_seq ? history.CallEnd(request.to_seq) : last;
  }
  // What the tree is expected to hold now: the session's end for an undo,
  // the state before it for a replay (after a revert), unless the request
  // knows better (a restore chain).
  std::vector<uint64_t> expected_at = request.expected;
  if (expected_at.empty()) expected_at.push_back(undo ? last : 0);

  const std::set<std::string> names = RestoreNames(history);
  auto wanted = [&](const std::string& p) {
    if (request.paths.empty()) return true;
    for (const std::string& dir : request.paths) {
      if (PathIsUnder(p, dir)) return true;
    }
    return false;
  };

  // 1. Targets. A target whose content the journal lost along a rename
  //    leaves the content where the trail ended as the only copy: that
  //    path is kept as it is, whatever its own target says.
  std::vector<RestoreItem> items;
  std::map<std::string, std::string> keep;  // holder -> the path whose content it holds
  for (const std::string& p : names) {
    RestoreItem c;
    c.path = p;
    std::string lost_at;
    bool known = history.StateAfter(p, plan->boundary, &c.target, &lost_at);
    // A holder is kept whether or not the path whose content it holds was
    // asked for: `guard undo g` must not remove the only copy of f.
    if (!known && !lost_at.empty() && lost_at != p) keep.emplace(lost_at, p);
    if (!wanted(p)) continue;
    // The root itself, when the session removed it, is made again by
    // RestoreCommand before the rest; a target without it (a replay of
    // `rm -rf ROOT`) empties the root but leaves it.
    if (p == "." && known && c.target.type != FileType::kDirectory) continue;
    if (!IsPlainRelative(p)) {
      plan->unknown.push_back(p + ": refused: not a plain path beneath the root");
      continue;
    }
    if (!known) {
      plan->unknown.push_back(p + ": the journal does not say what it held then");
      continue;
    }
    // Of the root itself ("."), a restore sets the mode, nothing more.
    if (p == "." && c.target.type != FileType::kDirectory) {
      plan->unknown.push_back(p + ": refused: the root itself was not a directory then");
      continue;
    }
    items.push_back(std::move(c));
  }

  // 2. What is there now, and whether it is what the restore expects to find.
  std::map<std::string, BlobKey> hashes;
  for (RestoreItem& c : items) {
    const std::string& p = c.path;
    if (auto k = keep.find(p); k != keep.end()) {
      plan->unknown.push_back(p + ": left as it is: it holds what " + k->second +
                              " held, whose record the journal lost");
      continue;
    }
    struct stat seen {};
    Status s = tree.Stat(p, &c.current, &seen);
    c.seen_ino = static_cast<uint64_t>(seen.st_ino);
    c.seen_ctime_ns = static_cast<int64_t>(seen.st_ctim.tv_sec) * 1000000000 + seen.st_ctim.tv_nsec;
    if (!s.ok()) {
      bool refused = s.code() == Status::Code::kInvalidArgument;
      if (refused && BelowReplacedSymlink(history, tree, plan->boundary, p)) {
        c.current = FileState();  // the symlink above goes first
        c.below_replaced_symlink = true;
      } else if (refused && c.target.type == FileType::kAbsent && TargetHasSymlinkAbove(history, plan->boundary, p)) {
        continue;  // below a symlink the target has too: nothing to restore
      } else {
        plan->unknown.push_back(p + ": " + s.ToString());
        continue;
      }
    }
    if (Matches(tree, p, c.current, c.target, &hashes)) {
      c.matched = true;
      plan->targets.push_back(std::move(c));
      continue;
    }
    if (c.target.type == FileType::kRegular && c.target.blob.kind == BlobRef::Kind::kNone) {
      plan->unknown.push_back(p + ": its content was not captured");
      continue;
    }
    if (c.target.type == FileType::kRegular && c.target.blob.kind == BlobRef::Kind::kKey &&
        !store.Contains(c.target.blob.key)) {
      if (history.Thinned(c.target.blob.key)) {
        plan->unknown.push_back(p + ": cannot be exact: the session dropped this version of it when the store's cap "
                                    "bound (docs/gc.md); undo to the start or to a mark is exact");
      } else {
        plan->unknown.push_back(p + ": its content (blob " + c.target.blob.key.Hex() + ") is missing from the store");
      }
      continue;
    }
    // A conflict: in none of the states expected.
    c.conflict = !(request.absent_expected && c.current.type == FileType::kAbsent);
    for (uint64_t at : expected_at) {
      FileState expected;
      std::string end_name;
      bool known = !c.below_replaced_symlink && history.StateAfter(p, at, &expected, nullptr, &end_name);
      // When recovery found the tree changed after the session ended, an
      // expectation read from an end state it took from that tree before the
      // session's last work there was saved (kEndNotSaved) says nothing of
      // what the session found or left: no conflict can be told from it.
      if (known && !end_name.empty() && history.changed_after_end()) {
        auto flags = history.final_flags().find(end_name);
        if (flags != history.final_flags().end() && (flags->second & kEndNotSaved)) known = false;
      }
      if (!known || Matches(tree, p, c.current, expected, &hashes)) c.conflict = false;
    }
    // What an interrupted restore may have left of a file it wrote when
    // it was killed or the power went (RestoreRequest::unfinished_since_ns):
    // a file written in place (SafeTree::WriteNewFile) may be short, or
    // empty after a power loss.
    if (c.conflict && request.unfinished_since_ns != 0 && c.current.type == FileType::kRegular &&
        c.target.type == FileType::kRegular && c.current.mode == c.target.mode &&
        c.current.size <= c.target.size &&
        c.seen_ctime_ns >= request.unfinished_since_ns) {
      c.conflict = false;
      plan->notes.push_back(p + ": neither as before nor as restored, and written since the interrupted restore "
                                "started: taken as its write that a power loss cut short");
    }
    // Recovery found this path changed after the session ended (the tree
    // reverted after guard was killed, docs/durability.md), and it is gone
    // now: replaying the session's saved work there destroys nothing.
    if (c.conflict && !undo && c.current.type == FileType::kAbsent) {
      auto flags = history.final_flags().find(p);
      if (flags != history.final_flags().end() && (flags->second & kChangedAfterEnd)) c.conflict = false;
    }
    if (auto o = request.changed_by_others.find(p); undo && !c.conflict && o != request.changed_by_others.end()) {
      c.conflict = true;
      c.why = "session " + o->second + " changed it while this session ran";
    }
    // What a change destroys (a file removed or written over) must be saved
    // somewhere: in the store, where the session's records put it. If it is
    // not (its record was lost, its content was never captured, the store
    // was full when the session ended), the tree holds the only copy.
    //  - Written over with a content the store has (the target checked
    //    above): the restore records a session of its own
    //    (restore_session.h), which saves what each change destroys before
    //    the change (and refuses the change when it cannot), so the current
    //    content becomes a pre-image of the restore session. The restore
    //    goes ahead and says so.
    //  - Removed, or replaced by something that is not a stored content:
    //    left as it is, since nothing the user asked for would take its place.
    // A conflict says so on its own.
    if (!c.conflict && c.current.type == FileType::kRegular && !InStore(tree, store, p, &hashes)) {
      if (c.target.type != FileType::kRegular) {
        plan->unknown.push_back(p + ": left as it is: what it holds now is not in the store (its record was "
                                    "lost, its content never captured, or the store was full)");
        continue;
      }
      plan->notes.push_back(p + ": what it holds now was not in the store; the restore saves it first, as "
                                "a pre-image of its own session");
    }
    plan->targets.push_back(c);
    if (!c.conflict && c.current.type == FileType::kDirectory && c.target.type != FileType::kDirectory) {
      std::string stranger = UnknownEntry(tree, p, names);
      if (!stranger.empty()) {
        c.conflict = true;
        c.why = "holds " + stranger + ", which the session never had";
      }
    }
    plan->changes.push_back(std::move(c));
  }
  // 3. git's own files, the git way (git_state_plan.h).
  return PlanGitState(history, tree, store, expected_at, plan);
}

namespace {

// Depth below the root, the root itself (".") above every other path.
long RootedDepth(const std::string& p) { return p == "." ? -1 : static_cast<long>(Depth(p)); }

// Directories opened to their owner for the restore, with the mode each had,
// in the order opened (shallowest first).
using OpenedDirectories = std::vector<std::pair<std::string, uint32_t>>;

// Run by the tree's owner rather than root, a restore cannot remove or make
// an entry of a directory without the owner's write permission, nor reach
// below one without search permission (as replay of "chmod 755 ro && rm
// ro/f" from a tree where ro is 0555 again would need, or undo of "chmod
// u+w keep && rm keep/g && chmod 555 keep"). Every directory above a change
// that lacks its owner's rwx is given it first, shallowest first, and noted
// in `opened` to get its own mode back at the end (step 5 of ApplyRestore).
void OpenParents(SafeTree* tree, const std::vector<const RestoreItem*>& changes, OpenedDirectories* opened) {
  std::set<std::string> parents;
  for (const RestoreItem* c : changes) {
    if (c->path == ".") continue;
    parents.insert(".");
    // A directory already in the set brought its own ancestors with it.
    ForEachAncestor(c->path, [&](const std::string& dir) { return !parents.insert(dir).second; });
  }
  std::vector<std::string> shallow_first(parents.begin(), parents.end());
  std::stable_sort(shallow_first.begin(), shallow_first.end(),
                   [](const std::string& x, const std::string& y) { return RootedDepth(x) < RootedDepth(y); });
  for (const std::string& p : shallow_first) {
    FileState cur;
    if (!tree->Stat(p, &cur).ok() || cur.type != FileType::kDirectory || (cur.mode & 0700) == 0700) continue;
    // Someone else's directory cannot be opened so (EPERM): left as it is;
    // a change below it that fails says so itself.
    if (!tree->Chmod(p, cur.mode | 0700).ok()) continue;
    opened->emplace_back(p, cur.mode);
  }
}

}  // namespace

Status ApplyRestore(const RestorePlan& plan, const BlobStore& store, SafeTree* tree, RestoreResult* result,
                    const std::function<void(size_t, size_t)>& progress, const std::function<bool()>& stop) {
  // Asked before each change; once true, it stays so.
  auto stopping = [&] { return result->stopped || (stop && (result->stopped = stop())); };
  // The tree may have changed since the plan looked (the prompt waited).
  tree->Refresh();
  // 1. Removals, deepest first, of what must be absent or of another type.
  std::map<std::string, BlobKey> hashes;
  std::vector<const RestoreItem*> order;
  // What each path to change holds, as looked at just below; kept up to date
  // by the removals, so that each path is looked at once: the restore is
  // the only writer it expects, and each change's own capture looks again
  // at what it replaces.
  std::map<const RestoreItem*, FileState> now;
  for (const RestoreItem& c : plan.targets) {
    FileState cur;
    struct stat st {};
    if (!tree->Stat(c.path, &cur, &st).ok()) {
      order.push_back(&c);
      continue;
    }
    // Unchanged since the plan looked (the same inode, ctime and state): the
    // plan's verdict stands, and the file is not read a second time.
    bool unchanged = cur.type != FileType::kAbsent && c.seen_ino != 0 &&
                     static_cast<uint64_t>(st.st_ino) == c.seen_ino &&
                     static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec == c.seen_ctime_ns &&
                     cur == c.current;
    if (unchanged ? c.matched : Matches(*tree, c.path, cur, c.target, &hashes)) continue;
    order.push_back(&c);
    now.emplace(&c, std::move(cur));
  }
  // The state of `c` now: as looked at above, else looked at again.
  auto state_of = [&](const RestoreItem* c, FileState* cur) {
    if (auto it = now.find(c); it != now.end()) {
      *cur = it->second;
      return Status::Ok();
    }
    return tree->Stat(c->path, cur);
  };
  std::vector<const RestoreItem*> by_path = order;
  std::stable_sort(order.begin(), order.end(),
                   [](const RestoreItem* x, const RestoreItem* y) { return Depth(x->path) > Depth(y->path); });
  std::set<std::string> failed;
  // 0. As the tree's owner, not root: the directories that would keep the
  //    changes out, opened (closed again at the end, 5).
  OpenedDirectories opened;
  if (geteuid() != 0) OpenParents(tree, order, &opened);
  size_t total = order.size() * 2, done = 0;
  auto step = [&] {
    if (progress) progress(++done, total);
  };
  for (const RestoreItem* c : order) {
    if (stopping()) break;
    step();
    FileState cur;
    Status s = state_of(c, &cur);
    if (!s.ok() && c->below_replaced_symlink && s.code() == Status::Code::kInvalidArgument) continue;
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
      now.erase(c);
    } else {
      now[c] = FileState();
      if (c->target.type == FileType::kAbsent) ++result->changed;
    }
  }

  // 2. Creations and updates, parents first (a parent sorts before its
  //    children). A file whose name is absent is written in place (nothing
  //    there to protect; made durable with the directories, at the end);
  //    one that replaces something is staged beside its place, made durable
  //    by one sync, and renamed into place at the end (3).
  std::vector<SafeTree::Staged> staged;
  std::vector<const RestoreItem*> late_modes;  // directories whose mode is set after their entries
  for (const RestoreItem* change : by_path) {
    if (stopping()) break;
    step();
    const RestoreItem& c = *change;
    if (failed.count(c.path) || c.target.type == FileType::kAbsent) continue;
    FileState cur;
    const FileState& t = c.target;
    // A file is staged whatever is there (its rename replaces it), and
    // StageFile refuses what Stat would; a file known absent (the removals
    // above looked) is written in place.
    auto known = now.find(change);
    bool absent_now = known != now.end() && known->second.type == FileType::kAbsent;
    Status s = t.type == FileType::kRegular ? Status::Ok() : state_of(&c, &cur);
    if (s.ok()) {
      switch (t.type) {
        case FileType::kRegular:
          if (t.blob.kind == BlobRef::Kind::kNone) {
            s = Status::NotFound("its content was not captured");
          } else {
            if (absent_now) {
              s = tree->WriteNewFile(c.path, store, t.blob, t.mode);
              if (s.err() != EEXIST) break;  // made meanwhile: staged, as any file replacing one
            }
            SafeTree::Staged file;
            s = tree->StageFile(c.path, store, t.blob, t.mode, &file);
            if (s.ok()) {
              staged.push_back(std::move(file));
              continue;  // counted when renamed into place
            }
          }
          break;
        case FileType::kDirectory: {
          // Writable and searchable by its owner until its entries are in
          // place (a 0555 directory would refuse them to anyone but root);
          // its own mode comes last (4), as tar and rsync do.
          uint32_t usable = t.mode | 0700;
          if (usable != t.mode) late_modes.push_back(&c);
          if (cur.type == FileType::kAbsent) {
            s = tree->MakeDir(c.path, usable);
          } else if (cur.mode != usable) {
            s = tree->Chmod(c.path, usable);
          }
          break;
        }
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

  // 3. The staged files: durable first, then renamed into place. Stopped,
  //    the rest are removed: a staged copy is no part of the tree.
  if (!staged.empty()) {
    Status synced = stopping() ? Status::Ok() : tree->SyncStaged(staged);
    for (const SafeTree::Staged& file : staged) {
      if (synced.ok() && stopping()) {
        tree->DropStaged(file);
        continue;
      }
      Status s = synced.ok() ? tree->CommitStaged(file) : synced;
      if (!synced.ok()) tree->DropStaged(file);
      if (s.ok()) {
        ++result->changed;
      } else {
        result->failed.push_back(file.rel + ": " + s.ToString());
      }
    }
  }

  // 4. The modes that would have kept a directory's entries out, deepest
  //    first (the root last): a directory without search permission would
  //    hide those below.
  std::stable_sort(late_modes.begin(), late_modes.end(),
                   [](const RestoreItem* x, const RestoreItem* y) { return RootedDepth(x->path) > RootedDepth(y->path); });
  for (const RestoreItem* c : late_modes) {
    Status s = tree->Chmod(c->path, c->target.mode);
    if (!s.ok()) result->failed.push_back(c->path + ": " + s.ToString());
  }
  // 5. The directories step 0 opened whose mode steps 2 to 4 did not set
  //    (not changed by the plan): back to the mode they had, deepest first.
  std::set<std::string> targeted;
  for (const RestoreItem* c : by_path) targeted.insert(c->path);
  for (auto it = opened.rbegin(); it != opened.rend(); ++it) {
    if (targeted.count(it->first)) continue;
    Status s = tree->Chmod(it->first, it->second);
    if (!s.ok()) result->failed.push_back(it->first + ": " + s.ToString());
  }

  return tree->SyncDirs();
}

}  // namespace guard
