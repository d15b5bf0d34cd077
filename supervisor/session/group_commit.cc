#include "supervisor/session/group_commit.h"

#include <cstdio>

namespace guard {

GroupCommit::GroupCommit(JournalWriter* journal, BlobStore* store, std::function<void(uint64_t)> on_commit,
                         std::chrono::nanoseconds interval, Pacer* pacer)
    : journal_(journal),
      store_(store),
      on_commit_(std::move(on_commit)),
      interval_(interval),
      pacer_(pacer != nullptr ? pacer : &steady_),
      thread_([this] { Run(); }) {}

GroupCommit::~GroupCommit() {
  // Normally Stop() was called and its status reported by the caller; a
  // GroupCommit destroyed running (an early return) still makes its last
  // commit, and a failure of it must not go unsaid.
  bool running;
  {
    std::lock_guard<std::mutex> lock(mu_);
    running = thread_.joinable();
  }
  if (!running) return;
  Status s = Stop();
  if (!s.ok()) std::fprintf(stderr, "guard: making the session durable: %s\n", s.ToString().c_str());
}

Status GroupCommit::CommitNow() {
  if (!journal_->dirty()) return Status::Ok();
  // Order matters: blobs first, then the records that name them. The
  // journal's fdatasync makes durable every record appended before it
  // returns, including records appended while the blobs were being synced,
  // whose blobs (stored just before them) that sync may have missed. So:
  // 1. sync the blobs stored so far, while the tracer goes on capturing;
  // 2. then, with appends held off, sync the blobs stored since (usually
  //    few, and already partly written back by 1) and then the journal.
  // Every record the fdatasync makes durable was appended before 2 began,
  // and its blob was stored before that record, so before 2's blob sync.
  GUARD_RETURN_IF_ERROR(store_->SyncWritten());
  GUARD_RETURN_IF_ERROR(journal_->SyncAfter([this] { return store_->SyncWritten(); }));
  ++commits_;
  if (on_commit_) on_commit_(journal_->synced_size());
  return Status::Ok();
}

void GroupCommit::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    lock.unlock();
    pacer_->Wait(interval_);  // Stop ends it at once
    Status s = CommitNow();
    lock.lock();
    if (!s.ok()) last_error_ = s;
  }
}

Status GroupCommit::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!thread_.joinable()) return last_error_;
    stopping_ = true;
  }
  pacer_->Wake();
  thread_.join();
  Status s = CommitNow();
  std::lock_guard<std::mutex> lock(mu_);
  if (!s.ok()) last_error_ = s;
  return last_error_;
}

}  // namespace guard
