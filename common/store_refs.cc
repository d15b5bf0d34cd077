#include "common/store_refs.h"

#include <sys/stat.h>

#include <memory>

#include "common/journal_reader.h"

namespace guard {

namespace {

void AddState(const FileState& s, SessionRefs* refs) {
  if (s.blob.kind == BlobRef::Kind::kKey) refs->keys.insert(s.blob.key.Hex());
  if (s.blob.kind == BlobRef::Kind::kPending) refs->pending.insert(s.blob.pending);
}

class ProblemList : public JournalReader::Reporter {
 public:
  explicit ProblemList(std::vector<std::string>* out) : out_(out) {}
  void Corruption(uint64_t offset, uint64_t bytes, const Status& reason) override {
    out_->push_back("offset " + std::to_string(offset) + ": " + std::to_string(bytes) +
                    " bytes dropped: " + reason.ToString());
  }

 private:
  std::vector<std::string>* out_;
};

}  // namespace

// The FileState members of Record are listed here by hand: a member added
// to Record that holds a FileState (or a BlobRef) must be added below, or
// gc would delete the blobs it names. The assertion makes such a change
// stop here first: update the list, then the size. The size is that of
// 64-bit Linux, where the tests run (macOS's stat types are smaller).
#if defined(__linux__)
static_assert(sizeof(Record) == 720 || sizeof(void*) != 8,
              "Record changed: if the new member names a blob (a FileState or BlobRef), add it to "
              "AddRecordRefs in common/store_refs.cc, then update this size");
#endif

void AddRecordRefs(const Record& r, SessionRefs* refs) {
  for (const FileState* s : {&r.before, &r.before2, &r.after}) AddState(*s, refs);
  if (r.kind == OpKind::kBlobResolved) {
    if (!r.pending.empty()) refs->pending.insert(r.pending);
    refs->keys.insert(r.key.Hex());
  }
}

Status ReadSessionRefs(const std::string& path, SessionRefs* refs, std::vector<std::string>* problems) {
  // Shorter than its header: a crash inside the journal's creation, before
  // any record (the header is synced before the first append).
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && st.st_size < 16) return Status::Ok();
  ProblemList reporter(problems);
  std::unique_ptr<JournalReader> reader;
  Status s = JournalReader::Open(path, &reporter, &reader);
  if (s.IsNotFound()) return Status::Ok();
  GUARD_RETURN_IF_ERROR(s);
  Record r;
  while (reader->ReadRecord(&r)) AddRecordRefs(r, refs);
  return Status::Ok();
}

}  // namespace guard
