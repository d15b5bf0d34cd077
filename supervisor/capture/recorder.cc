#include "supervisor/capture/recorder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <deque>
#include <atomic>
#include <functional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/file_io.h"
#include "common/os_calls.h"
#include "common/path_util.h"
#include "supervisor/base/tree_walk.h"
#include "supervisor/capture/file_state.h"
#include "supervisor/capture/tree_edge.h"

namespace guard {

Recorder::Recorder(SessionMeta meta, std::string meta_path, std::unique_ptr<JournalWriter> journal,
                   BlobStore* store, std::shared_ptr<spdlog::logger> log)
    : meta_(std::move(meta)),
      meta_path_(std::move(meta_path)),
      journal_(std::move(journal)),
      store_(store),
      log_(std::move(log)) {}

Status Recorder::Append(Record* r, uint64_t* end_offset) {
  // One lock from the seq to the write(2): a record with a higher seq is
  // never in the file before one with a lower seq, so "later in the
  // journal" and "later seq" mean the same to every rule of docs/format.md.
  // Held for one small write: the work saver encodes nothing heavy here.
  std::lock_guard<std::mutex> lock(append_mu_);
  r->seq = next_seq_++;
  r->wall_ns = WallNowNs();
  r->mono_ns = MonoNowNs();
  GUARD_RETURN_IF_ERROR(journal_->Append(*r));
  if (IsOperation(r->kind)) ++meta_.ops;
  if (end_offset != nullptr) *end_offset = journal_->size();
  if (appended_) appended_(*r);
  return Status::Ok();
}

Status Recorder::AppendAll(const std::vector<Record*>& records) {
  if (records.empty()) return Status::Ok();
  std::vector<const Record*> out(records.begin(), records.end());
  std::lock_guard<std::mutex> lock(append_mu_);
  for (Record* r : records) {
    r->seq = next_seq_++;
    r->wall_ns = WallNowNs();
    r->mono_ns = MonoNowNs();
  }
  GUARD_RETURN_IF_ERROR(journal_->AppendAll(out));
  for (const Record* r : records) {
    if (IsOperation(r->kind)) ++meta_.ops;
    if (appended_) appended_(*r);
  }
  return Status::Ok();
}

void Recorder::MarkChanged(const std::string& rel_path) {
  PathNote& n = paths_[rel_path];
  if (n.bits & PathNote::kChanged) return;
  n.bits |= PathNote::kChanged;
  ++touched_;
}

void Recorder::NoteChanged(const std::string& rel_path) { MarkChanged(rel_path); }

void Recorder::NoteFirstState(const std::string& rel_path, const FileState& before) {
  PathNote& n = paths_[rel_path];
  if (n.bits & PathNote::kHasFirst) return;  // only the first call per path counts
  n.bits |= PathNote::kHasFirst;
  n.type = before.type;
  n.mode = before.mode;
  if (before.type == FileType::kSymlink) {
    n.id_kind = PathNote::Id::kTarget;
    n.id = BlobKey::OfBytes(before.symlink_target);
  } else if (before.type == FileType::kRegular && before.blob.kind == BlobRef::Kind::kKey) {
    n.id_kind = PathNote::Id::kKey;
    n.id = before.blob.key;
  } else if (before.type == FileType::kRegular && before.blob.kind == BlobRef::Kind::kPending) {
    n.id_kind = PathNote::Id::kPendingName;
    n.id = BlobKey::OfBytes(before.blob.pending);
  }
}

namespace {

// The seal works through pending blobs and paths this many at a time: what
// it holds at once (a Record, 720 bytes, per item) stays bounded whatever
// the session's size, and the records still come in the order one pass
// over everything would give.
constexpr size_t kSealBatch = 1024;

bool KeyLess(const BlobKey& a, const BlobKey& b) { return a.high != b.high ? a.high < b.high : a.low < b.low; }

// The key each pending blob resolved to, by the hash of its name.
class ResolvedKeys {
 public:
  explicit ResolvedKeys(size_t capacity) { keys_.reserve(capacity); }
  void Add(const std::string& pending, const BlobKey& key) { keys_.emplace_back(BlobKey::OfBytes(pending), key); }
  void Sort() {
    std::sort(keys_.begin(), keys_.end(), [](const auto& a, const auto& b) { return KeyLess(a.first, b.first); });
  }
  bool Find(const BlobKey& name_hash, BlobKey* key) const {
    auto it = std::lower_bound(keys_.begin(), keys_.end(), name_hash,
                               [](const auto& e, const BlobKey& h) { return KeyLess(e.first, h); });
    if (it == keys_.end() || !(it->first == name_hash)) return false;
    *key = it->second;
    return true;
  }

