#include "tests/e2e/support/session_view.h"

#include <fnmatch.h>

#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "common/journal_reader.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

std::string StateText(const FileState& s) {
  std::string out = FileTypeName(s.type);
  if (s.type == FileType::kAbsent || s.type == FileType::kUnknown) return out;
  char buf[64];
  std::snprintf(buf, sizeof buf, " %04o %llu", s.mode, static_cast<unsigned long long>(s.size));
  out += buf;
  if (s.type == FileType::kSymlink) out += " -> " + Printable(s.symlink_target);
  if (s.blob.kind == BlobRef::Kind::kKey) out += " blob " + s.blob.key.Hex();
  if (s.blob.kind == BlobRef::Kind::kPending) out += " pending " + s.blob.pending;
  return out;
}

bool PathMatches(const std::string& pattern, const std::string& path) {
  if (pattern == path) return true;
  return fnmatch(pattern.c_str(), path.c_str(), FNM_PATHNAME | FNM_PERIOD) == 0;
}

bool OpMatches(const Op& expected, const Op& actual) {
  return expected.kind == actual.kind && PathMatches(expected.path, actual.path) &&
         PathMatches(expected.path2, actual.path2);
}

bool IsPattern(const Op& op) {
  return op.path.find_first_of("*?[") != std::string::npos ||
         op.path2.find_first_of("*?[") != std::string::npos;
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Op& op) {
  os << OpKindName(op.kind) << " " << Printable(op.path);
  if (!op.path2.empty()) os << " -> " << Printable(op.path2);
  return os;
}

std::string FormatOps(const std::vector<Op>& ops) {
  std::ostringstream os;
  for (const Op& op : ops) os << "    " << op << "\n";
  if (ops.empty()) os << "    (none)\n";
  return os.str();
}

SessionView SessionView::Load(const std::string& guard_home, const std::string& id) {
  SessionView v;
  v.dir_ = guard_home + "/sessions/" + id;
  // Read whole, as a guard command would: after the deferred seal.
  if (!WaitForDeferredSeal(v.dir_, 60)) throw std::runtime_error("session " + id + ": its seal never ended");
  Status s = LoadSessionMeta(v.dir_ + "/meta.json", &v.meta_);
  if (!s.ok()) throw std::runtime_error("meta.json: " + s.ToString());
  s = ReadAllRecords(v.dir_ + "/journal", &v.records_, &v.problems_);
  if (!s.ok()) throw std::runtime_error("journal: " + s.ToString());
  for (size_t i = 0; i < v.records_.size(); ++i) {
    const Record& r = v.records_[i];
    if (r.kind == OpKind::kOutcome) v.outcomes_[r.ref_seq] = i;
    if (r.kind == OpKind::kBlobResolved) v.resolved_[r.pending] = r.key;
  }
  std::unique_ptr<BlobStore> store;
  s = BlobStore::Open(guard_home + "/store", &store);
  if (!s.ok()) throw std::runtime_error("blob store: " + s.ToString());
  v.store_ = std::move(store);
  return v;
}

const Record* SessionView::OutcomeOf(uint64_t seq) const {
  auto it = outcomes_.find(seq);
  return it == outcomes_.end() ? nullptr : &records_[it->second];
}

std::vector<const Record*> SessionView::Operations() const {
  std::vector<const Record*> out;
  for (const Record& r : records_) {
    if (IsOperation(r.kind)) out.push_back(&r);
  }
  return out;
}

std::vector<const Record*> SessionView::OpsThatMayHaveHappened() const {
  std::vector<const Record*> out;
  for (const Record* r : Operations()) {
    // Failed calls are left out; one without an outcome may have happened
    // (a one-stop call guard could not prove done: docs/capture.md).
    const Record* outcome = OutcomeOf(r->seq);
    if (outcome == nullptr || outcome->result_errno == 0) out.push_back(r);
  }
  return out;
}

std::vector<Op> SessionView::OpList() const {
  std::vector<Op> out;
  for (const Record* r : OpsThatMayHaveHappened()) out.push_back(Op{r->kind, r->path, r->path2});
  return out;
}

const Record* SessionView::FindOp(OpKind kind, const std::string& path) const {
  for (const Record* r : Operations()) {
    if (r->kind == kind && r->path == path) return r;
  }
  return nullptr;
}

Status SessionView::ReadBlob(const BlobRef& ref, std::string* content) const {
  switch (ref.kind) {
    case BlobRef::Kind::kNone:
      return Status::NotFound("no content was captured");
    case BlobRef::Kind::kKey:
      return store_->ReadToString(ref, content);
    case BlobRef::Kind::kPending: {
      auto it = resolved_.find(ref.pending);
      if (it == resolved_.end()) {
        return Status::NotFound("pending blob " + ref.pending + " has no kBlobResolved record");
      }
      BlobRef key_ref;
      key_ref.kind = BlobRef::Kind::kKey;
      key_ref.key = it->second;
      return store_->ReadToString(key_ref, content);
    }
  }
  return Status::InvalidArgument("unknown blob kind");
}

std::string SessionView::Dump() const {
  std::ostringstream os;
  for (const Record& r : records_) {
    os << "    " << r.seq << " " << OpKindName(r.kind);
    if (!r.syscall.empty()) os << " " << r.syscall << " (" << r.comm << ")";
    if (r.flags != 0) os << " flags=" << r.flags;
    if (!r.path.empty()) os << " path=" << Printable(r.path);
    if (!r.path2.empty()) os << " path2=" << Printable(r.path2);
    if (IsOperation(r.kind)) {
      os << " before=[" << StateText(r.before) << "]";
      if (r.kind == OpKind::kRename || r.kind == OpKind::kExchange) os << " before2=[" << StateText(r.before2) << "]";
    }
    if (r.kind == OpKind::kOutcome) os << " ref=" << r.ref_seq << " errno=" << r.result_errno;
    if (r.kind == OpKind::kOutcome || r.kind == OpKind::kFinal) os << " after=[" << StateText(r.after) << "]";
    if (r.kind == OpKind::kBlobResolved) os << " " << r.pending << " -> " << r.key.Hex();
    os << "\n";
  }
  for (const std::string& p : problems_) os << "    journal problem: " << p << "\n";
  return os.str();
}

std::string MatchOps(const std::vector<Op>& actual, const std::vector<Op>& expected, bool ordered) {
  bool match = actual.size() == expected.size();
  if (match && ordered) {
    for (size_t i = 0; i < actual.size() && match; ++i) match = OpMatches(expected[i], actual[i]);
  } else if (match) {
    // Literal expectations first, so that a pattern cannot take the op a
    // literal one needs.
    std::vector<bool> used(actual.size(), false);
    for (int pass = 0; pass < 2 && match; ++pass) {
      for (const Op& e : expected) {
        if (IsPattern(e) != (pass == 1)) continue;
        bool found = false;
        for (size_t i = 0; i < actual.size() && !found; ++i) {
          if (!used[i] && OpMatches(e, actual[i])) used[i] = found = true;
        }
        if (!found) {
          match = false;
          break;
        }
      }
    }
  }
  if (match) return "";
  return std::string("operations differ") + (ordered ? "" : " (in any order)") + "\n  recorded:\n" +
         FormatOps(actual) + "  expected:\n" + FormatOps(expected);
}

}  // namespace guard::e2e
