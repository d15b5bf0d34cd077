#include "supervisor/capture/calls_in_flight.h"

#include "common/path_util.h"

namespace guard {

void CallsInFlight::Stamp(const std::string& abs, const std::string* abs2, bool moves) {
  Touched(abs) = calls_seen_;
  if (abs2 != nullptr) Touched(*abs2) = calls_seen_;
  if (moves) last_tree_move_ = calls_seen_;
}

pid_t CallsInFlight::HolderOf(pid_t tid, const std::string& abs, const std::string* abs2) const {
  if (ops_.empty() || (ops_.size() == 1 && ops_.count(tid) != 0)) return 0;
  for (const auto& [other_tid, op] : ops_) {
    if (other_tid == tid || !op.holdable) continue;
    const bool moves = op.moves_directory || op.moves_names_below;
    for (const std::string* p : {&op.abs_path, &op.abs_path2}) {
      if (p->empty()) continue;
      for (const std::string* mine : {&abs, abs2}) {
        if (mine == nullptr) continue;
        if (*p == *mine || (moves && PathIsStrictlyUnder(*mine, *p))) return other_tid;
      }
    }
  }
  return 0;
}

pid_t CallsInFlight::MoverInFlight(pid_t tid) const {
  for (const auto& [other_tid, op] : ops_) {
    if (other_tid == tid || !op.holdable) continue;
    if (op.moves_directory || op.moves_names_below) return other_tid;
  }
  return 0;
}

bool CallsInFlight::Alone(pid_t tid, const std::string& abs, const std::string* abs2) const {
  for (const auto& [other_tid, other] : ops_) {
    if (other_tid == tid) continue;
    for (const std::string* p : {&abs, abs2}) {
      if (p != nullptr && (other.abs_path == *p || other.abs_path2 == *p)) return false;
    }
    if (other.moves_names_below || other.moves_directory) return false;
  }
  return true;
}

bool CallsInFlight::Quiet(const PendingOp& op) const {
  if (!op.alone || last_tree_move_ > op.quiet_at) return false;
  if (Touched(op.abs_path) != op.quiet_at) return false;
  return op.abs_path2.empty() || Touched(op.abs_path2) == op.quiet_at;
}

const PendingOp* CallsInFlight::Find(pid_t tid) const {
  auto it = ops_.find(tid);
  return it == ops_.end() ? nullptr : &it->second;
}

std::optional<PendingOp> CallsInFlight::Take(pid_t tid) {
  auto it = ops_.find(tid);
  if (it == ops_.end()) return std::nullopt;
  std::optional<PendingOp> op(std::move(it->second));
  ops_.erase(it);
  return op;
}

}  // namespace guard
