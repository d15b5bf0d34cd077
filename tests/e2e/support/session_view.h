// SessionView: one recorded session read back the way undo will read it:
// meta.json, every journal record, and the pre-images in the blob store.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "common/blob_store.h"
#include "common/journal_record.h"
#include "common/session_meta.h"
#include "common/status.h"

namespace guard::e2e {

// What an operation did, as tests state their expectations: the kind and
// the path(s) as recorded (relative to the root, absolute outside it).
struct Op {
  Op() = default;
  Op(OpKind k, std::string p, std::string p2 = "") : kind(k), path(std::move(p)), path2(std::move(p2)) {}
  OpKind kind = OpKind::kCreate;
  std::string path;
  std::string path2;  // kRename and kExchange: the other path; kLink: the new name
  bool operator==(const Op&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Op& op);
std::string FormatOps(const std::vector<Op>& ops);

class SessionView {
 public:
  // Reads session `id` of the state directory `guard_home`. Throws
  // std::runtime_error when meta.json or the journal cannot be read at all;
  // damaged records are listed in journal_problems().
  static SessionView Load(const std::string& guard_home, const std::string& id);

  const std::string& dir() const { return dir_; }
  const SessionMeta& meta() const { return meta_; }
  const std::vector<Record>& records() const { return records_; }
  const std::vector<std::string>& journal_problems() const { return problems_; }

  // The kOutcome record of op `seq`, or nullptr when guard has none: the
  // call's process died inside it, or it was let run without an exit stop
  // and guard could not prove it done (docs/capture.md, "One stop per call").
  const Record* OutcomeOf(uint64_t seq) const;
  // Operation records, in journal order, and those that may have happened
  // (succeeded, or without an outcome): failed calls left out.
  std::vector<const Record*> Operations() const;
  std::vector<const Record*> OpsThatMayHaveHappened() const;
  // (kind, path, path2) of OpsThatMayHaveHappened, in journal order.
  std::vector<Op> OpList() const;
  // The first operation record of `kind` on `path` (succeeded or not), or nullptr.
  const Record* FindOp(OpKind kind, const std::string& path) const;

  // The content a BlobRef names. A kPending ref is resolved through the
  // kBlobResolved records of this journal; one never resolved is kNotFound.
  Status ReadBlob(const BlobRef& ref, std::string* content) const;

  // A readable dump of the journal, for failure messages.
  std::string Dump() const;

 private:
  std::string dir_;
  SessionMeta meta_;
  std::vector<Record> records_;
  std::vector<std::string> problems_;
  std::map<uint64_t, size_t> outcomes_;            // ref_seq -> index of its kOutcome
  std::map<std::string, BlobKey> resolved_;        // pending name -> key
  std::shared_ptr<BlobStore> store_;
};

// Compares the operations a session recorded with those a test expects.
// Paths in `expected` may be fnmatch(3) patterns ("sed*" for a temporary
// name). `ordered`: the order must match too (a sequential workload); else
// the two lists must be equal as multisets (concurrent writers). Returns ""
// on a match, else both lists side by side.
std::string MatchOps(const std::vector<Op>& actual, const std::vector<Op>& expected, bool ordered = true);

}  // namespace guard::e2e
