#include "supervisor/session/orphan_pending.h"

#include <vector>

namespace guard {

Status SweepOrphanPending(BlobStore* store, const std::string& id, const std::set<std::string>& named,
                          Recorder* recorder, spdlog::logger* log, OrphanPendingCount* count) {
  std::vector<std::string> pending;
  GUARD_RETURN_IF_ERROR(store->ListPending(&pending));
  Status first_error;
  for (const std::string& name : pending) {
    if (!BlobStore::PendingNameOf(name, id) || named.count(name)) continue;
    uint64_t nlink = 0;
    Status s = store->PendingLinkCount(name, &nlink);
    if (s.IsNotFound()) continue;  // resolved meanwhile (its step 3): nothing left to do
    if (s.ok() && nlink > 1) {
      s = store->RemovePending(name);
      if (s.ok()) {
        ++count->removed;
        log->warn("removed pending blob {}: no record names it and its file still holds it", name);
        continue;
      }
    } else if (s.ok()) {
      recorder->NotePending(name);
      ++count->kept;
      log->warn("kept pending blob {}: no record names it, and it is its content's only copy", name);
      continue;
    }
    log->error("pending blob {}: {}", name, s.ToString());
    if (first_error.ok()) first_error = s;
  }
  return first_error;
}

size_t RemoveUnrecordedShimPending(BlobStore* store, const std::string& id, spdlog::logger* log) {
  std::vector<std::string> pending;
  if (Status s = store->ListPending(&pending); !s.ok()) {
    log->warn("pending blobs of the shim: {}", s.ToString());
    return 0;
  }
  const std::string prefix = id + "-s";  // the shim's names (interpose/linux/pre_image.c)
  size_t removed = 0;
  for (const std::string& name : pending) {
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    if (Status s = store->RemovePending(name); !s.ok()) {
      log->warn("pending blob {} of the shim: {}", name, s.ToString());
      continue;
    }
    ++removed;
  }
  if (removed > 0) log->info("removed {} pending pre-image(s) of the shim that no record names", removed);
  return removed;
}

}  // namespace guard
