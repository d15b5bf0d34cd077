#include "supervisor/restore/restore_chain.h"

#include <map>

namespace guard {

Status LoadRestoreChain(const StateDir& state, const std::string& id, uint64_t last_seq, RestoreChain* chain) {
  *chain = RestoreChain();
  chain->current = last_seq;
  std::vector<std::string> ids;
  GUARD_RETURN_IF_ERROR(state.ListSessions(&ids));
  std::map<std::string, RestoreOf> of_chain;  // the restores of `id` seen so far
  for (const std::string& candidate : ids) {
    if (candidate <= id) continue;  // ids sort by start time: a restore starts after what it restores
    SessionMeta m;
    if (!LoadSessionMeta(state.session_dir(candidate) + "/meta.json", &m).ok() || !IsRestoreSession(m)) continue;
    // A restore still running (or not yet recovered) says nothing yet.
    if (m.state == SessionState::kRunning) continue;
    RestoreOf r = RestoreOfSession(m);
    if (r.of == id) {
      of_chain[candidate] = r;
      if (m.restore.verb.empty()) {  // an outer guard's: no account
        *chain = RestoreChain();
        chain->current = last_seq;
        continue;
      }
      chain->known = true;
      if (r.interrupted) {
        chain->partial = true;
        chain->interrupted_id = candidate;
        chain->interrupted = r;
        chain->current = r.from;
        continue;
      }
      chain->partial = false;
      chain->interrupted_id.clear();
      uint64_t turns_before = chain->turns;
      chain->current = r.boundary;
      chain->turns = r.turns;
      chain->last_id = candidate;
      if (r.verb == "undo") {
        chain->undos.push_back({candidate, r, turns_before});
      } else if (r.verb == "redo") {
        if (!chain->undos.empty()) chain->undos.pop_back();
      } else {
        chain->undos.clear();  // a replay: the session's work is back
      }
      continue;
    }
    auto reversed = of_chain.find(r.of);
    if (reversed == of_chain.end()) continue;
    // `guard undo --session R` of a restore R of the session: whole and
    // complete, it puts back the state R found; anything else leaves the
    // session in a state no account names.
    if (r.verb == "undo" && r.paths.empty() && r.boundary == 0 && !r.interrupted && !m.restore.verb.empty() &&
        !reversed->second.verb.empty()) {
      chain->current = reversed->second.from;
      chain->partial = false;
      if (!chain->undos.empty() && chain->undos.back().id == reversed->first) {
        chain->turns = chain->undos.back().turns_before;
        chain->undos.pop_back();
      } else {
        chain->undos.clear();
        chain->turns = 0;
      }
      chain->last_id = candidate;
    } else {
      *chain = RestoreChain();
      chain->current = last_seq;
    }
  }
  return Status::Ok();
}

}  // namespace guard
