// JournalWriter: frames records into fragments over fixed-size blocks, as
// LevelDB's db/log_writer.cc does (format: journal_format.h,
// docs/format.md (Part I)).
//
// Invariants:
//  - size_ is the file's length: the header plus every complete Append. The
//    position inside the current block is (size_ - kFileHeaderSize) % kBlockSize.
//  - All fragments of one record (and the zero trailer before them, if any)
//    reach the kernel in one WriteAll, so a crash leaves either the whole
//    record or a torn tail, never a gap followed by more records.
//  - After a write whose effect on the file is unknown (and could not be
//    undone) or a failed fdatasync, fd_ is closed and every later call fails:
//    appending after damage would turn a torn tail into mid-file corruption.
#include "common/journal_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "common/coding.h"
#include "common/file_io.h"
#include "common/journal_format.h"
#include "common/journal_reader.h"
#include "common/os_calls.h"
#include "common/path_util.h"

namespace guard {
namespace {

using journal::kBlockSize;
using journal::kFileHeaderSize;
using journal::kFragmentHeaderSize;

Status Fdatasync(int fd, std::string_view what) {
  if (GUARD_EINTR_RETRY(os::SyncData(fd)) != 0) return Status::FromErrno(what, errno);
  return Status::Ok();
}

Status Unusable() {
  return Status::IOError("journal: writer unusable after an earlier write or sync failure");
}

// Collects what OpenForAppend must not ignore: a read error would make the
// journal look shorter than it is, and cutting it there would destroy records.
class ReadErrorCatcher : public JournalReader::Reporter {
 public:
  void Corruption(uint64_t, uint64_t, const Status& reason) override {
    if (!reason.IsCorruption() && error_.ok()) error_ = reason;
  }
  const Status& error() const { return error_; }

 private:
  Status error_;
};

}  // namespace

JournalWriter::JournalWriter(UniqueFd fd, uint64_t size) : fd_(std::move(fd)), size_(size), synced_size_(size) {}

Status JournalWriter::Create(const std::string& path, std::unique_ptr<JournalWriter>* out) {
  UniqueFd fd;
  GUARD_RETURN_IF_ERROR(OpenFile(path, O_CREAT | O_EXCL | O_WRONLY | O_APPEND, 0600, &fd));
  std::string header(journal::kMagic, sizeof journal::kMagic);
  PutFixed16(&header, journal::kMajorVersion);
  PutFixed16(&header, journal::kMinorVersion);
  PutFixed32(&header, kBlockSize);
  Status s = WriteAll(fd.get(), header.data(), header.size(), path);
  if (s.ok()) s = Fdatasync(fd.get(), path);
  if (s.ok()) s = FsyncDir(ParentDir(path));
  if (!s.ok()) {
    // O_EXCL made the file ours: leave no half-made journal behind.
    ::unlink(path.c_str());
    return s;
  }
  out->reset(new JournalWriter(std::move(fd), kFileHeaderSize));
  return Status::Ok();
}

Status JournalWriter::OpenForAppend(const std::string& path, std::unique_ptr<JournalWriter>* out,
                                    uint64_t* dropped_bytes) {
  UniqueFd fd;
  GUARD_RETURN_IF_ERROR(OpenFile(path, O_WRONLY | O_APPEND, 0, &fd));
  std::unique_ptr<JournalReader> reader;
  ReadErrorCatcher catcher;
  GUARD_RETURN_IF_ERROR(JournalReader::Open(path, &catcher, &reader));
  Record r;
  while (reader->ReadRecord(&r)) {
  }
  GUARD_RETURN_IF_ERROR(catcher.error());
  // Damage followed by valid records stays (the reader reports and skips it);
  // only what follows the last valid record is cut.
  const uint64_t end = reader->end_of_last_record();

  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Status::FromErrno(path, errno);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size < end) return Status::IOError(path + ": journal shrank while being read");
  if (size > end) {
    if (GUARD_EINTR_RETRY(::ftruncate(fd.get(), static_cast<off_t>(end))) != 0) {
      return Status::FromErrno(path, errno);
    }
    GUARD_RETURN_IF_ERROR(FsyncFd(fd.get(), path));
  }
  *dropped_bytes = size - end;
  out->reset(new JournalWriter(std::move(fd), end));
  return Status::Ok();
}

