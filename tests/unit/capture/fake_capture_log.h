// An in-memory CaptureLog (supervisor/capture/capture_log.h) for unit tests
// of the capture core: it keeps every record appended, in order, and what
// the core noted, over a real blob store in a temporary directory (the
// core saves pre-images into it; FakeCaptureLog::Describe reads them back).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "common/blob_store.h"
#include "common/file_io.h"
#include "supervisor/capture/capture_log.h"

namespace guard::testing {

class FakeCaptureLog final : public CaptureLog {
 public:
  explicit FakeCaptureLog(const std::string& store_dir) { BOOST_REQUIRE(BlobStore::Open(store_dir, &store_).ok()); }

  Status Append(Record* r, uint64_t* end_offset = nullptr) override {
    if (fail_appends) return Status::IOError("append refused by the test");
    r->seq = next_seq_++;
    records.push_back(*r);
    if (end_offset != nullptr) *end_offset = records.size();
    return Status::Ok();
  }
  void NoteChanged(const std::string& rel) override { changed.insert(rel); }
  void NoteMovedDirectory(const std::string& rel) override { moved_dirs.insert(rel); }
  void NoteFirstState(const std::string& rel, const FileState& before) override { first.emplace(rel, before); }
  size_t NotePending(const std::string& name) override {
    pending.push_back(name);
    return pending.size() - 1;
  }
  const std::string& PendingName(size_t index) const override { return pending[index]; }
  void DropPending(const std::string& name) override { dropped.insert(name); }
  BlobStore* store() override { return store_.get(); }

  // What `ref` holds: a pending blob's file, or a stored blob's content.
  std::string Content(const BlobRef& ref) const {
    std::string out;
    if (ref.kind == BlobRef::Kind::kPending) {
      // A pending blob the core removed (its call failed) reads "dropped".
      if (!ReadFileToString(store_->dir() + "/pending/" + ref.pending, &out).ok()) return "dropped";
    } else if (ref.kind == BlobRef::Kind::kKey) {
      BOOST_REQUIRE(store_->ReadToString(ref, &out).ok());
    }
    return out;
  }
  // One line per record, for tables: "delete a <old>", "rename a b",
  // "outcome 2 ok regular", "outcome 2 errno=2". A pre-image with content
  // is shown in angle brackets ("<dropped>": a pending blob removed since).
  std::string Describe(const Record& r) const {
    if (r.kind == OpKind::kOutcome) {
      std::string s = "outcome " + std::to_string(r.ref_seq);
      if (r.result_errno != 0) return s + " errno=" + std::to_string(r.result_errno);
      return s + " ok " + FileTypeName(r.after.type);
    }
    std::string s = std::string(OpKindName(r.kind)) + " " + r.path;
    if (!r.path2.empty()) s += " " + r.path2;
    if (r.before.blob.kind != BlobRef::Kind::kNone) s += " <" + Content(r.before.blob) + ">";
    if (r.before2.blob.kind != BlobRef::Kind::kNone) s += " <" + Content(r.before2.blob) + ">";
    return s;
  }
  std::vector<std::string> Lines() const {
    std::vector<std::string> out;
    for (const Record& r : records) out.push_back(Describe(r));
    return out;
  }

  std::vector<Record> records;
  std::set<std::string> changed, moved_dirs, dropped;
  std::map<std::string, FileState> first;
  std::vector<std::string> pending;
  bool fail_appends = false;

 private:
  std::unique_ptr<BlobStore> store_;
  uint64_t next_seq_ = 1;
};

}  // namespace guard::testing
