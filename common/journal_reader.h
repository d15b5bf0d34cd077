// JournalReader: reads logical records back from a journal file. It never
// crashes or hangs on damaged input: corruption is reported through
// Reporter with the file offset and the number of bytes skipped, and reading
// resumes at the next block. A torn tail (an append cut short by a crash)
// reads as the end of the journal and is reported as such, not as corruption.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/journal_record.h"
#include "common/status.h"
#include "common/unique_fd.h"

namespace guard {

class JournalReader {
 public:
  class Reporter {
   public:
    virtual ~Reporter() = default;
    // `bytes` starting at `offset` were dropped because of `reason`.
    virtual void Corruption(uint64_t offset, uint64_t bytes, const Status& reason) = 0;
  };

  // Opens `path` and checks its header. A newer major version is kUnsupported;
  // a bad magic is kCorruption. `reporter` may be null and must outlive the reader.
  static Status Open(const std::string& path, Reporter* reporter, std::unique_ptr<JournalReader>* out);
  // Reads the journal from an in-memory image (used by the fuzzer and tests).
  static Status OpenBuffer(std::string data, Reporter* reporter, std::unique_ptr<JournalReader>* out);

  // Reads the next record into *r. Returns false at the end of the journal.
  bool ReadRecord(Record* r);

  // Offset just past the last complete, valid record read so far: where an
  // appender may continue.
  uint64_t end_of_last_record() const { return end_of_last_record_; }
  // Bytes after end_of_last_record() that could not be read as records when
  // the end was reached (a torn tail), valid once ReadRecord returned false.
  uint64_t tail_bytes() const { return tail_bytes_; }
  uint16_t minor_version() const { return minor_; }

  ~JournalReader();

 private:
  struct Impl;
  explicit JournalReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  uint64_t end_of_last_record_ = 0;
  uint64_t tail_bytes_ = 0;
  uint16_t minor_ = 0;
};

// Reads every record of `path`. Corruption is appended to *problems as
// one-line messages ("offset N: M bytes dropped: reason").
Status ReadAllRecords(const std::string& path, std::vector<Record>* out,
                      std::vector<std::string>* problems);

}  // namespace guard
