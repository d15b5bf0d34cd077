#include "supervisor/restore/restore_names.h"

#include <algorithm>
#include <vector>

#include "common/path_util.h"

namespace guard {
namespace {

// Whether `name` is the end `end` of a directory move or lies below it. A
// move's end is never the root in a call that ran (the kernel refuses to
// move the root or onto it); should a journal name "." all the same, only
// "." itself maps, since rebasing a name by its prefix needs a real one.
bool IsUnder(const std::string& name, const std::string& end) {
  return end == "." ? name == end : PathIsUnder(name, end);
}

// The name that what is at `name` just after move `m` had just before it.
std::string NameBefore(const HistoryOp& m, const std::string& name) {
  const std::string& from = m.op.path;
  const std::string& to = m.op.path2;
  if (IsUnder(name, to)) return from + name.substr(to.size());
  if (m.op.kind == OpKind::kExchange && IsUnder(name, from)) return to + name.substr(from.size());
  return name;
}

// The name that what is at `name` just before move `m` has just after it.
std::string NameAfter(const HistoryOp& m, const std::string& name) {
  const std::string& from = m.op.path;
  const std::string& to = m.op.path2;
  if (IsUnder(name, from)) return to + name.substr(from.size());
  if (m.op.kind == OpKind::kExchange && IsUnder(name, to)) return from + name.substr(to.size());
  return name;
}

}  // namespace

std::set<std::string> RestoreNames(const SessionHistory& history) {
  std::vector<const HistoryOp*> moves;  // in sequence order, as ops() is
  for (const HistoryOp& h : history.ops()) {
    if (MovesDirectoryWithinRoot(h.op)) moves.push_back(&h);
  }
  std::set<std::string> names;
  // `name` was seen between the moves before index `split` and those from it on.
  auto add = [&](const std::string& name, size_t split) {
    names.insert(name);
    std::string n = name;
    for (size_t i = split; i-- > 0;) names.insert(n = NameBefore(*moves[i], n));
    n = name;
    for (size_t i = split; i < moves.size(); ++i) names.insert(n = NameAfter(*moves[i], n));
  };
  auto split_at = [&](uint64_t seq) {  // index of the first move after `seq`... or at it
    return static_cast<size_t>(std::lower_bound(moves.begin(), moves.end(), seq,
                                                [](const HistoryOp* m, uint64_t s) { return m->op.seq < s; }) -
                               moves.begin());
  };
  for (const HistoryOp& h : history.ops()) {
    // A name an operation uses is seen just before it: the moves before the
    // operation map it backwards, the operation itself (if it is a move) and
    // the later ones forwards.
    size_t split = split_at(h.op.seq);
    if (h.inside()) add(h.op.path, split);
    if (h.inside2()) add(h.op.path2, split);
  }
  for (const auto& [path, state] : history.finals()) add(path, moves.size());
  return names;
}

}  // namespace guard
