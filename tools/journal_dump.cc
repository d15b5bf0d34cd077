// guard-journal-dump JOURNAL: prints every record of a journal, one per line,
// for debugging and for reading a journal by hand. Names are printed as
// `guard show` prints them (supervisor/base/path_escape.h): control bytes,
// invalid UTF-8 and the backslash escaped.
#include <cstdio>
#include <string>
#include <vector>

#include "common/journal_reader.h"
#include "supervisor/base/path_escape.h"

namespace {

std::string State(const guard::FileState& s) {
  std::string out = guard::FileTypeName(s.type);
  if (s.type == guard::FileType::kAbsent || s.type == guard::FileType::kUnknown) return out;
  char buf[64];
  std::snprintf(buf, sizeof buf, " %04o %llu", s.mode, static_cast<unsigned long long>(s.size));
  out += buf;
  if (!s.symlink_target.empty()) out += " -> " + guard::EscapeForTerminal(s.symlink_target);
  if (s.blob.kind == guard::BlobRef::Kind::kKey) out += " blob " + s.blob.key.Hex();
  if (s.blob.kind == guard::BlobRef::Kind::kPending) out += " pending " + s.blob.pending;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: guard-journal-dump JOURNAL\n");
    return 2;
  }
  std::vector<guard::Record> records;
  std::vector<std::string> problems;
  guard::Status s = guard::ReadAllRecords(argv[1], &records, &problems);
  if (!s.ok()) {
    std::fprintf(stderr, "guard-journal-dump: %s\n", s.ToString().c_str());
    return 1;
  }
  for (const guard::Record& r : records) {
    std::printf("%llu %s pid=%d %s flags=%u", static_cast<unsigned long long>(r.seq),
                guard::OpKindName(r.kind), r.pid, guard::EscapeForTerminal(r.comm).c_str(), r.flags);
    if (!r.syscall.empty()) std::printf(" %s", r.syscall.c_str());
    if (!r.path.empty()) std::printf(" path=%s", guard::EscapeForTerminal(r.path).c_str());
    if (!r.path2.empty()) std::printf(" path2=%s", guard::EscapeForTerminal(r.path2).c_str());
    if (guard::IsOperation(r.kind)) {
      std::printf(" before=[%s]", State(r.before).c_str());
      if (r.kind == guard::OpKind::kRename || r.kind == guard::OpKind::kExchange)
        std::printf(" before2=[%s]", State(r.before2).c_str());
    }
    if (r.kind == guard::OpKind::kOutcome)
      std::printf(" ref=%llu errno=%d after=[%s]", static_cast<unsigned long long>(r.ref_seq),
                  r.result_errno, State(r.after).c_str());
    if (r.kind == guard::OpKind::kFinal) std::printf(" after=[%s]", State(r.after).c_str());
    if (r.kind == guard::OpKind::kBlobResolved)
      std::printf(" %s -> %s", r.pending.c_str(), r.key.Hex().c_str());
    if (r.kind == guard::OpKind::kMark)
      std::printf(" label=%s%s", guard::EscapeForTerminal(r.label).c_str(), (r.flags & guard::kStepMark) ? " step" : "");
    std::printf("\n");
  }
  for (const std::string& p : problems) std::fprintf(stderr, "problem: %s\n", p.c_str());
  return problems.empty() ? 0 : 1;
}
