#include "supervisor/session/watch_baseline.h"

#include <sys/stat.h>

#include <cerrno>
#include <memory>

#include "common/journal_reader.h"
#include "common/journal_writer.h"

namespace guard {
namespace {

// Records are written this many at a time: one write(2) each batch.
constexpr size_t kBatch = 4096;

}  // namespace

Status WriteWatchBaseline(const std::string& path, const WatchedTree& tree,
                          const std::vector<std::string>& excluded) {
  std::unique_ptr<JournalWriter> out;
  GUARD_RETURN_IF_ERROR(JournalWriter::Create(path, &out));
  std::vector<Record> batch;
  batch.reserve(kBatch);
  Status first;
  auto flush = [&] {
    std::vector<const Record*> ptrs;
    ptrs.reserve(batch.size());
    for (const Record& r : batch) ptrs.push_back(&r);
    if (Status s = out->AppendAll(ptrs); !s.ok() && first.ok()) first = s;
    batch.clear();
  };
  uint64_t seq = 0;
  tree.ForEachSaved([&](const WatchedTree::SavedPath& p) {
    Record r;
    r.kind = OpKind::kFinal;
    r.seq = ++seq;
    r.flags = kObserved | (p.not_captured ? kNotCaptured : 0u);
    r.path = p.rel;
    r.after = p.state;
    r.label = p.kept_id;  // content kept by another's id (a git blob), fetched when needed
    batch.push_back(std::move(r));
    if (batch.size() == kBatch) flush();
  });
  for (const std::string& e : excluded) {
    Record r;
    r.kind = OpKind::kMark;
    r.seq = ++seq;
    r.label = e;
    batch.push_back(std::move(r));
  }
  flush();
  GUARD_RETURN_IF_ERROR(first);
  return out->Sync();
}

Status ReadWatchBaseline(const std::string& path, std::vector<WatchedTree::SavedPath>* saved,
                         std::vector<std::string>* excluded, std::vector<std::string>* problems) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return Status::FromErrno(path, errno);
  std::vector<Record> records;
  GUARD_RETURN_IF_ERROR(ReadAllRecords(path, &records, problems));
  for (Record& r : records) {
    if (r.kind == OpKind::kFinal && !r.path.empty() && !(r.flags & kOutsideRoot)) {
      saved->push_back({std::move(r.path), std::move(r.after), (r.flags & kNotCaptured) != 0, std::move(r.label)});
    } else if (r.kind == OpKind::kMark && !r.label.empty()) {
      excluded->push_back(std::move(r.label));
    }
  }
  return Status::Ok();
}

}  // namespace guard
