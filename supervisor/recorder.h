// Recorder: one running session's journal. Stamps records with their
// sequence number, times and process, appends them, keeps the set of paths
// the session changed, and seals the session at its end.
#pragma once

#include <sys/types.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "common/blob_store.h"
#include "common/journal_writer.h"
#include "common/session_meta.h"
#include "common/status.h"

namespace guard {

class Recorder {
 public:
  Recorder(SessionMeta meta, std::string meta_path, std::unique_ptr<JournalWriter> journal,
           BlobStore* store, std::shared_ptr<spdlog::logger> log);

  // Stamps (seq, wall and monotonic time) and appends `*r`. Operation records
  // count toward meta().ops.
  Status Append(Record* r);
  // A path under the root (relative) that an operation changed.
  void NoteChanged(const std::string& rel_path);
  // A pending blob named by a record of this session, to be resolved at Seal.
  void NotePending(const std::string& pending_name);
  // The pending blob of an operation that failed: nothing refers to it any more.
  void DropPending(const std::string& pending_name);

  // Ends the session: resolves pending blobs (kBlobResolved), records the
  // final state of every changed path (kFinal), appends kSessionEnd, syncs,
  // and writes meta.json with how it ended.
  Status Seal(SessionState state, int exit_code, int signal);

  JournalWriter* journal() { return journal_.get(); }
  BlobStore* store() { return store_; }
  const SessionMeta& meta() const { return meta_; }
  size_t changed_count() const { return changed_.size(); }
  const std::set<std::string>& changed() const { return changed_; }

 private:
  SessionMeta meta_;
  std::string meta_path_;
  std::unique_ptr<JournalWriter> journal_;
  BlobStore* store_;
  std::shared_ptr<spdlog::logger> log_;
  uint64_t next_seq_ = 1;
  std::set<std::string> changed_;
  std::set<std::string> pending_;
};

int64_t WallNowNs();
int64_t MonoNowNs();

}  // namespace guard
