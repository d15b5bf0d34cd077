#include "supervisor/watch/watched_tree.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/clock.h"
#include "common/file_io.h"
#include "common/path_util.h"
#include "supervisor/base/stat_state.h"
#include "supervisor/base/tree_walk.h"
#include "supervisor/capture/file_state.h"

namespace guard {
namespace {

// The errors that mean "nothing is at that name beneath the root": a
// component is missing, is no directory, or is a symlink.
bool IsAbsence(int err) { return err == ENOENT || err == ENOTDIR || err == ELOOP; }

// Whether `a` and `b` are the same as far as the journal's operations
// tell (Capture::Observed): a file's content and mode, a directory's or a
// special file's mode, a symlink's text. Times and the signature are not
// part of it: a file touched, or rewritten with what it held, is no change.
bool SameForTheJournal(const FileState& a, const FileState& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case FileType::kAbsent:
      return true;
    case FileType::kRegular:
      return a.blob.kind != BlobRef::Kind::kNone && a.blob == b.blob && a.size == b.size && a.mode == b.mode;
    case FileType::kSymlink:
      return a.symlink_target == b.symlink_target;
    default:
      return a.mode == b.mode;
  }
}

std::string BaseName(const std::string& rel) {
  size_t slash = rel.rfind('/');
  return slash == std::string::npos ? rel : rel.substr(slash + 1);
}

}  // namespace

WatchedTree::WatchedTree(WatchedTreeOptions options, BlobStore* store)
    : options_(std::move(options)), store_(store) {}

std::string WatchedTree::Abs(const std::string& rel) const { return PathJoin(options_.root, rel); }

bool WatchedTree::Excluded(const std::string& rel) const {
  if (options_.excluded.empty()) return false;
  const std::string abs = Abs(rel);
  for (const std::string& e : options_.excluded) {
    if (PathIsUnder(abs, e)) return true;
  }
  return false;
}

const FileState* WatchedTree::Saved(const std::string& rel) const {
  auto it = saved_.find(rel);
  return it == saved_.end() ? nullptr : &it->second.state;
}

Status WatchedTree::ReadAt(int dir_fd, const std::string& name, const struct stat& st, Content content, Entry* out,
                           BaselineSummary* summary, const FileState* previous) {
  *out = Entry();
  FillFromStat(st, &out->state);
  FillSignature(st, &out->state);
  if (S_ISLNK(st.st_mode)) return ReadLinkAt(dir_fd, name, name, &out->state.symlink_target);
  if (!S_ISREG(st.st_mode)) return Status::Ok();
  out->not_captured = true;
  if (content == Content::kNone) return Status::Ok();
  UniqueFd fd;
  GUARD_RETURN_IF_ERROR(OpenFileAt(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0, &fd));
  // The signature is the one of the file opened, taken before it is read:
  // a write during the read leaves a later signature behind, so the next
  // look reads it again rather than take this copy for it.
  struct stat opened;
  if (fstat(fd.get(), &opened) != 0) return Status::FromErrno(name, errno);
  out->state = FileState();
  FillFromStat(opened, &out->state);
  FillSignature(opened, &out->state);
  if (!S_ISREG(opened.st_mode)) return Status::Ok();  // swapped for something else since the lstat
  const uint64_t signed_size = out->state.size;
  const bool clone_only = content == Content::kCloneOnly;
  if ((content == Content::kBaseline || clone_only) && options_.clone && !clone_refused_) {
    // A clone is the file as it was at one instant (the filesystem locks
    // both inodes for it); a write after the fstat above leaves a later
    // signature, as for a copy.
    std::string pending;
    Status cloned = store_->AdoptByClone(fd.get(), &pending);
    if (cloned.ok()) {
      out->state.blob.kind = BlobRef::Kind::kPending;
      out->state.blob.pending = pending;
      out->not_captured = false;
      out->read_ns = MonoNowNs();
      if (summary != nullptr) {
        ++summary->cloned;
        summary->cloned_bytes += signed_size;
      }
      return Status::Ok();
    }
    // No support here (ext4, tmpfs; another filesystem than the store's):
    // copies from now on. Another failure copies this file only.
    const int err = cloned.err();
    if (err == EOPNOTSUPP || err == EINVAL || err == EXDEV || err == ENOTTY || err == ENOSYS) {
      clone_refused_ = true;
      if (summary != nullptr) summary->clone_error = cloned.ToString();
    }
  }
  if (clone_only) return Status::Ok();  // past the baseline's budget: by name only
  // A log appended to is stored as its last version plus the new bytes,
  // not whole at each look.
  SavedVersion grown_from;
  const bool grew = previous != nullptr && previous->type == FileType::kRegular &&
                    previous->blob.kind == BlobRef::Kind::kKey && previous->size < signed_size;
  if (grew) grown_from = SavedVersion{previous->blob.key, previous->size};
  GUARD_RETURN_IF_ERROR(StoreContent(fd.get(), store_, &out->state, grew ? &grown_from : nullptr));
  // StoreContent sets the size read; a file that grew or shrank meanwhile
  // keeps the size of its signature, so that it does not match StillHolds.
  if (out->state.size != signed_size) out->state.ctime_ns = 0;
  out->not_captured = false;
  out->read_ns = MonoNowNs();
  return Status::Ok();
}

