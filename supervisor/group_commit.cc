#include "supervisor/group_commit.h"

namespace guard {

GroupCommit::GroupCommit(JournalWriter* journal, BlobStore* store)
    : journal_(journal), store_(store), thread_([this] { Run(); }) {}

GroupCommit::~GroupCommit() { Stop(); }

Status GroupCommit::CommitNow() {
  if (!journal_->dirty()) return Status::Ok();
  // Order matters: blobs first, then the records that name them.
  GUARD_RETURN_IF_ERROR(store_->SyncWritten());
  GUARD_RETURN_IF_ERROR(journal_->Sync());
  ++commits_;
  return Status::Ok();
}

void GroupCommit::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, kInterval, [this] { return stopping_; });
    lock.unlock();
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
  cv_.notify_all();
  thread_.join();
  Status s = CommitNow();
  std::lock_guard<std::mutex> lock(mu_);
  if (!s.ok()) last_error_ = s;
  return last_error_;
}

}  // namespace guard
