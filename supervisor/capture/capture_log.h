// CaptureLog: what the capture core writes through. The Recorder
// (recorder.h) is the session's real one, over the journal and the blob
// store; unit tests of the core use an in-memory fake
// (tests/unit/capture/fake_capture_log.h) over a real store in a
// temporary directory.
#pragma once

#include <cstdint>
#include <string>

#include "common/blob_store.h"
#include "common/journal_record.h"
#include "common/status.h"
#include "supervisor/capture/saved_versions.h"

namespace guard {

class CaptureLog {
 public:
  virtual ~CaptureLog() = default;
  // Stamps (seq, times) and appends `*r`; `end_offset`, if given, receives
  // the journal's size just after it.
  virtual Status Append(Record* r, uint64_t* end_offset = nullptr) = 0;
  // A path under the root (relative) that an operation changed.
  virtual void NoteChanged(const std::string& rel_path) = 0;
  // A directory (relative) that a rename or exchange moved.
  virtual void NoteMovedDirectory(const std::string& rel_path) = 0;
  // What a path under the root held before the session first touched it.
  virtual void NoteFirstState(const std::string& rel_path, const FileState& before) = 0;
  // A pending blob named by a record: its index, by which PendingName gives
  // the name back until the seal.
  virtual size_t NotePending(const std::string& pending_name) = 0;
  virtual const std::string& PendingName(size_t index) const = 0;
  // The pending blob of an operation that failed: nothing refers to it.
  virtual void DropPending(const std::string& pending_name) = 0;
  virtual BlobStore* store() = 0;
  // The last version of each path the session stored (saved_versions.h),
  // or null: every pre-image is then stored whole.
  virtual SavedVersions* versions() { return nullptr; }
  // Whether a record of this session has named `rel_path` (NoteFirstState).
  virtual bool HasFirstState(const std::string& rel_path) const {
    (void)rel_path;
    return false;
  }
};

}  // namespace guard
