// Hand-built session histories for the review commands' unit tests: records
// made the way the supervisor makes them, blobs put into a temporary store.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "common/blob_store.h"
#include "common/journal_record.h"
#include "common/session_history.h"
#include "tests/unit/support/temp_dir.h"

namespace guard {
// Printer for BOOST_TEST, found by argument-dependent lookup.
inline std::ostream& operator<<(std::ostream& os, Status::Code c) { return os << static_cast<int>(c); }
}  // namespace guard

namespace guard::testing {

// A session under construction: operations with their outcomes, final
// states, and a store holding the content they name.
class HistoryBuilder {
 public:
  explicit HistoryBuilder(const std::string& store_dir) {
    BOOST_REQUIRE(BlobStore::Open(store_dir, &store_).ok());
  }

  FileState File(const std::string& content, uint32_t mode = 0644) {
    FileState s;
    s.type = FileType::kRegular;
    s.mode = mode;
    s.size = content.size();
    s.blob.kind = BlobRef::Kind::kKey;
    BOOST_REQUIRE(store_->PutBytes(content, &s.blob.key).ok());
    return s;
  }
  // A regular file whose content was not captured (a rename source, a chmod).
  static FileState Meta(uint32_t mode = 0644, uint64_t size = 0) {
    FileState s;
    s.type = FileType::kRegular;
    s.mode = mode;
    s.size = size;
    return s;
  }
  static FileState Dir(uint32_t mode = 0755) {
    FileState s;
    s.type = FileType::kDirectory;
    s.mode = mode;
    return s;
  }
  static FileState Link(const std::string& target) {
    FileState s;
    s.type = FileType::kSymlink;
    s.mode = 0777;
    s.size = target.size();
    s.symlink_target = target;
    return s;
  }
  static FileState Absent() { return FileState(); }

  // Appends an operation and its outcome; returns its sequence number.
  uint64_t Op(OpKind kind, const std::string& path, FileState before, const std::string& path2 = "",
              FileState before2 = FileState(), int result_errno = 0) {
    Record r;
    r.kind = kind;
    r.seq = next_seq_++;
    r.wall_ns = 1700000000000000000 + static_cast<int64_t>(r.seq) * 1000000;
    r.pid = 4242;
    r.comm = "agent";
    r.syscall = "test";
    r.path = path;
    r.path2 = path2;
    r.before = std::move(before);
    r.before2 = std::move(before2);
    records_.push_back(r);
    Record o;
    o.kind = OpKind::kOutcome;
    o.seq = next_seq_++;
    o.ref_seq = r.seq;
    o.result_errno = result_errno;
    records_.push_back(o);
    return r.seq;
  }
  Record& last_op() { return records_[records_.size() - 2]; }
  // Removes the outcome of the operation just added: its process (or guard)
  // died during the call.
  void Interrupt() {
    BOOST_REQUIRE(!records_.empty() && records_.back().kind == OpKind::kOutcome);
    records_.pop_back();
  }
  // The outcome of operation `op_seq`, appended now (after an Interrupt: a
  // call whose result came after other records).
  void Outcome(uint64_t op_seq, int result_errno = 0) {
    Record o;
    o.kind = OpKind::kOutcome;
    o.seq = next_seq_++;
    o.ref_seq = op_seq;
    o.result_errno = result_errno;
    records_.push_back(o);
  }
  void Final(const std::string& path, FileState after, uint32_t flags = 0) {
    Record r;
    r.kind = OpKind::kFinal;
    r.seq = next_seq_++;
    r.flags = flags;
    r.path = path;
    r.after = std::move(after);
    records_.push_back(r);
  }

  // A post-image (docs/format.md, Part IV, "The session's work"); `flags`
  // beside kPostImage (kNoWriter).
  void PostImage(const std::string& path, FileState after, uint32_t flags = kNoWriter) {
    Final(path, std::move(after), kPostImage | flags);
  }
  // The session-end record: the session was sealed.
  void End() {
    Record r;
    r.kind = OpKind::kSessionEnd;
    r.seq = next_seq_++;
    records_.push_back(r);
  }

  SessionHistory Build() const {
    SessionMeta meta;
    meta.id = "20260101-000000-test";
    meta.root = "/nonexistent-root";
    return SessionHistory::FromRecords(meta, records_);
  }
  BlobStore* store() const { return store_.get(); }

 private:
  std::unique_ptr<BlobStore> store_;
  std::vector<Record> records_;
  uint64_t next_seq_ = 1;
};

}  // namespace guard::testing
