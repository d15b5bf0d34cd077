// JournalWriter: appends logical records to a journal file (journal_format.h).
//
// Append() makes a record reach the kernel (a complete write(2) of all its
// fragments) before it returns, so a record survives the death of the writing
// process as soon as Append() returns; Sync() makes everything appended so far
// survive a power loss. Append and Sync may be called from different threads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "common/journal_record.h"
#include "common/status.h"
#include "common/unique_fd.h"

namespace guard {

class JournalWriter {
 public:
  // Creates a new journal (O_EXCL, mode 0600) and writes and syncs its header.
  static Status Create(const std::string& path, std::unique_ptr<JournalWriter>* out);
  // Opens an existing journal to append to it. A torn or corrupt tail (bytes
  // after the last complete, valid record) is cut off; *dropped_bytes says how
  // many bytes were removed (0 when the tail was clean).
  static Status OpenForAppend(const std::string& path, std::unique_ptr<JournalWriter>* out,
                              uint64_t* dropped_bytes);

  Status Append(const Record& r);
  // fdatasync, if anything was appended since the last Sync.
  Status Sync();
  // The same, but runs `first` (if non-null) just before the fdatasync,
  // with appends held off from then until the fdatasync has returned: what
  // `first` makes durable covers everything that the records it syncs
  // depend on. A failure of `first` is returned and the journal not synced.
  Status SyncAfter(const std::function<Status()>& first);
  // Bytes in the file, header included.
  uint64_t size() const;
  // Whether records were appended since the last Sync.
  bool dirty() const;
  // Bytes made durable by the last successful Sync (everything before that
  // offset survives a power loss), header included.
  uint64_t synced_size() const;

 private:
  JournalWriter(UniqueFd fd, uint64_t size);
  Status AppendFragments(const std::string& payload);

  mutable std::mutex mu_;
  UniqueFd fd_;
  uint64_t size_;        // guarded by mu_
  bool dirty_ = false;   // guarded by mu_
  uint64_t synced_size_ = 0;  // guarded by mu_
  std::string scratch_;  // guarded by mu_: the bytes of one Append, written at once
};

}  // namespace guard