Status WatchedTree::Baseline(BaselineSummary* summary) {
  *summary = BaselineSummary();
  saved_.clear();
  int fd = static_cast<int>(GUARD_EINTR_RETRY(
      ::open(options_.root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)));
  if (fd < 0) return Status::FromErrno(options_.root, errno);
  root_fd_.reset(fd);
  struct stat root_st {};
  if (fstat(root_fd_.get(), &root_st) != 0) return Status::FromErrno(options_.root, errno);
  root_state_ = FileState();
  FillFromStat(root_st, &root_state_);
  TreeWalkOptions walk;
  walk.descend = [this](const TreeEntry& e) { return !Excluded(e.rel); };

  // First the sizes alone, to find the largest file the budget takes; the
  // files whose content something else keeps are found then, and need
  // none of the budget.
  std::vector<uint64_t> sizes;
  uint64_t total = 0;
  std::map<std::string, std::pair<std::string, FileState>> kept;  // rel -> id, the state Find was given
  std::vector<std::pair<std::string, FileState>> regular;           // asked of `kept` after the walk
  bool attribute_files = false;
  GUARD_RETURN_IF_ERROR(WalkTree(root_fd_.get(), "", walk, [&](const TreeEntry& e) {
    if (S_ISREG(e.st.st_mode) && !Excluded(e.rel)) {
      if (options_.kept != nullptr) {
        if (e.name == ".gitattributes") attribute_files = true;
        FileState st;
        FillFromStat(e.st, &st);
        FillSignature(e.st, &st);
        regular.emplace_back(e.rel, st);
        return;
      }
      sizes.push_back(static_cast<uint64_t>(e.st.st_size));
      total += static_cast<uint64_t>(e.st.st_size);
    }
  }));
  if (options_.kept != nullptr) {
    options_.kept->AttributeFilesUnderRoot(attribute_files);
    for (auto& [rel, st] : regular) {
      std::string id;
      if (options_.kept->Find(rel, st, &id)) {
        kept.emplace(rel, std::make_pair(std::move(id), st));
      } else {
        sizes.push_back(st.size);
        total += st.size;
      }
    }
    std::vector<std::pair<std::string, FileState>>().swap(regular);
  }
  if (!kept.empty()) GUARD_RETURN_IF_ERROR(options_.kept->Pin());
  uint64_t largest = UINT64_MAX;
  if (total > options_.baseline_budget) {
    std::sort(sizes.begin(), sizes.end());
    uint64_t sum = 0;
    for (uint64_t size : sizes) {
      if (sum + size > options_.baseline_budget) {
        largest = size == 0 ? 0 : size - 1;  // every file of this size is left out
        break;
      }
      sum += size;
    }
  }

  // A file that cannot be read is kept by what its lstat said: the session
  // goes on, and a change to it is recorded without its pre-image.
  GUARD_RETURN_IF_ERROR(WalkTree(root_fd_.get(), "", walk, [&](const TreeEntry& e) {
    if (Excluded(e.rel)) return;
    Entry entry;
    const bool regular = S_ISREG(e.st.st_mode);
    if (auto k = regular ? kept.find(e.rel) : kept.end(); k != kept.end() && StillHolds(k->second.second, e.st)) {
      // Still the file Find was asked of (else it is read like the others).
      entry.state = k->second.second;
      entry.kept_id = std::move(k->second.first);
      ++summary->files;
      ++summary->kept;
      summary->kept_bytes += entry.state.size;
      saved_.emplace(e.rel, std::move(entry));
      return;
    }
    // Past the budget a file is kept by name only, unless a clone takes it.
    Content content = Content::kNone;
    if (regular) {
      content = static_cast<uint64_t>(e.st.st_size) <= largest ? Content::kBaseline
                : options_.clone && !clone_refused_              ? Content::kCloneOnly
                                                                 : Content::kNone;
    }
    Status s = ReadAt(e.dir_fd, e.name, e.st, content, &entry, summary);
    if (!s.ok()) {
      ++summary->unreadable;
      if (entry.state.type == FileType::kAbsent) return;  // vanished between the lstat and the read
    }
    if (regular) {
      ++summary->files;
      if (s.ok() && entry.not_captured) {
        ++summary->name_only;
        summary->name_only_bytes += static_cast<uint64_t>(e.st.st_size);
      } else if (!entry.not_captured && entry.state.blob.kind == BlobRef::Kind::kKey) {
        summary->bytes_saved += entry.state.size;
      }
    } else if (S_ISDIR(e.st.st_mode)) {
      ++summary->directories;
    } else {
      ++summary->others;
    }
    saved_.emplace(e.rel, std::move(entry));
  }));
  return Status::Ok();
}

