#include "supervisor/session/session_cap.h"
#include "supervisor/session/disk_use.h"

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <vector>

#include "supervisor/base/units.h"

namespace guard {
namespace {

// Whether a record's pre-image is one of what a turn may thin: the content
// of a file changed in place, by name, inside the root.
bool ThinnablePreImage(const Record& r) {
  return r.kind == OpKind::kModify && !(r.flags & (kOutsideRoot | kCarried | kSameInode | kAfterItRan));
}

}  // namespace

SessionCap::SessionCap(std::string state_dir, uint64_t max_bytes, BlobStore* store, CaptureLog* log,
                       std::shared_ptr<spdlog::logger> logger)
    : state_dir_(std::move(state_dir)), max_bytes_(max_bytes), store_(store), log_(log), logger_(std::move(logger)) {}

void SessionCap::Placed(const BlobKey& key, uint64_t bytes, int64_t mtime_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  Blob& b = blobs_[key];
  b.ours = true;
  b.thinned = false;
  b.bytes = bytes;
  b.mtime_ns = mtime_ns;
  session_bytes_ += bytes;
  if (measured_) placed_bytes_ += bytes;
}

void SessionCap::Reusing(const BlobKey& key) {
  std::lock_guard<std::mutex> lock(mu_);
  blobs_[key].pinned = true;
}

void SessionCap::Resolved(const std::string& pending_name, const BlobKey& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pending_pre_images_.find(pending_name);
  if (it == pending_pre_images_.end()) return;
  if (!it->second.thinnable) Keep(key);
  SetLatest(it->second.path, key);
  pending_pre_images_.erase(it);
}

void SessionCap::Keep(const BlobKey& key) { ++blobs_[key].kept; }

void SessionCap::SetLatest(const std::string& path, const BlobKey& key) {
  ++blobs_[key].held;
  auto [it, fresh] = latest_.try_emplace(path, key);
  if (fresh) return;
  const BlobKey before = it->second;
  it->second = key;
  Blob& b = blobs_[before];
  if (b.held > 0 && --b.held == 0 && b.kept == 0) Offer(before);
}

void SessionCap::Offer(const BlobKey& key) {
  Blob& b = blobs_[key];
  if (b.listed || !b.ours || b.pinned || b.thinned || b.kept > 0 || b.held > 0) return;
  b.listed = true;
  candidates_.push_back(key);
}

void SessionCap::Saw(const Record& r) {
  std::lock_guard<std::mutex> lock(mu_);
  auto named = [](const FileState& s) { return s.blob.kind == BlobRef::Kind::kKey; };
  if (r.kind == OpKind::kMark) {
    named_this_turn_.clear();  // the state at a mark is the next pre-image of each path
    return;
  }
  if (r.kind == OpKind::kFinal && (r.flags & kPostImage)) {
    // Held while it is the path's latest version; a later one lets it go.
    if (named(r.after)) SetLatest(r.path, r.after.blob.key);
    return;
  }
  if (r.kind == OpKind::kThinned) return;
  if (!IsOperation(r.kind)) {
    // End states, resolutions: kept.
    for (const FileState* s : {&r.before, &r.before2, &r.after}) {
      if (named(*s)) Keep(s->blob.key);
    }
    if (r.kind == OpKind::kBlobResolved) Keep(r.key);
    return;
  }
  if (r.kind == OpKind::kRename || r.kind == OpKind::kExchange) {
    // A move may carry a path's state to another name: the next pre-image
    // of every path is kept again, as after a mark.
    named_this_turn_.clear();
  }
  const bool thinnable = ThinnablePreImage(r) && named_this_turn_.count(r.path) > 0;
  if (named(r.before)) {
    if (!thinnable) Keep(r.before.blob.key);
    if (r.kind == OpKind::kModify) SetLatest(r.path, r.before.blob.key);
  } else if (r.before.blob.kind == BlobRef::Kind::kPending && r.kind == OpKind::kModify) {
    pending_pre_images_[r.before.blob.pending] = PendingPreImage{r.path, thinnable};  // its key comes with its resolution
  }
  if (named(r.before2)) Keep(r.before2.blob.key);
  if (!r.path.empty() && !(r.flags & kOutsideRoot)) named_this_turn_.insert(r.path);
  if (!r.path2.empty() && !(r.flags & kOutsideRoot2)) named_this_turn_.insert(r.path2);
}

uint64_t SessionCap::CountedLocked() const {
  const uint64_t total = start_bytes_ + placed_bytes_;
  return total > freed_bytes_ ? total - freed_bytes_ : 0;
}

uint64_t SessionCap::counted_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return CountedLocked();
}

uint64_t SessionCap::thinned_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return thinned_;
}

void SessionCap::Check() {
  std::lock_guard<std::mutex> one_at_a_time(check_mu_);
  bool measure = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!measured_ && session_bytes_ < MeasureAfter(max_bytes_)) return;
    measure = !measured_;
  }
  if (measure) {
    const uint64_t bytes = DiskBytesUnder(state_dir_);
    std::lock_guard<std::mutex> lock(mu_);
    if (!measured_) start_bytes_ = bytes;
    measured_ = true;
  }
  for (;;) {
    BlobKey key;
    std::string path;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (CountedLocked() <= max_bytes_) return;
      if (!said_) {
        said_ = true;
        const std::string cap = FormatSize(max_bytes_);
        logger_->warn("the state directory is over its cap ({} of {}): thinning this session's intermediate versions",
                      FormatSize(CountedLocked()), cap);
        std::fprintf(stderr,
                     "guard: the state directory is over its cap (retention.max_size = %s): this session now keeps "
                     "what each file held before it, at each mark and last, and drops other versions "
                     "(docs/gc.md)\n",
                     cap.c_str());
      }
      // The oldest candidate still free to go.
      bool found = false;
      while (!candidates_.empty() && !found) {
        key = candidates_.front();
        candidates_.pop_front();
        Blob& b = blobs_[key];
        b.listed = false;
        found = b.ours && !b.pinned && !b.thinned && b.kept == 0 && b.held == 0;
      }
      if (!found) return;
    }
    // Recorded before it goes: a restore that needs it then says why it
    // is missing. Not under mu_: the record comes back through Saw.
    Record r;
    r.kind = OpKind::kThinned;
    r.key = key;
    if (Status s = log_->Append(&r); !s.ok()) {
      logger_->warn("cannot record a thinned version: {}", s.ToString());
      return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    Blob& b = blobs_[key];
    if (b.pinned || b.kept > 0 || b.held > 0) continue;  // named again meanwhile: kept
    uint64_t freed = 0;
    bool removed = false;
    if (Status s = store_->RemoveIfUntouched(key, b.mtime_ns, &removed, &freed); !s.ok()) {
      logger_->warn("cannot thin {}: {}", key.Hex(), s.ToString());
      continue;
    }
    if (!removed) {
      b.pinned = true;  // refreshed by another writer: it names it
      continue;
    }
    b.thinned = true;
    freed_bytes_ += freed;
    ++thinned_;
  }
}

}  // namespace guard