 private:
  std::vector<std::pair<BlobKey, BlobKey>> keys_;
};

// Whether end state `after` certainly equals the first state `n` noted;
// content without a key on either side counts as changed. (Pending names and
// symlink texts compare by their 128-bit hashes.)
bool SameState(const Recorder::PathNote& n, const FileState& after, const ResolvedKeys& resolved) {
  using Id = Recorder::PathNote::Id;
  if (n.type != after.type) return false;
  if (n.type == FileType::kAbsent) return true;
  if (n.mode != after.mode) return false;
  if (n.type == FileType::kSymlink) return n.id_kind == Id::kTarget && n.id == BlobKey::OfBytes(after.symlink_target);
  if (n.type != FileType::kRegular) return true;
  BlobKey a, b;
  if (n.id_kind == Id::kKey) a = n.id;
  else if (n.id_kind != Id::kPendingName || !resolved.Find(n.id, &a)) return false;
  if (after.blob.kind == BlobRef::Kind::kKey) b = after.blob.key;
  else if (after.blob.kind != BlobRef::Kind::kPending || !resolved.Find(BlobKey::OfBytes(after.blob.pending), &b))
    return false;
  return a == b;
}

// Runs work(0) .. work(n - 1) on up to kSealThreads threads, the calling one
// included; returns when all are done. Sealing reads, hashes and compresses
// every changed file (the store is thread-safe), so on a multi-core machine
// the session's end comes sooner. Each index is claimed once through `next`
// (relaxed: the work items share no data, and the joins order their
// results before the caller reads them).
constexpr unsigned kSealThreads = 4;
void ForEachIndexInParallel(size_t n, const std::function<void(size_t)>& work) {
  std::atomic<size_t> next{0};
  auto loop = [&] {
    for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n;) work(i);
  };
  unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  size_t helpers = std::min<size_t>({kSealThreads, cpus, n}) ;
  std::vector<std::thread> threads;
  for (size_t t = 1; t < helpers; ++t) threads.emplace_back(loop);
  loop();
  for (std::thread& t : threads) t.join();
}

}  // namespace

void Recorder::AddTreeBelow(const std::string& rel_dir) {
  // Never walk through a symlink put where a moved directory was, nor
  // through one above it (OpenDirBeneath refuses both).
  UniqueFd root, dir;
  if (!OpenFile(meta_.root, O_PATH | O_DIRECTORY, 0, &root).ok()) return;
  // Moved away again, or gone: nothing below it now.
  if (!OpenDirBeneath(root.get(), rel_dir, O_RDONLY, &dir).ok()) return;
  (void)WalkTree(dir.get(), rel_dir, {}, [this](const TreeEntry& e) { MarkChanged(e.rel); });
}

size_t Recorder::NotePending(const std::string& pending_name) {
  pending_.push_back(pending_name);
  return pending_.size() - 1;
}

void Recorder::DropPending(const std::string& pending_name) {
  // The usual case: the failed call's adoption was the last one noted.
  if (!pending_.empty() && pending_.back() == pending_name) {
    pending_.pop_back();
  } else {
    dropped_.insert(pending_name);
  }
}

