#include "common/session_history.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "common/journal_reader.h"
#include "common/path_util.h"

namespace guard {
namespace {

void Resolve(BlobRef* ref, const std::unordered_map<std::string, BlobKey>& resolved) {
  if (ref->kind != BlobRef::Kind::kPending) return;
  auto it = resolved.find(ref->pending);
  if (it == resolved.end()) return;  // still readable as a pending blob
  ref->kind = BlobRef::Kind::kKey;
  ref->key = it->second;
  ref->pending.clear();
}

bool HasContent(const FileState& s) { return s.blob.kind != BlobRef::Kind::kNone; }

}  // namespace

Status SessionHistory::Load(const StateDir& state, const std::string& id, SessionHistory* out) {
  SessionMeta meta;
  GUARD_RETURN_IF_ERROR(LoadSessionMeta(state.session_dir(id) + "/meta.json", &meta));
  std::vector<Record> records;
  std::vector<std::string> problems;
  Status s = ReadAllRecords(state.session_dir(id) + "/journal", &records, &problems);
  if (!s.ok() && records.empty()) return s;
  *out = FromRecords(std::move(meta), records);
  if (!s.ok()) out->problems_.push_back(s.ToString());
  for (std::string& p : problems) out->problems_.push_back(std::move(p));
  if (out->meta_.ops > out->all_ops_.size()) {
    // A damaged last block reads as a torn tail, which the reader does not
    // report: the count in meta.json is the only witness.
    out->problems_.push_back("the journal holds " + std::to_string(out->all_ops_.size()) + " of the " +
                             std::to_string(out->meta_.ops) +
                             " operations recorded; what the lost ones did cannot be restored");
  }
  return Status::Ok();
}

SessionHistory SessionHistory::FromRecords(SessionMeta meta, const std::vector<Record>& records) {
  SessionHistory h;
  h.meta_ = std::move(meta);
  std::unordered_map<std::string, BlobKey> resolved;
  std::unordered_map<uint64_t, const Record*> outcomes;
  for (const Record& r : records) {
    if (r.kind == OpKind::kBlobResolved) resolved[r.pending] = r.key;
    if (r.kind == OpKind::kOutcome) outcomes[r.ref_seq] = &r;
    if (r.kind == OpKind::kSessionEnd) h.sealed_ = true;
  }
  for (const Record& r : records) {
    if (r.kind == OpKind::kFinal) {
      FileState f = r.after;
      Resolve(&f.blob, resolved);
      if (r.flags & kPostImage) {
        h.post_images_[r.path].push_back(PostImage{r.seq, f, r.flags});
        continue;
      }
      h.sealed_finals_[r.path] = f;
      if (r.flags & (kChangedAfterEnd | kEndNotSaved)) h.final_flags_[r.path] = r.flags;
      else h.final_flags_.erase(r.path);
      if (r.flags & kChangedAfterEnd) h.changed_after_end_ = true;
      continue;
    }
    if (r.kind == OpKind::kMark) {
      h.marks_.push_back(r);
      continue;
    }
    if (r.kind == OpKind::kIncomplete) {
      h.incomplete_.push_back(r);
      continue;
    }
    if (r.kind == OpKind::kThinned) {
      h.thinned_.insert({r.key.high, r.key.low});
      continue;
    }
    if (!IsOperation(r.kind)) continue;
    HistoryOp op;
    op.op = r;
    Resolve(&op.op.before.blob, resolved);
    Resolve(&op.op.before2.blob, resolved);
    if (auto it = outcomes.find(r.seq); it != outcomes.end()) {
      op.outcome_known = true;
      op.result_errno = it->second->result_errno;
      op.after = it->second->after;
      op.outcome_seq = it->second->seq;
    }
    h.all_ops_.push_back(op);
    if (!op.outcome_known || op.result_errno == 0) h.ops_.push_back(std::move(op));
  }
  auto by_seq = [](const HistoryOp& a, const HistoryOp& b) { return a.op.seq < b.op.seq; };
  std::sort(h.ops_.begin(), h.ops_.end(), by_seq);
  std::sort(h.all_ops_.begin(), h.all_ops_.end(), by_seq);
  auto record_by_seq = [](const Record& a, const Record& b) { return a.seq < b.seq; };
  std::sort(h.marks_.begin(), h.marks_.end(), record_by_seq);
  std::sort(h.incomplete_.begin(), h.incomplete_.end(), record_by_seq);
  if (h.meta_.incomplete_ns == 0 && !h.incomplete_.empty()) {
    h.meta_.incomplete_ns = h.incomplete_.front().wall_ns;
    h.meta_.incomplete_what = h.incomplete_.front().label;
  }
  // Pre-images no record but their own `blob-resolved` names.
  std::set<std::string> named;
  for (const Record& r : records) {
    for (const FileState* f : {&r.before, &r.before2, &r.after}) {
      if (f->blob.kind == BlobRef::Kind::kPending) named.insert(f->blob.pending);
    }
  }
  for (const Record& r : records) {
    if (r.kind == OpKind::kBlobResolved && ((r.flags & kUnnamedPreImage) || named.count(r.pending) == 0)) {
      h.unnamed_pre_images_.push_back(r);
    }
  }
  std::sort(h.unnamed_pre_images_.begin(), h.unnamed_pre_images_.end(), record_by_seq);
  h.Index();
  h.MergePostImages();
  // A call that a death interrupted may never have run (the kill came at the
  // seccomp stop). Taking such a rename as done would send its source's
  // content after a destination it never reached.
  std::set<uint64_t> not_run;
  ThreadSeqs thread_seqs;
  for (const HistoryOp& op : h.all_ops_) thread_seqs[op.op.pid].push_back(op.op.seq);  // in seq order
  for (const HistoryOp& op : h.ops_) {
    if (!op.outcome_known && h.ShowsNotRun(op, thread_seqs)) not_run.insert(op.op.seq);
  }
  if (!not_run.empty()) {
    for (HistoryOp& op : h.all_ops_) op.not_run = not_run.count(op.op.seq) > 0;
    std::erase_if(h.ops_, [&](const HistoryOp& op) { return not_run.count(op.op.seq) > 0; });
    h.Index();
    h.MergePostImages();
  }
  return h;
}

void SessionHistory::MergePostImages() {
  finals_ = sealed_finals_;
  for (auto& [path, list] : post_images_) {
    std::sort(list.begin(), list.end(), [](const PostImage& a, const PostImage& b) { return a.seq < b.seq; });
    if (finals_.count(path) || list.empty()) continue;
    const HistoryOp* last = LastEvent(path);
    if (last == nullptr || list.back().seq > last->op.seq) finals_[path] = list.back().state;
  }
}

std::set<std::string> SessionHistory::NamesAtEnd() const {
  std::set<std::string> out;
  // `name`, seen just before `seq`, under the name the later directory
  // moves (that one included, when it is one) give it.
  auto forward = [&](std::string name, uint64_t seq) {
    for (size_t i : moves_) {
      const Record& m = ops_[i].op;
      if (m.seq < seq) continue;
      if (name == m.path || PathIsStrictlyUnder(name, m.path)) {
        name = m.path2 + name.substr(m.path.size());
      } else if (m.kind == OpKind::kExchange && (name == m.path2 || PathIsStrictlyUnder(name, m.path2))) {
        name = m.path + name.substr(m.path2.size());
      }
    }
    out.insert(std::move(name));
  };
  for (const HistoryOp& h : ops_) {
    if (h.inside()) forward(h.op.path, h.op.seq);
    if (h.inside2()) forward(h.op.path2, h.op.seq);
  }
  for (const auto& [path, list] : post_images_) {
    for (const PostImage& w : list) forward(path, w.seq);
  }
  return out;
}

std::vector<std::string> SessionHistory::PostImagedPaths() const {
  std::vector<std::string> out;
  for (const auto& [path, w] : post_images_) out.push_back(path);
  return out;
}

const HistoryOp* SessionHistory::LastEvent(const std::string& p, uint64_t before_seq) const {
  const HistoryOp* best = nullptr;
  if (auto it = by_path_.find(p); it != by_path_.end()) {
    auto next = std::lower_bound(it->second.begin(), it->second.end(), before_seq,
                                 [this](size_t i, uint64_t seq) { return ops_[i].op.seq < seq; });
    if (next != it->second.begin()) best = &ops_[*std::prev(next)];
  }
  for (auto i = moves_.rbegin(); i != moves_.rend(); ++i) {
    const HistoryOp& h = ops_[*i];
    if (h.op.seq >= before_seq) continue;
    if (best != nullptr && h.op.seq < best->op.seq) break;
    if (PathIsStrictlyUnder(p, h.op.path) || PathIsStrictlyUnder(p, h.op.path2)) return &h;
  }
  return best;
}

bool SessionHistory::LastRecordedState(const std::string& p, FileState* out, bool* no_writer) const {
  return RecordedStateBefore(p, UINT64_MAX, out, no_writer, 0);
}

bool SessionHistory::RecordedStateBefore(const std::string& p, uint64_t before_seq, FileState* out,
                                         bool* no_writer, int depth) const {
  if (depth > 64) return false;
  const HistoryOp* last = LastEvent(p, before_seq);
  if (auto w = post_images_.find(p); w != post_images_.end()) {
    // The last post-image before `before_seq`, if it comes after `last`.
    for (auto it = w->second.rbegin(); it != w->second.rend(); ++it) {
      if (it->seq >= before_seq) continue;
      if (last != nullptr && it->seq < last->op.seq) break;
      *out = it->state;
      *no_writer = (it->flags & kNoWriter) != 0;
      return true;
    }
  }
  if (last == nullptr || !last->outcome_known || last->result_errno != 0) return false;
  const Record& r = last->op;
  *no_writer = true;
  *out = FileState();
  // The state `q` had just before `last`; `keep_signature` false when the
  // call changed the inode's ctime (a chmod, a link, a rename of it).
  auto before_it = [&](const std::string& q, bool keep_signature = false) {
    if (!RecordedStateBefore(q, r.seq, out, no_writer, depth + 1)) return false;
    if (!keep_signature) {
      out->dev = out->ino = 0;
      out->ctime_ns = 0;
    }
    return true;
  };
  if (r.path != p && r.path2 != p) {
    // A directory above it moved (both names inside the root): away, if it
    // was below the source of a rename; what is below a destination is
    // what was at the same place below the other name (its inode untouched).
    // Nothing is below a name a file arrived at.
    bool below_src = PathIsStrictlyUnder(p, r.path), below_dst = PathIsStrictlyUnder(p, r.path2);
    if (r.kind == OpKind::kRename) {
      if (below_src && !below_dst) return true;
      if (!below_dst) return false;
      return r.before.type != FileType::kDirectory || before_it(r.path + p.substr(r.path2.size()), true);
    }
    if (r.kind == OpKind::kExchange) {
      const FileState& arrived = below_dst ? r.before : r.before2;
      if (arrived.type != FileType::kDirectory) return true;
      return before_it(below_dst ? r.path + p.substr(r.path2.size()) : r.path2 + p.substr(r.path.size()), true);
    }
    return false;
  }
  bool as_second = last->inside2() && r.path2 == p && !(last->inside() && r.path == p);
  switch (r.kind) {
    case OpKind::kDelete:
    case OpKind::kRmdir:
      return !as_second;
    case OpKind::kRename:
      if (!as_second) return true;  // the source: gone
      // The destination: what the source held, unless it was a directory
      // (what lies below it is in other records, its own state is whole).
      return last->inside() && r.before.type != FileType::kDirectory && before_it(r.path);
    case OpKind::kMkdir:
      out->type = FileType::kDirectory;
      out->mode = last->after.type == FileType::kDirectory ? last->after.mode : r.new_mode;
      return true;
    case OpKind::kSymlink:
      out->type = FileType::kSymlink;
      out->mode = 0777;
      out->symlink_target = r.target;
      return true;
    case OpKind::kChmod:
      // The content as it was, the mode the call set.
      if (!before_it(p)) return false;
      out->mode = last->after.type != FileType::kAbsent && last->after.type != FileType::kUnknown
                      ? last->after.mode
                      : r.new_mode;
      return true;
    case OpKind::kLink:
      return !as_second && before_it(p);  // the existing file is as it was
    default:
      return false;
  }
}

void SessionHistory::Index() {
  by_path_.clear();
  moves_.clear();
  for (size_t i = 0; i < ops_.size(); ++i) {
    const HistoryOp& op = ops_[i];
    if (op.inside()) by_path_[op.op.path].push_back(i);
    if (op.inside2() && !(op.inside() && op.op.path2 == op.op.path)) by_path_[op.op.path2].push_back(i);
    if (MovesDirectoryWithinRoot(op.op)) moves_.push_back(i);
  }
}

const FileState* SessionHistory::NextRecordedState(const std::string& p, uint64_t seq) const {
  const HistoryOp* next = NextEvent(p, seq);
  if (next != nullptr) {
    if (next->op.path != p && next->op.path2 != p) return nullptr;  // a move of a directory above
    bool as_second = next->inside2() && next->op.path2 == p && !(next->inside() && next->op.path == p);
    return as_second ? &next->op.before2 : &next->op.before;
  }
  auto it = finals_.find(p);
  if (it == finals_.end() || it->second.type == FileType::kUnknown) return nullptr;
  return &it->second;
}

namespace {

// Whether two recorded states describe the same file as far as metadata
// tell (a rename or an exchange keeps a file's size, mode and mtime).
bool SameFile(const FileState& a, const FileState& b) {
  return a.type == b.type && a.mode == b.mode && a.size == b.size && a.mtime_ns == b.mtime_ns &&
         a.symlink_target == b.symlink_target;
}

}  // namespace

bool SessionHistory::ShowsNotRun(const HistoryOp& h, const ThreadSeqs& thread_seqs) const {
  if (!h.inside() || h.op.before.type == FileType::kAbsent) return false;
  const FileState* now = NextRecordedState(h.op.path, h.op.seq);
  if (now == nullptr) return false;
  // The next record is evidence only if its state was taken after the call
  // ran, or after it never would: the final state; a record of the same
  // thread (which cannot be in two calls); or one of another thread
  // recorded after h's thread made a later call. Otherwise the other
  // thread's state may have been taken at its stop while h, already let
  // go, had not yet run (three shells renaming a file each recreates:
  // session 19), and "its source is still there" would then be wrong.
  if (const HistoryOp* next = NextEvent(h.op.path, h.op.seq); next != nullptr && next->op.pid != h.op.pid) {
    auto mine = thread_seqs.find(h.op.pid);
    if (mine == thread_seqs.end()) return false;
    auto later = std::upper_bound(mine->second.begin(), mine->second.end(), h.op.seq);
    if (later == mine->second.end() || *later >= next->op.seq) return false;
  }
  // A call of another thread that made the source again after h ran could
  // be in no record before the next one (its record comes after it, or its
  // outcome does): then the next record finding the source says nothing.
  if ((h.op.kind == OpKind::kRename || h.op.kind == OpKind::kExchange) && MayBeRemadeAfter(h)) return false;
  // A rename that took effect leaves nothing at its source (a rename onto
  // another name of the same inode aside, which changes nothing either): the
  // next record of the source then finds it absent, a creation included. A
  // source still there was never renamed.
  if (h.op.kind == OpKind::kRename) return now->type != FileType::kAbsent;
  // An exchange leaves the other file at each name. A first name still
  // holding what it held, and not what the second name held, was never
  // exchanged. (Two files alike in type, mode, size and mtime cannot be told
  // apart: the exchange is then taken as done.)
  if (h.op.kind == OpKind::kExchange && h.inside2()) {
    return SameFile(*now, h.op.before) && !SameFile(*now, h.op.before2);
  }
  return false;
}

bool SessionHistory::MayBeRemadeAfter(const HistoryOp& h) const {
  auto it = by_path_.find(h.op.path);
  if (it == by_path_.end()) return false;
  const std::string& p = h.op.path;
  for (size_t i : it->second) {
    const HistoryOp& o = ops_[i];
    if (o.op.seq == h.op.seq || o.op.pid == h.op.pid) continue;
    const Record& r = o.op;
    bool makes = false;
    switch (r.kind) {
      case OpKind::kCreate:
      case OpKind::kMkdir:
      case OpKind::kSymlink:
      case OpKind::kMknod:
        makes = o.inside() && r.path == p;
        break;
      case OpKind::kRename:
      case OpKind::kLink:
        makes = o.inside2() && r.path2 == p;
        break;
      case OpKind::kExchange:
        makes = true;  // either side gets the other's file
        break;
      default:
        break;
    }
    if (!makes) continue;
    if (r.seq > h.op.seq ? (r.flags & kAfterItRan) != 0 : !o.outcome_known || o.outcome_seq > h.op.seq) return true;
  }
  return false;
}

namespace {

// Carried records of a directory leaving the root come just before their
// rename; those of one entering it, and the other names of a changed inode,
// just after their call's record (docs/format.md, Part IV).
bool CarriedLeaving(const Record& r) {
  return (r.flags & kCarried) && (r.kind == OpKind::kDelete || r.kind == OpKind::kRmdir);
}
bool CarriedEntering(const Record& r) {
  return ((r.flags & kCarried) && !CarriedLeaving(r)) || (r.flags & kSameInode);
}

}  // namespace

bool SessionHistory::CallBounds(uint64_t seq, size_t* first, size_t* last) const {
  auto it = std::lower_bound(all_ops_.begin(), all_ops_.end(), seq,
                             [](const HistoryOp& h, uint64_t s) { return h.op.seq < s; });
  if (it == all_ops_.end() || it->op.seq != seq) return false;
  size_t call = static_cast<size_t>(it - all_ops_.begin());
  const int32_t pid = all_ops_[call].op.pid;
  auto same = [&](size_t i) { return all_ops_[i].op.pid == pid; };
  // From a carried record to the rename that carried it.
  while (CarriedLeaving(all_ops_[call].op) && call + 1 < all_ops_.size() && same(call + 1)) ++call;
  while (CarriedEntering(all_ops_[call].op) && call > 0 && same(call - 1)) --call;
  *first = *last = call;
  while (*first > 0 && same(*first - 1) && CarriedLeaving(all_ops_[*first - 1].op)) --*first;
  while (*last + 1 < all_ops_.size() && same(*last + 1) && CarriedEntering(all_ops_[*last + 1].op)) ++*last;
  return true;
}

uint64_t SessionHistory::CallStart(uint64_t seq) const {
  size_t first, last;
  return CallBounds(seq, &first, &last) ? all_ops_[first].op.seq : seq;
}

uint64_t SessionHistory::CallEnd(uint64_t seq) const {
  size_t first, last;
  return CallBounds(seq, &first, &last) ? all_ops_[last].op.seq : seq;
}

std::set<std::string> SessionHistory::TouchedPaths(uint64_t from_seq, uint64_t to_seq) const {
  std::set<std::string> out;
  for (const HistoryOp& h : ops_) {
    if (h.op.seq <= from_seq || h.op.seq > to_seq) continue;
    if (h.inside()) out.insert(h.op.path);
    if (h.inside2()) out.insert(h.op.path2);
  }
  return out;
}

const HistoryOp* SessionHistory::NextEvent(const std::string& p, uint64_t at) const {
  const HistoryOp* best = nullptr;
  if (auto it = by_path_.find(p); it != by_path_.end()) {
    auto next = std::upper_bound(it->second.begin(), it->second.end(), at,
                                 [this](uint64_t seq, size_t i) { return seq < ops_[i].op.seq; });
    if (next != it->second.end()) best = &ops_[*next];
  }
  for (size_t i : moves_) {
    const HistoryOp& h = ops_[i];
    if (h.op.seq <= at) continue;
    if (best != nullptr && h.op.seq >= best->op.seq) break;
    if (PathIsStrictlyUnder(p, h.op.path) || PathIsStrictlyUnder(p, h.op.path2)) return &h;
  }
  return best;
}

bool SessionHistory::StateAfter(const std::string& path, uint64_t seq, FileState* out, std::string* lost_at,
                                std::string* end_name) const {
  if (end_name != nullptr) end_name->clear();
  // First the metadata: from the next op touching `path`, else the final state.
  std::string p = path;
  uint64_t at = seq;
  bool have_meta = false;
  for (int hops = 0; hops <= 2 * static_cast<int>(ops_.size()) + 2; ++hops) {
    const HistoryOp* by = NextEvent(p, at);
    if (by != nullptr && by->op.path != p && by->op.path2 != p) {
      // A directory rename (or exchange) moves everything below it: what was
      // below a directory on one side is below the other side afterwards.
      // Below a side that was not a directory before the call (a rename's
      // destination, an exchange's file), nothing existed.
      bool below_first = PathIsStrictlyUnder(p, by->op.path);
      const FileState& side = below_first ? by->op.before : by->op.before2;
      bool was_there = side.type == FileType::kDirectory && (below_first || by->op.kind == OpKind::kExchange);
      if (!was_there) {
        if (!have_meta) *out = FileState();
        return true;
      }
      p = below_first ? by->op.path2 + p.substr(by->op.path.size())
                      : by->op.path + p.substr(by->op.path2.size());
      at = by->op.seq;
      continue;
    }
    if (by == nullptr) {
      auto it = finals_.find(p);
      if (it == finals_.end()) {
        // Everything that exists at the end below a moved directory, and every
        // path an operation named, has a final state; a path below either side
        // of a directory move that has none does not exist at the end.
        // (Sealing walks both sides of every directory move, so a path below
        // either side that exists at the end has a final state.) Not when
        // recovery found the tree changed after the session ended: it walked
        // that tree, not the session's end.
        for (size_t i : moves_) {
          if (changed_after_end_) break;
          if (PathIsStrictlyUnder(p, ops_[i].op.path) || PathIsStrictlyUnder(p, ops_[i].op.path2)) {
            if (!have_meta) *out = FileState();
            return true;
          }
        }
        if (lost_at != nullptr) *lost_at = p;
        return false;
      }
      if (!have_meta) *out = it->second;
      else out->blob = it->second.blob;
      if (end_name != nullptr) *end_name = p;
      return true;
    }
    bool as_second = by->inside2() && by->op.path2 == p && !(by->inside() && by->op.path == p);
    const FileState* found = as_second ? &by->op.before2 : &by->op.before;
    if (!have_meta) {
      *out = *found;
      have_meta = true;
    }
    if (out->type != FileType::kRegular || HasContent(*found)) {
      if (HasContent(*found)) out->blob = found->blob;
      return true;
    }
    OpKind k = by->op.kind;
    // Content the op was meant to capture and did not (the store failed under
    // --on-capture-failure=allow) is unknown: later content is not it.
    if (k == OpKind::kModify || k == OpKind::kDelete || (as_second && k == OpKind::kRename)) {
      out->blob = BlobRef();
      return true;
    }
    // Otherwise the op keeps content in place or moves it: follow it.
    if (!as_second && (k == OpKind::kRename || k == OpKind::kExchange) && by->inside2()) {
      p = by->op.path2;  // it moved along
    } else if (as_second && k == OpKind::kExchange && by->inside()) {
      p = by->op.path;
    }
    // A chmod or a link leaves the content as it is: keep looking after it.
    at = by->op.seq;
  }
  if (lost_at != nullptr) *lost_at = p;
  return false;
}

}  // namespace guard

namespace guard {

std::vector<std::string> SessionHistory::ChangedPaths() const {
  std::vector<std::string> out;
  for (const auto& [path, end] : finals_) {
    FileState start;
    if (!StateAfter(path, 0, &start)) {
      out.push_back(path);
      continue;
    }
    bool same = start.type == end.type;
    if (same && start.type != FileType::kAbsent) {
      same = start.symlink_target == end.symlink_target &&
             (start.type == FileType::kSymlink || start.mode == end.mode);
      if (same && start.type == FileType::kRegular) {
        same = start.blob.kind == BlobRef::Kind::kKey && end.blob.kind == BlobRef::Kind::kKey &&
               start.blob.key == end.blob.key;
      }
    }
    if (!same) out.push_back(path);
  }
  return out;
}

}  // namespace guard
