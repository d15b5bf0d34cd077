#include "supervisor/restore/overlapping_sessions.h"

#include <algorithm>
#include <limits>

#include "common/session_meta.h"

namespace guard {
namespace {

// When `h` ended: its recorded end, else (still running, or the end was
// never written) the time of its last record, else never.
int64_t EndOf(const SessionHistory& h) {
  if (h.meta().ended_ns != 0) return h.meta().ended_ns;
  return std::numeric_limits<int64_t>::max();
}

// Calls `f(path)` for each path inside the root that op `h` names.
template <typename F>
void ForEachInsidePath(const HistoryOp& h, F f) {
  if (h.inside()) f(h.op.path);
  if (h.inside2()) f(h.op.path2);
}

}  // namespace

Status LoadOverlappingSessions(const StateDir& state, const SessionMeta& session, std::vector<SessionHistory>* out) {
  std::vector<std::string> ids;
  GUARD_RETURN_IF_ERROR(state.ListSessions(&ids));
  int64_t end = session.ended_ns != 0 ? session.ended_ns : std::numeric_limits<int64_t>::max();
  for (const std::string& id : ids) {
    if (id == session.id) continue;
    SessionMeta meta;
    if (!LoadSessionMeta(state.session_dir(id) + "/meta.json", &meta).ok()) continue;
    if (meta.root != session.root || meta.started_ns >= end) continue;
    if (meta.ended_ns != 0 && meta.ended_ns <= session.started_ns) continue;
    SessionHistory history;
    if (SessionHistory::Load(state, id, &history).ok()) out->push_back(std::move(history));
  }
  return Status::Ok();
}

std::map<std::string, std::string> ChangedByOverlappingSessions(const SessionHistory& session, uint64_t boundary,
                                                                const std::vector<SessionHistory>& others) {
  std::map<std::string, int64_t> first_touch;  // path -> wall time of the session's first op on it
  for (const HistoryOp& h : session.ops()) {
    if (h.op.seq <= boundary) continue;
    ForEachInsidePath(h, [&](const std::string& p) { first_touch.emplace(p, h.op.wall_ns); });
  }
  int64_t end = EndOf(session);
  std::map<std::string, std::string> changed;
  for (const SessionHistory& other : others) {
    for (const HistoryOp& h : other.ops()) {
      if (h.op.wall_ns > end) continue;
      ForEachInsidePath(h, [&](const std::string& p) {
        auto it = first_touch.find(p);
        if (it != first_touch.end() && h.op.wall_ns > it->second) changed.emplace(p, other.meta().id);
      });
    }
  }
  return changed;
}

}  // namespace guard