void Recorder::NoteUnnamedPending(const std::string& pending_name, const FileState& as_put) {
  unnamed_[pending_name] = as_put;
  NotePending(pending_name);
}

std::vector<std::string_view> Recorder::NotedPending() const {
  std::vector<std::string_view> noted;
  noted.reserve(pending_.size());
  for (const std::string& p : pending_) {
    if (dropped_.count(p) == 0) noted.emplace_back(p);
  }
  std::sort(noted.begin(), noted.end());
  return noted;
}

Status Recorder::NoteIncomplete(const std::string& what) {
  Record r;
  r.kind = OpKind::kIncomplete;
  r.label = what;
  {
    std::lock_guard<std::mutex> lock(append_mu_);
    if (meta_.incomplete_ns != 0) return Status::Ok();
    r.seq = next_seq_++;
    r.wall_ns = WallNowNs();
    r.mono_ns = MonoNowNs();
    // In guard's memory first: the seal writes meta_ whatever the append does.
    meta_.incomplete_ns = r.wall_ns;
    meta_.incomplete_what = what;
    GUARD_RETURN_IF_ERROR(journal_->Append(r));
  }
  // meta.json now, not at the seal only: `guard status` and `guard
  // sessions` read it while the session runs, and after a kill.
  SessionMeta copy;
  {
    std::lock_guard<std::mutex> lock(append_mu_);
    copy = meta_;
  }
  return SaveSessionMeta(meta_path_, copy);
}