Status JournalWriter::Append(const Record& r) {
  std::string payload;
  EncodeRecord(r, &payload);  // needs no shared state: done before taking the lock
  std::lock_guard<std::mutex> lock(mu_);
  if (!fd_.valid()) return Unusable();
  scratch_.clear();
  Frame(payload);
  return WriteScratch();
}

Status JournalWriter::AppendAll(const std::vector<const Record*>& records) {
  std::vector<std::string> payloads(records.size());
  for (size_t i = 0; i < records.size(); ++i) EncodeRecord(*records[i], &payloads[i]);
  std::lock_guard<std::mutex> lock(mu_);
  if (!fd_.valid()) return Unusable();
  scratch_.clear();
  for (const std::string& payload : payloads) Frame(payload);
  return WriteScratch();
}

void JournalWriter::Frame(const std::string& payload) {
  size_t block_offset = (size_ + scratch_.size() - kFileHeaderSize) % kBlockSize;
  const char* p = payload.data();
  size_t left = payload.size();
  bool begin = true;
  do {
    const size_t leftover = kBlockSize - block_offset;
    if (leftover < kFragmentHeaderSize) {
      // No room for a fragment header: the block ends in a zero trailer.
      scratch_.append(leftover, '\0');
      block_offset = 0;
    }
    // With exactly kFragmentHeaderSize left this is 0 and the block ends in
    // an empty FIRST fragment, as in LevelDB; readers handle it.
    const size_t avail = kBlockSize - block_offset - kFragmentHeaderSize;
    const size_t n = std::min(left, avail);
    const bool end = n == left;
    const uint8_t type = begin && end ? journal::kFullType
                         : begin      ? journal::kFirstType
                         : end        ? journal::kLastType
                                      : journal::kMiddleType;
    PutFixed64(&scratch_, journal::FragmentChecksum(type, std::string_view(p, n)));
    PutFixed16(&scratch_, static_cast<uint16_t>(n));  // n < kBlockSize
    scratch_.push_back(static_cast<char>(type));
    scratch_.append(p, n);
    p += n;
    left -= n;
    begin = false;
    block_offset += kFragmentHeaderSize + n;
  } while (left > 0);
}

Status JournalWriter::WriteScratch() {
  Status s = WriteAll(fd_.get(), scratch_.data(), scratch_.size(), "journal append");
  if (!s.ok()) {
    // Part of the records may be in the file (ENOSPC after a short write, say).
    // Cut it back so that the next append starts on a record boundary.
    if (GUARD_EINTR_RETRY(::ftruncate(fd_.get(), static_cast<off_t>(size_))) != 0) fd_.reset();
    return s;
  }
  size_ += scratch_.size();
  dirty_ = true;
  return Status::Ok();
}

// Sync holds mu_ across fdatasync, so an Append from another thread waits for
// the sync to finish. That is the simple choice: dirty_ stays exact and no
// close of fd_ can race the sync. If appends are seen stalling behind syncs,
// sync a dup of the fd outside the lock and clear dirty_ only if no append
// happened meanwhile.
Status JournalWriter::Sync() { return SyncAfter(nullptr); }

Status JournalWriter::SyncAfter(const std::function<Status()>& first) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!dirty_) return Status::Ok();
  if (!fd_.valid()) return Unusable();
  if (first) GUARD_RETURN_IF_ERROR(first());
  Status s = Fdatasync(fd_.get(), "journal fdatasync");
  if (!s.ok()) {
    // The kernel reports a writeback error once and may then drop the dirty
    // pages: a later fdatasync could succeed without the data on disk.
    fd_.reset();
    return s;
  }
  dirty_ = false;
  synced_size_ = size_;
  return Status::Ok();
}

uint64_t JournalWriter::synced_size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return synced_size_;
}

uint64_t JournalWriter::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return size_;
}

bool JournalWriter::dirty() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dirty_;
}

}  // namespace guard
