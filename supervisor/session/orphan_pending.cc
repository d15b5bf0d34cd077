#include "supervisor/session/orphan_pending.h"

#include <sys/stat.h>

#include <algorithm>
#include <vector>

namespace guard {

namespace {

// The shim's names for session `id` (interpose/linux/pre_image.c).
bool IsShimPendingName(std::string_view name, const std::string& id) {
  return name.size() > id.size() + 1 && name.compare(0, id.size(), id) == 0 && name.substr(id.size(), 2) == "-s";
}

}  // namespace

Status SweepOrphanPending(BlobStore* store, const std::string& id, const std::set<std::string>& named,
                          Recorder* recorder, spdlog::logger* log, OrphanPendingCount* count) {
  std::vector<std::string> pending;
  GUARD_RETURN_IF_ERROR(store->ListPending(&pending));
  Status first_error;
  for (const std::string& name : pending) {
    if (!BlobStore::PendingNameOf(name, id) || named.count(name) || IsShimPendingName(name, id)) continue;
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

UnnamedPendingCount KeepUnnamedShimPending(BlobStore* store, const std::string& id,
                                           const std::function<bool(std::string_view)>& named, Recorder* recorder,
                                           spdlog::logger* log) {
  UnnamedPendingCount count;
  // Only the shim's names no record names are held: after an `rm -rf` of
  // 100,000 files the pending area holds 100,000 names, all named.
  std::vector<std::string> pending;
  Status listed = store->ListPending(&pending, [&](std::string_view name) {
    return IsShimPendingName(name, id) && !named(name);
  });
  if (Status s = listed; !s.ok()) {
    log->warn("pending pre-images of the shim: {}", s.ToString());
    return count;
  }
  struct Found {
    std::string name;
    FileState state;
  };
  std::vector<Found> found;
  for (const std::string& name : pending) {
    struct stat st;
    if (Status s = store->StatPending(name, &st); !s.ok()) {
      if (!s.IsNotFound()) log->warn("pending pre-image {} of the shim: {}", name, s.ToString());
      continue;
    }
    Found f;
    f.name = name;
    f.state.type = FileType::kRegular;
    f.state.mode = st.st_mode & 07777;
    f.state.size = static_cast<uint64_t>(st.st_size);
    f.state.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    f.state.ctime_ns = static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
    found.push_back(std::move(f));
  }
  // Newest first (ctime: when the shim put it there), so that the bound
  // keeps what was put last; ties by name, for a stable order.
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    return a.state.ctime_ns != b.state.ctime_ns ? a.state.ctime_ns > b.state.ctime_ns : a.name < b.name;
  });
  for (const Found& f : found) {
    if (count.kept < kUnnamedPreImagesMax && count.kept_bytes + f.state.size <= kUnnamedPreImageBytesMax) {
      recorder->NoteUnnamedPending(f.name, f.state);
      ++count.kept;
      count.kept_bytes += f.state.size;
      log->warn("kept pre-image {} of the shim ({} bytes): no record names it", f.name, f.state.size);
      continue;
    }
    if (Status s = store->RemovePending(f.name); !s.ok()) {
      log->warn("pending pre-image {} of the shim: {}", f.name, s.ToString());
      continue;
    }
    ++count.past_bound;
  }
  if (count.past_bound > 0) {
    log->error("removed {} older pre-image(s) of the shim that no record names: past the bound of {} pre-images or "
               "{} bytes a session keeps",
               count.past_bound, kUnnamedPreImagesMax, kUnnamedPreImageBytesMax);
  }
  return count;
}

}  // namespace guard