Status Recorder::Seal(SessionState state, int exit_code, int signal, int64_t ended_ns,
                      EndStateReader* end_states) {
  Status first_error;
  auto keep = [&](const Status& s) {
    if (!s.ok()) {
      log_->error("sealing: {}", s.ToString());
      if (first_error.ok()) first_error = s;
    }
  };
  // The blobs and final states are computed in parallel, a batch at a time,
  // then recorded in the same order as one thread would: by pending name,
  // then by path.
  std::sort(pending_.begin(), pending_.end());
  pending_.erase(std::unique(pending_.begin(), pending_.end()), pending_.end());
  if (!dropped_.empty()) std::erase_if(pending_, [&](const std::string& n) { return dropped_.count(n) > 0; });
  dropped_.clear();
  const int64_t resolve_start_ns = MonoNowNs();
  const size_t resolved_count = pending_.size();
  ResolvedKeys resolved(pending_.size());
  std::vector<Record> batch;
  std::vector<Status> statuses;
  std::vector<Record*> appending;  // a batch's records, appended with one write
  for (size_t start = 0; start < pending_.size(); start += kSealBatch) {
    const size_t n = std::min(kSealBatch, pending_.size() - start);
    batch.assign(n, Record());
    statuses.assign(n, Status());
    ForEachIndexInParallel(n, [&](size_t i) { statuses[i] = store_->ResolvePending(pending_[start + i], &batch[i].key); });
    appending.clear();
    for (size_t i = 0; i < n; ++i) {
      Record& r = batch[i];
      keep(statuses[i]);
      if (!statuses[i].ok()) continue;
      r.kind = OpKind::kBlobResolved;
      r.pending = std::move(pending_[start + i]);
      if (auto it = unnamed_.find(r.pending); it != unnamed_.end()) {
        r.flags |= kUnnamedPreImage;
        r.after = it->second;
        r.after.blob = BlobRef{BlobRef::Kind::kKey, r.key, {}};
      }
      resolved.Add(r.pending, r.key);
      appending.push_back(&r);
    }
    keep(AppendAll(appending));
  }
  log_->info("sealing: {} pending blob(s) resolved in {:.3f} s", resolved_count,
             static_cast<double>(MonoNowNs() - resolve_start_ns) / 1e9);
  std::deque<std::string>().swap(pending_);
  resolved.Sort();
  const int64_t finals_start_ns = MonoNowNs();
  for (const std::string& dir : moved_dirs_) AddTreeBelow(dir);
  // Paths only the end-state reader names (the directories above changed
  // paths, names through moves) count as changed only when a first state
  // says how they started.
  if (end_states != nullptr) {
    std::set<std::string> more;
    end_states->AddPaths(&more);
    for (const std::string& rel : more) {
      PathNote& n = paths_[rel];
      if (!(n.bits & PathNote::kChanged)) n.bits |= PathNote::kEndReader;
    }
  }
  files_changed_ = 0;
  touched_ = 0;
  std::vector<std::pair<const std::string*, const PathNote*>> paths;
  // Below a symlink or a file nothing exists beneath the root (absent).
  // Asked once per parent directory in a batch (the paths come in order,
  // so a batch's files share few parents), before the batch is read: one
  // openat2 each where a walk from the root per file was 6 lstats and more.
  std::unordered_map<std::string, bool> parent_leaves;
  std::vector<char> beneath_of;
  auto seal_batch = [&] {
    batch.assign(paths.size(), Record());
    statuses.assign(paths.size(), Status());
    parent_leaves.clear();
    beneath_of.assign(paths.size(), 1);
    for (size_t i = 0; i < paths.size(); ++i) {
      const std::string& rel = *paths[i].first;
      size_t slash = rel.rfind('/');
      if (slash == std::string::npos) continue;  // "." or a name in the root itself
      auto [it, added] = parent_leaves.try_emplace(rel.substr(0, slash));
      if (added) it->second = ParentLeavesTheTree(meta_.root, rel);
      beneath_of[i] = !it->second;
    }
    ForEachIndexInParallel(paths.size(), [&](size_t i) {
      const std::string& rel = *paths[i].first;
      std::string abs = PathJoin(meta_.root, rel);
      bool beneath = beneath_of[i] != 0;
      if (end_states != nullptr) {
        statuses[i] = end_states->Read(rel, abs, beneath, &batch[i].after, &batch[i].flags);
      } else if (beneath) {
        statuses[i] = CaptureStateWithSignature(abs, store_, &batch[i].after);
      }
    });
    appending.clear();
    for (size_t i = 0; i < paths.size(); ++i) {
      const PathNote& note = *paths[i].second;
      Record& r = batch[i];
      r.kind = OpKind::kFinal;
      r.path = *paths[i].first;
      keep(statuses[i]);
      appending.push_back(&r);
      bool named = (note.bits & PathNote::kChanged) != 0;
      if (!(note.bits & PathNote::kHasFirst) ? named : !SameState(note, r.after, resolved)) ++files_changed_;
    }
    keep(AppendAll(appending));
    paths.clear();
  };
  for (const auto& [rel, note] : paths_) {
    if (!(note.bits & (PathNote::kChanged | PathNote::kEndReader))) continue;
    ++touched_;
    paths.emplace_back(&rel, &note);
    if (paths.size() == kSealBatch) seal_batch();
  }
  if (!paths.empty()) seal_batch();
  log_->info("sealing: {} final state(s) recorded in {:.3f} s", touched_,
             static_cast<double>(MonoNowNs() - finals_start_ns) / 1e9);
  Record end;
  end.kind = OpKind::kSessionEnd;
  end.comm = SessionStateName(state);
  end.result_errno = signal;
  keep(Append(&end));
  const int64_t sync_start_ns = MonoNowNs();
  keep(store_->SyncWritten());
  keep(journal_->Sync());
  log_->info("sealing: blobs and journal synced in {:.3f} s", static_cast<double>(MonoNowNs() - sync_start_ns) / 1e9);

  meta_.ended_ns = ended_ns != 0 ? ended_ns : WallNowNs();
  meta_.state = state;
  meta_.exit_code = exit_code;
  meta_.signal = signal;
  meta_.files = files_changed_;
  keep(SaveSessionMeta(meta_path_, meta_));
  return first_error;
}

}  // namespace guard
