#include "supervisor/restore/restore_chain.h"

#include <map>

namespace guard {

Status LoadRestoreChain(const StateDir& state, const std::string& id, uint64_t last_seq, RestoreChain* chain) {
  *chain = RestoreChain();
  chain->current = last_seq;
  std::vector<std::string> ids;
  GUARD_RETURN_IF_ERROR(state.ListSessions(&ids));
  // The restores of `id` seen so far, each as what it did to `id` (a
  // restore of one of them is read as the restore of `id` it amounts to),
  // with the marked turns undone before it.
  std::map<std::string, RestoreOf> of_chain;
  std::map<std::string, uint64_t> turns_before_of;
  for (const std::string& candidate : ids) {
    if (candidate <= id) continue;  // ids sort by start time: a restore starts after what it restores
    SessionMeta m;
    if (!LoadSessionMeta(state.session_dir(candidate) + "/meta.json", &m).ok() || !IsRestoreSession(m)) continue;
    // A restore still running (or not yet recovered) says nothing yet.
    if (m.state == SessionState::kRunning) continue;
    RestoreOf r = RestoreOfSession(m);
    if (r.of == id) {
      of_chain[candidate] = r;
      turns_before_of[candidate] = chain->turns;
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
    const RestoreOf rev = reversed->second;
    // `guard undo --session R` of a restore R of the session (or of a
    // restore of one: an undo of an undo of an undo): whole and complete,
    // it puts back the state R found, and is itself the redo (R an undo)
    // or the undo (R a redo or replay) it amounts to; anything else leaves
    // the session in a state no account names.
    if (r.verb == "undo" && r.paths.empty() && r.boundary == 0 && !r.interrupted && !m.restore.verb.empty() &&
        !rev.verb.empty() && !rev.interrupted) {
      RestoreOf as;  // what it did to `id`
      as.verb = rev.verb == "undo" ? "redo" : "undo";
      as.of = id;
      as.from = rev.boundary;
      as.boundary = rev.from;
      as.paths = rev.paths;
      turns_before_of[candidate] = chain->turns;
      chain->current = rev.from;
      chain->partial = false;
      chain->interrupted_id.clear();
      uint64_t turns_then = turns_before_of.count(reversed->first) ? turns_before_of[reversed->first] : 0;
      if (rev.verb == "undo") {
        if (!chain->undos.empty() && chain->undos.back().id == reversed->first) {
          chain->turns = chain->undos.back().turns_before;
          chain->undos.pop_back();
        } else {
          chain->undos.clear();
          chain->turns = 0;
        }
      } else {
        // The undo a redo reversed is in effect again (so is, for a
        // replay, the state before it): what `guard redo` reverses next.
        uint64_t turns_now = chain->turns;
        chain->turns = turns_then;
        as.turns = turns_then;
        chain->undos.push_back({candidate, as, turns_now});
      }
      as.turns = chain->turns;
      of_chain[candidate] = as;
      chain->last_id = candidate;
    } else {
      *chain = RestoreChain();
      chain->current = last_seq;
    }
  }
  return Status::Ok();
}

std::map<std::string, std::string> FinishedRestores(const std::vector<SessionMeta>& metas) {
  std::map<std::string, std::string> finished;
  // Per restored session: its interrupted restores not yet finished (a
  // finishing restore interrupted in turn carries the same plan).
  std::map<std::string, std::vector<std::pair<std::string, RestoreOf>>> open;
  for (const SessionMeta& m : metas) {
    if (m.restore.verb.empty() || m.state == SessionState::kRunning) continue;
    const RestoreOf& r = m.restore;
    if (r.interrupted) {
      open[r.of].emplace_back(m.id, r);
      continue;
    }
    auto it = open.find(r.of);
    if (it == open.end()) continue;
    // The same command typed again: the interrupted one's plan
    // (MakeChainedRequest). Any other restore of the session leaves it
    // interrupted, superseded.
    const RestoreOf& cut = it->second.back().second;
    if (r.verb == cut.verb && r.from == cut.from && r.boundary == cut.boundary && r.paths == cut.paths) {
      for (const auto& [cut_id, unused] : it->second) finished[cut_id] = m.id;
    }
    open.erase(it);
  }
  return finished;
}

}  // namespace guard
