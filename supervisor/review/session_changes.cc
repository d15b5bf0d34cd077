#include "supervisor/review/session_changes.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/path_util.h"

namespace guard {
namespace {

// Adds, for every candidate below one end of a rename or exchange between
// two paths inside the root, the same relative name below the other end:
// what sat at "a/x" before `mv a b` is at "b/x" after it. Repeated until
// nothing new appears (bounded by the number of renames).
void AddNamesThroughRenames(const SessionHistory& history, uint64_t to_seq, std::set<std::string>* paths) {
  std::vector<std::pair<std::string, std::string>> moves;
  for (const HistoryOp& h : history.ops()) {
    if (h.op.seq > to_seq) break;
    if ((h.op.kind == OpKind::kRename || h.op.kind == OpKind::kExchange) && h.inside() && h.inside2()) {
      moves.emplace_back(h.op.path, h.op.path2);
    }
  }
  for (size_t round = 0; round <= moves.size(); ++round) {
    std::set<std::string> added;
    for (const auto& [from, to] : moves) {
      for (const std::string& p : *paths) {
        if (PathIsStrictlyUnder(p, from)) added.insert(to + p.substr(from.size()));
        if (PathIsStrictlyUnder(p, to)) added.insert(from + p.substr(to.size()));
      }
    }
    size_t before = paths->size();
    paths->insert(added.begin(), added.end());
    if (paths->size() == before) break;
  }
}

// Nothing can be below a non-directory: if a known ancestor of `path` is not
// a directory at that moment, `path` is absent then.
bool AncestorIsNotDirectory(const std::string& path, const std::map<std::string, const FileState*>& known) {
  return ForEachAncestor(path, [&](const std::string& dir) {
    auto it = known.find(dir);
    return it != known.end() && it->second->type != FileType::kDirectory;
  });
}

// Whether the first operation on `path` replaced or changed a regular file
// whose pre-image was not saved (store failure under --on-capture-failure=
// allow). The history would otherwise follow the missing content forward and
// report the later content as the original.
bool PreImageLost(const SessionHistory& history, const std::string& path) {
  for (const HistoryOp& h : history.ops()) {
    OpKind k = h.op.kind;
    bool moves = k == OpKind::kRename || k == OpKind::kExchange;
    const FileState* before = nullptr;
    bool content_expected = false;  // as Capture saves it (supervisor/capture.cc)
    if (h.inside() && h.op.path == path) {
      before = &h.op.before;
      content_expected = k == OpKind::kModify || k == OpKind::kDelete || (moves && !h.inside2());
    } else if (h.inside2() && h.op.path2 == path) {
      before = &h.op.before2;
      content_expected = k == OpKind::kRename || (k == OpKind::kExchange && !h.inside());
    } else {
      continue;
    }
    return content_expected && (h.op.flags & kNotCaptured) != 0 && before->type == FileType::kRegular &&
           before->blob.kind == BlobRef::Kind::kNone;
  }
  return false;
}

// Parents before children: "a" < "a/b" but also "a/b" < "a-b", which a plain
// byte order would not give ('-' sorts before '/').
bool ParentFirst(const std::string& a, const std::string& b) {
  size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    if (a[i] == b[i]) continue;
    if (a[i] == '/') return true;
    if (b[i] == '/') return false;
    return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]);
  }
  return a.size() < b.size();
}

}  // namespace

SessionChanges SessionChanges::Collect(const SessionHistory& history, uint64_t to_seq,
                                       const std::vector<std::string>& only) {
  return Collect(history, to_seq, to_seq, only);
}

SessionChanges SessionChanges::CollectEveryPathAt(const SessionHistory& history, uint64_t to_seq) {
  return Collect(history, kSessionEnd, to_seq, {});
}

SessionChanges SessionChanges::Collect(const SessionHistory& history, uint64_t names_to_seq, uint64_t to_seq,
                                       const std::vector<std::string>& only) {
  std::set<std::string> names = history.TouchedPaths(0, names_to_seq);
  // What lies below a moved directory: named only by kFinal records.
  std::set<std::string> all_touched = history.TouchedPaths(0, kSessionEnd);
  for (const auto& [path, state] : history.finals()) {
    if (names.count(path)) continue;
    for (const std::string& t : all_touched) {
      if (PathIsStrictlyUnder(path, t)) {
        names.insert(path);
        break;
      }
    }
  }
  AddNamesThroughRenames(history, names_to_seq, &names);

  std::vector<std::string> sorted;
  for (const std::string& p : names) {
    if (p.empty()) continue;
    bool wanted = only.empty();
    for (const std::string& o : only) wanted = wanted || PathIsUnder(p, o);
    if (wanted) sorted.push_back(p);
  }
  std::sort(sorted.begin(), sorted.end(), ParentFirst);

  SessionChanges out;
  out.paths_.reserve(sorted.size());
  for (const std::string& p : sorted) {
    PathChange c;
    c.path = p;
    c.before_known = history.StateAfter(p, 0, &c.before) && !PreImageLost(history, p);
    c.after_known = history.StateAfter(p, to_seq, &c.after);
    out.paths_.push_back(std::move(c));
  }
  // Ancestors come first in the order, so one pass sees them settled. The
  // ancestors that matter were touched too (a directory removed or replaced
  // is an operation on it), unless filtered out by `only`: then nothing is
  // known of them and the history's answer stands.
  std::map<std::string, const FileState*> before_known, after_known;
  for (PathChange& c : out.paths_) {
    if (AncestorIsNotDirectory(c.path, before_known)) {
      c.before = FileState();
      c.before_known = true;
    }
    if (AncestorIsNotDirectory(c.path, after_known)) {
      c.after = FileState();
      c.after_known = true;
    }
    if (c.before_known) before_known[c.path] = &c.before;
    if (c.after_known) after_known[c.path] = &c.after;
  }
  return out;
}

}  // namespace guard