Status WatchedTree::Resume(const std::vector<SavedPath>& saved) {
  saved_.clear();
  int fd = static_cast<int>(GUARD_EINTR_RETRY(
      ::open(options_.root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)));
  if (fd < 0) return Status::FromErrno(options_.root, errno);
  root_fd_.reset(fd);
  for (const SavedPath& p : saved) {
    Entry e;
    e.state = p.state;
    e.not_captured = p.not_captured;
    e.kept_id = p.kept_id;
    saved_[p.rel] = std::move(e);
  }
  return Status::Ok();
}

void WatchedTree::ForEachSaved(const std::function<void(const SavedPath&)>& fn) const {
  for (const auto& [rel, e] : saved_) fn(SavedPath{rel, e.state, e.not_captured, e.kept_id});
}

Status WatchedTree::Catch(const std::vector<WatchHint>& hints, const Emit& emit,
                          std::vector<WatchHint>* deferred) {
  Status first;
  for (const WatchHint& h : hints) {
    if (h.path != options_.root && !PathIsStrictlyUnder(h.path, options_.root)) continue;
    const std::string rel = PathRelativeTo(h.path, options_.root);
    if (rel != "." && Excluded(rel)) continue;
    bool later = false;
    // The root as a path is its own state (an attribute event of the
    // root's watch); as a tree, everything.
    Status s = h.scope != WatchHint::Scope::kPath ? CompareTree(rel, emit)
               : rel == "."                        ? CompareRoot(emit)
                                                   : ComparePath(rel, emit, deferred != nullptr, &later);
    if (later) deferred->push_back(h);
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

Status WatchedTree::ComparePath(const std::string& rel, const Emit& emit, bool may_defer, bool* deferred) {
  *deferred = false;
  auto saved = saved_.find(rel);
  UniqueFd dir;
  Status opened = OpenDirBeneath(root_fd_.get(), ParentDir(rel), O_RDONLY, &dir);
  if (!opened.ok() && !IsAbsence(opened.err())) return opened;
  struct stat st {};
  const std::string name = BaseName(rel);
  bool exists = opened.ok() && fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  if (opened.ok() && !exists && !IsAbsence(errno)) return Status::FromErrno(Abs(rel), errno);
  const bool was_dir = saved != saved_.end() && saved->second.state.type == FileType::kDirectory;
  const bool is_dir = exists && S_ISDIR(st.st_mode);
  // A directory made, removed or replaced: what is below it changed too.
  if (was_dir || is_dir) {
    if (was_dir && is_dir && StillHolds(saved->second.state, st)) return Status::Ok();
    return CompareTree(rel, emit);
  }
  if (!exists) {
    if (saved == saved_.end()) return Status::Ok();
    return Change(rel, Entry(), emit);
  }
  if (saved != saved_.end() && StillHolds(saved->second.state, st)) return Status::Ok();
  if (may_defer && saved != saved_.end() && S_ISREG(st.st_mode) && saved->second.read_ns != 0 &&
      MonoNowNs() - saved->second.read_ns < options_.reread_after_ns) {
    *deferred = true;
    return Status::Ok();
  }
  Entry now;
  Status read = ReadAt(dir.get(), name, st, Content::kCopy, &now, nullptr,
                       saved != saved_.end() ? &saved->second.state : nullptr);
  if (!read.ok() && IsAbsence(read.err())) return Status::Ok();  // gone already: its own event follows
  Status changed = Change(rel, std::move(now), emit);
  // A write through one name of a hard-linked file changes the others,
  // which get no event of their own: they are compared now.
  if (S_ISREG(st.st_mode) && st.st_nlink > 1) {
    Status others = CompareOtherNames(rel, st, emit);
    if (changed.ok()) changed = others;
  }
  return read.ok() ? changed : read;
}

Status WatchedTree::CompareOtherNames(const std::string& rel, const struct stat& st, const Emit& emit) {
  std::vector<std::string> names;
  for (const auto& [path, e] : saved_) {
    if (path != rel && e.state.type == FileType::kRegular && e.state.ino == static_cast<uint64_t>(st.st_ino) &&
        e.state.dev == static_cast<uint64_t>(st.st_dev)) {
      names.push_back(path);
    }
  }
  Status first;
  for (const std::string& other : names) {
    bool later = false;
    Status s = ComparePath(other, emit, /*may_defer=*/false, &later);
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

Status WatchedTree::CompareTree(const std::string& rel, const Emit& emit) {
  // What is there now: the paths whose state differs from the saved one,
  // read (content saved), and the ones that still hold it, by name.
  std::map<std::string, Entry> changed;
  std::set<std::string> unchanged;
  Status first;
  auto look = [&](int dir_fd, const std::string& name, const std::string& path, const struct stat& st) {
    auto saved = saved_.find(path);
    if (saved != saved_.end() && StillHolds(saved->second.state, st)) {
      unchanged.insert(path);
      return;
    }
    Entry now;
    Status s = ReadAt(dir_fd, name, st, Content::kCopy, &now, nullptr,
                      saved != saved_.end() ? &saved->second.state : nullptr);
    if (!s.ok() && IsAbsence(s.err())) return;  // gone already
    if (!s.ok() && first.ok()) first = s;
    changed.emplace(path, std::move(now));
  };
  TreeWalkOptions walk;
  walk.descend = [this](const TreeEntry& e) { return !Excluded(e.rel); };
  auto visit = [&](const TreeEntry& e) {
    if (!Excluded(e.rel)) look(e.dir_fd, e.name, e.rel, e.st);
  };
  if (rel == ".") {
    Status s = WalkTree(root_fd_.get(), "", walk, visit);
    if (!s.ok()) return s;  // the root itself cannot be listed: nothing is compared
  } else {
    UniqueFd dir;
    Status opened = OpenDirBeneath(root_fd_.get(), ParentDir(rel), O_RDONLY, &dir);
    if (!opened.ok() && !IsAbsence(opened.err())) return opened;
    struct stat st {};
    const std::string name = BaseName(rel);
    if (opened.ok() && fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      look(dir.get(), name, rel, st);
      if (S_ISDIR(st.st_mode)) {
        UniqueFd below;
        Status s = OpenDirBeneath(dir.get(), name, O_RDONLY, &below);
        if (s.ok()) s = WalkTree(below.get(), rel, walk, visit);
        if (!s.ok() && !IsAbsence(s.err()) && first.ok()) first = s;
      }
    }
  }

  // The saved paths at and below `rel` that are gone, deepest first: a
  // path sorts after every directory above it.
  std::vector<std::string> gone;
  auto begin = rel == "." ? saved_.begin() : saved_.lower_bound(rel);
  for (auto it = begin; it != saved_.end(); ++it) {
    if (rel != "." && it->first != rel && !PathIsStrictlyUnder(it->first, rel)) {
      if (it->first.compare(0, rel.size(), rel) != 0) break;  // past every name that starts with rel
      continue;                                              // "rel-x", "rel.x": beside it, not below
    }
    if (unchanged.count(it->first) == 0 && changed.count(it->first) == 0) gone.push_back(it->first);
  }
  for (auto it = gone.rbegin(); it != gone.rend(); ++it) {
    Status s = Change(*it, Entry(), emit);
    if (!s.ok() && first.ok()) first = s;
  }
  // Then what is new or different, parents first.
  for (auto& [path, now] : changed) {
    Status s = Change(path, std::move(now), emit);
    if (!s.ok() && first.ok()) first = s;
  }
  if (rel == ".") {
    Status s = CompareRoot(emit);
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

Status WatchedTree::CompareRoot(const Emit& emit) {
  // The directory opened at the baseline, wherever it is now: a root moved
  // or removed is a kAll hint and a rescan, not a change of its mode.
  struct stat st {};
  if (fstat(root_fd_.get(), &st) != 0) return Status::FromErrno(options_.root, errno);
  FileState now;
  FillFromStat(st, &now);
  if (now.type != FileType::kDirectory || root_state_.type != FileType::kDirectory || now.mode == root_state_.mode) {
    return Status::Ok();
  }
  Status s = emit(ObservedChange{options_.root, "", root_state_, now}, false);
  root_state_ = now;
  return s;
}

Status WatchedTree::Change(const std::string& rel, Entry now, const Emit& emit) {
  auto it = saved_.find(rel);
  Status s;
  if (it == saved_.end()) {
    if (now.state.type == FileType::kAbsent) return Status::Ok();
    s = emit(ObservedChange{Abs(rel), "", FileState(), now.state}, false);
    saved_.emplace(rel, std::move(now));
    return s;
  }
  Entry& saved = it->second;
  Materialize(&saved);
  // A baseline's clone is named by its pending name, not its key: it is
  // hashed only when the file's new state has the same size, to tell a
  // rewrite with the same bytes (no change) from a change.
  const bool clone = saved.state.type == FileType::kRegular && saved.state.blob.kind == BlobRef::Kind::kPending;
  bool same = SameForTheJournal(saved.state, now.state);
  if (clone && !same && now.state.type == FileType::kRegular && now.state.blob.kind == BlobRef::Kind::kKey &&
      now.state.size == saved.state.size && now.state.mode == saved.state.mode) {
    same = CloneHolds(saved.state.blob.pending, now.state.blob.key);
  }
  if (!same) {
    const bool before_not_captured = saved.not_captured && saved.state.type == FileType::kRegular;
    s = emit(ObservedChange{Abs(rel), "", saved.state, now.state}, before_not_captured);
  } else if (clone) {
    // No record names the clone: the store holds the content by its key.
    (void)store_->RemovePending(saved.state.blob.pending);
  }
  if (now.state.type == FileType::kAbsent) {
    saved_.erase(it);
  } else {
    saved = std::move(now);
  }
  return s;
}

void WatchedTree::Materialize(Entry* saved) {
  if (saved->kept_id.empty()) return;
  const std::string id = std::move(saved->kept_id);
  saved->kept_id.clear();
  BlobKey key;
  uint64_t size = 0;
  // Fetched, the content is the pre-image as if the baseline had copied
  // it; a blob that cannot be had (pruned despite the pin, corrupt) leaves
  // a pre-image without content, flagged so in the record.
  if (options_.kept != nullptr && options_.kept->Fetch(id, store_, &key, &size).ok() && size == saved->state.size) {
    saved->state.blob.kind = BlobRef::Kind::kKey;
    saved->state.blob.key = key;
  } else {
    saved->not_captured = true;
  }
}

bool WatchedTree::CloneHolds(const std::string& pending, const BlobKey& key) const {
  UniqueFd fd;
  if (!OpenFile(store_->dir() + "/pending/" + pending, O_RDONLY | O_NOFOLLOW, 0, &fd).ok()) return false;
  BlobKey held;
  return BlobKey::OfFd(fd.get(), pending, &held).ok() && held == key;
}

std::vector<std::string> WatchedTree::Paths() const {
  std::vector<std::string> out;
  out.reserve(saved_.size());
  for (const auto& [rel, entry] : saved_) out.push_back(rel);
  return out;
}

void WatchedTree::DropUnusedClones() {
  for (auto& [rel, entry] : saved_) {
    if (entry.state.type == FileType::kRegular && entry.state.blob.kind == BlobRef::Kind::kPending) {
      (void)store_->RemovePending(entry.state.blob.pending);
      entry.state.blob = BlobRef();
      entry.not_captured = true;
    }
  }
}

}  // namespace guard
