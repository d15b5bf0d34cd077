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
#include <vector>

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
  // Appends `records` in their order with one write(2): all of them, or
  // (the write failed) none. For many records at once (the seal's), where
  // a write each cost more than the encoding.
  Status AppendAll(const std::vector<const Record*>& records);
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
  // Frames `payload` into fragments at the end of scratch_, as if the file
  // already held scratch_ after its size_ bytes.
  void Frame(const std::string& payload);
  // Writes scratch_ at the end of the file; on failure cuts the file back.
  Status WriteScratch();

  mutable std::mutex mu_;
  UniqueFd fd_;
  uint64_t size_;        // guarded by mu_
  bool dirty_ = false;   // guarded by mu_
  uint64_t synced_size_ = 0;  // guarded by mu_
  std::string scratch_;  // guarded by mu_: the bytes of one Append (or AppendAll), written at once
};

}  // namespace guard
