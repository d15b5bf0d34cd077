#include "supervisor/capture/recorder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/file_io.h"
#include "common/path_util.h"
#include "supervisor/base/tree_walk.h"
#include "supervisor/capture/file_state.h"

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
  return Status::Ok();
}

void Recorder::NoteChanged(const std::string& rel_path) { changed_.insert(rel_path); }
void Recorder::NoteFirstState(const std::string& rel_path, const FileState& before) {
  first_state_.emplace(rel_path, before);
}

namespace {

// Whether `after` certainly equals `before`; content without a key on either
// side counts as changed.
bool SameState(const FileState& before, const FileState& after,
               const std::map<std::string, BlobKey>& resolved) {
  if (before.type != after.type) return false;
  if (before.type == FileType::kAbsent) return true;
  if (before.mode != after.mode) return false;
  if (before.type == FileType::kSymlink) return before.symlink_target == after.symlink_target;
  if (before.type != FileType::kRegular) return true;
  auto key_of = [&](const BlobRef& ref, BlobKey* key) {
    if (ref.kind == BlobRef::Kind::kKey) *key = ref.key;
    else if (ref.kind != BlobRef::Kind::kPending) return false;
    else if (auto it = resolved.find(ref.pending); it != resolved.end()) *key = it->second;
    else return false;
    return true;
  };
  BlobKey a, b;
  return key_of(before.blob, &a) && key_of(after.blob, &b) && a == b;
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

// Whether `rel` (root-relative) or a directory above it, below the root, is
// a symlink or not a directory: then nothing is at `rel` beneath the root,
// and following the path would read files outside it.
static bool LeavesTheTree(const std::string& root, const std::string& rel, bool rel_itself) {
  if (rel == ".") return false;
  std::string path = root;
  size_t start = 0;
  for (;;) {
    size_t slash = rel.find('/', start);
    bool last = slash == std::string::npos;
    if (last && !rel_itself) return false;
    path += "/" + rel.substr(start, last ? std::string::npos : slash - start);
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) return false;  // absent: lstat of rel says so
    if (!S_ISDIR(st.st_mode)) return true;
    if (last) return false;
    start = slash + 1;
  }
}

void Recorder::AddTreeBelow(const std::string& rel_dir) {
  // Never walk through a symlink put where a moved directory was, nor
  // through one above it (OpenDirBeneath refuses both).
  UniqueFd root, dir;
  if (!OpenFile(meta_.root, O_PATH | O_DIRECTORY, 0, &root).ok()) return;
  // Moved away again, or gone: nothing below it now.
  if (!OpenDirBeneath(root.get(), rel_dir, O_RDONLY, &dir).ok()) return;
  (void)WalkTree(dir.get(), rel_dir, {}, [this](const TreeEntry& e) { changed_.insert(e.rel); });
}

void Recorder::NotePending(const std::string& pending_name) { pending_.insert(pending_name); }
void Recorder::DropPending(const std::string& pending_name) { pending_.erase(pending_name); }

Status Recorder::Seal(SessionState state, int exit_code, int signal, int64_t ended_ns,
                      EndStateReader* end_states) {
  Status first_error;
  auto keep = [&](const Status& s) {
    if (!s.ok()) {
      log_->error("sealing: {}", s.ToString());
      if (first_error.ok()) first_error = s;
    }
  };
  // The blobs and final states are computed in parallel, then recorded in
  // the same order as one thread would: by pending name, then by path.
  std::map<std::string, BlobKey> resolved;
  std::vector<std::string> names(pending_.begin(), pending_.end());
  std::vector<Record> resolutions(names.size());
  std::vector<Status> statuses(names.size());
  ForEachIndexInParallel(names.size(), [&](size_t i) {
    statuses[i] = store_->ResolvePending(names[i], &resolutions[i].key);
  });
  for (size_t i = 0; i < names.size(); ++i) {
    Record& r = resolutions[i];
    keep(statuses[i]);
    if (!statuses[i].ok()) continue;
    r.kind = OpKind::kBlobResolved;
    r.pending = names[i];
    resolved[names[i]] = r.key;
    keep(Append(&r));
  }
  pending_.clear();
  for (const std::string& dir : moved_dirs_) AddTreeBelow(dir);
  // Paths only the end-state reader names (the directories above changed
  // paths, names through moves) count as changed only when a first state
  // says how they started.
  const std::set<std::string> named = changed_;
  if (end_states != nullptr) end_states->AddPaths(&changed_);
  files_changed_ = 0;
  std::vector<const std::string*> paths;
  for (const std::string& rel : changed_) paths.push_back(&rel);
  std::vector<Record> finals(paths.size());
  statuses.assign(paths.size(), Status());
  ForEachIndexInParallel(paths.size(), [&](size_t i) {
    const std::string& rel = *paths[i];
    std::string abs = PathJoin(meta_.root, rel);
    // Below a symlink or a file nothing exists beneath the root (absent).
    bool beneath = !LeavesTheTree(meta_.root, rel, false);
    if (end_states != nullptr) {
      statuses[i] = end_states->Read(rel, abs, beneath, &finals[i].after, &finals[i].flags);
    } else if (beneath) {
      statuses[i] = CaptureStateWithSignature(abs, store_, &finals[i].after);
    }
  });
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string& rel = *paths[i];
    Record& r = finals[i];
    r.kind = OpKind::kFinal;
    r.path = rel;
    keep(statuses[i]);
    keep(Append(&r));
    auto first = first_state_.find(rel);
    if (first == first_state_.end() ? named.count(rel) > 0 : !SameState(first->second, r.after, resolved)) {
      ++files_changed_;
    }
  }
  Record end;
  end.kind = OpKind::kSessionEnd;
  end.comm = SessionStateName(state);
  end.result_errno = signal;
  keep(Append(&end));
  keep(store_->SyncWritten());
  keep(journal_->Sync());

  meta_.ended_ns = ended_ns != 0 ? ended_ns : WallNowNs();
  meta_.state = state;
  meta_.exit_code = exit_code;
  meta_.signal = signal;
  meta_.files = files_changed_;
  keep(SaveSessionMeta(meta_path_, meta_));
  return first_error;
}

}  // namespace guard
