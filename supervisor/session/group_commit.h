// GroupCommit: a thread that makes the session durable in batches. Every
// interval (config.toml's capture.sync_every, 1 s by default), when
// records were appended since the last commit, it syncs the blobs stored
// since then and then the journal (fdatasync), so that a blob is always
// durable before the record that names it. A power loss can therefore cost at most the last
// interval of records (plus the time of one sync).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>

#include "common/blob_store.h"
#include "common/journal_writer.h"
#include "common/pacer.h"
#include "common/status.h"

namespace guard {

class GroupCommit {
 public:
  // `on_commit`, if set, is called on the commit's thread after each commit
  // that made records durable, with the journal's durable size then
  // (JournalWriter::synced_size): a record that ends at or before it survives
  // a power loss. `pacer` (null: the steady clock) is what the thread waits
  // on between two commits; it must outlive the GroupCommit.
  GroupCommit(JournalWriter* journal, BlobStore* store,
              std::function<void(uint64_t durable_bytes)> on_commit, std::chrono::nanoseconds interval,
              Pacer* pacer = nullptr);
  ~GroupCommit();  // Stop()s

  // Stops the thread after one last commit; returns the last commit's status.
  Status Stop();
  // Commits now, on the calling thread.
  Status CommitNow();
  uint64_t commits() const { return commits_; }

 private:
  void Run();

  JournalWriter* journal_;
  BlobStore* store_;
  const std::function<void(uint64_t)> on_commit_;
  const std::chrono::nanoseconds interval_;
  SteadyPacer steady_;
  Pacer* const pacer_;
  std::mutex mu_;
  bool stopping_ = false;  // guarded by mu_
  Status last_error_;      // guarded by mu_
  std::atomic<uint64_t> commits_{0};
  std::thread thread_;
};

}  // namespace guard
