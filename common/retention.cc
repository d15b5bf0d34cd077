#include "common/retention.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>

namespace guard {

const char* ProtectionName(Protection p) {
  switch (p) {
    case Protection::kNone: return "none";
    case Protection::kRunning: return "running";
    case Protection::kNeedsRecovery: return "needs recovery";
    case Protection::kUnreadable: return "unreadable";
    case Protection::kNewest: return "newest of its root";
  }
  return "?";
}

void ComputeUsage(const StoreInventory& inv, StoreUsage* usage) {
  usage->inode_bytes.clear();
  usage->inode_mtime_ns.clear();
  std::unordered_map<ino_t, size_t> index;
  auto add = [&](const StoreFile& f, int64_t t) {
    auto [it, fresh] = index.emplace(f.ino, usage->inode_bytes.size());
    if (fresh) {
      usage->inode_bytes.push_back(f.bytes);
      usage->inode_mtime_ns.push_back(t);
    } else {
      usage->inode_mtime_ns[it->second] = std::max(usage->inode_mtime_ns[it->second], t);
    }
    return it->second;
  };
  std::map<std::string, std::vector<size_t>> object_inodes;
  for (const auto& [hex, files] : inv.objects)
    for (const StoreFile& f : files) object_inodes[hex].push_back(add(f, f.mtime_ns));
  std::map<std::string, size_t> pending_inode, marker_inode;
  for (const auto& [name, f] : inv.pending) pending_inode[name] = add(f, f.ctime_ns);
  for (const auto& [name, f] : inv.resolved) marker_inode[name] = add(f, f.mtime_ns);
  for (const StoreFile& f : inv.temps) add(f, f.mtime_ns);
  usage->inode_refs.assign(usage->inode_bytes.size(), 0);

  auto add_key = [&](const std::string& hex, std::set<size_t>* out) {
    if (auto it = object_inodes.find(hex); it != object_inodes.end()) out->insert(it->second.begin(), it->second.end());
  };
  usage->sessions_bytes = 0;
  for (SessionUsage& s : usage->sessions) {
    std::set<size_t> inodes;
    for (const std::string& hex : s.refs.keys) add_key(hex, &inodes);
    for (const std::string& name : s.refs.pending) {
      if (auto it = pending_inode.find(name); it != pending_inode.end()) inodes.insert(it->second);
      if (auto it = marker_inode.find(name); it != marker_inode.end()) inodes.insert(it->second);
      if (auto it = inv.resolved_key.find(name); it != inv.resolved_key.end()) add_key(it->second, &inodes);
    }
    s.inodes.assign(inodes.begin(), inodes.end());
    for (size_t i : s.inodes) ++usage->inode_refs[i];
    usage->sessions_bytes += s.dir_bytes;
  }
  for (SessionUsage& s : usage->sessions) {
    s.own_bytes = s.dir_bytes;
    s.shared_bytes = 0;
    for (size_t i : s.inodes) (usage->inode_refs[i] == 1 ? s.own_bytes : s.shared_bytes) += usage->inode_bytes[i];
  }
  usage->unreferenced_bytes = 0;
  for (size_t i = 0; i < usage->inode_bytes.size(); ++i) {
    if (usage->inode_refs[i] == 0) usage->unreferenced_bytes += usage->inode_bytes[i];
  }
  usage->store_bytes = inv.TotalBytes();
}

void ProtectNewest(int64_t keep_newest, StoreUsage* usage) {
  std::map<std::string, int64_t> seen;  // root -> sessions counted from the newest
  for (auto it = usage->sessions.rbegin(); it != usage->sessions.rend(); ++it) {
    if (it->protection == Protection::kUnreadable) continue;  // no root to count it under
    if (seen[it->root]++ < keep_newest && it->protection == Protection::kNone) it->protection = Protection::kNewest;
  }
}

namespace {

// Removes usage.sessions[i] from the projection.
void Drop(const StoreUsage& usage, size_t i, int64_t cut_ns, std::vector<uint32_t>* refs, uint64_t* projected) {
  const SessionUsage& s = usage.sessions[i];
  *projected -= std::min(*projected, s.dir_bytes);
  for (size_t n : s.inodes) {
    if (--(*refs)[n] == 0 && usage.inode_mtime_ns[n] < cut_ns) *projected -= std::min(*projected, usage.inode_bytes[n]);
  }
}

uint64_t AfterSweep(const StoreUsage& usage, int64_t cut_ns) {
  uint64_t projected = usage.total();
  for (size_t n = 0; n < usage.inode_bytes.size(); ++n) {
    if (usage.inode_refs[n] == 0 && usage.inode_mtime_ns[n] < cut_ns) projected -= std::min(projected, usage.inode_bytes[n]);
  }
  return projected;
}

}  // namespace

RetentionPlan PlanRetention(const StoreUsage& usage, const RetentionPolicy& policy, int64_t now_ns, int64_t cut_ns) {
  RetentionPlan plan;
  plan.total_before = usage.total();
  std::vector<uint32_t> refs = usage.inode_refs;
  uint64_t projected = AfterSweep(usage, cut_ns);
  bool any_aged = false;
  for (size_t i = 0; i < usage.sessions.size(); ++i) {
    const SessionUsage& s = usage.sessions[i];
    if (s.protection != Protection::kNone) continue;
    int64_t end = s.ended_ns != 0 ? s.ended_ns : s.started_ns;
    bool aged = now_ns - end > policy.keep_ns;
    bool over = projected > policy.max_bytes;
    any_aged |= aged;
    if (!aged && !over) continue;
    plan.remove.push_back(s.id);
    plan.why.push_back(aged ? "age" : "size");
    Drop(usage, i, cut_ns, &refs, &projected);
  }
  plan.total_after = projected;
  plan.within_policy_before = !any_aged && plan.total_before <= policy.max_bytes;
  plan.within_policy_after = projected <= policy.max_bytes;
  return plan;
}

RetentionPlan PlanRemoval(const StoreUsage& usage, const std::vector<std::string>& ids, int64_t cut_ns) {
  RetentionPlan plan;
  plan.total_before = usage.total();
  std::vector<uint32_t> refs = usage.inode_refs;
  uint64_t projected = AfterSweep(usage, cut_ns);
  for (size_t i = 0; i < usage.sessions.size(); ++i) {
    if (std::find(ids.begin(), ids.end(), usage.sessions[i].id) == ids.end()) continue;
    plan.remove.push_back(usage.sessions[i].id);
    plan.why.push_back("asked");
    Drop(usage, i, cut_ns, &refs, &projected);
  }
  plan.total_after = projected;
  return plan;
}

int64_t SessionIdTimeNs(const std::string& id) {
  int y, mo, d, h, mi, s, ms;
  if (id.size() < 19 || std::sscanf(id.c_str(), "%4d%2d%2d-%2d%2d%2d-%3d", &y, &mo, &d, &h, &mi, &s, &ms) != 7) return 0;
  struct tm t = {};
  t.tm_year = y - 1900;
  t.tm_mon = mo - 1;
  t.tm_mday = d;
  t.tm_hour = h;
  t.tm_min = mi;
  t.tm_sec = s;
  time_t secs = ::timegm(&t);
  if (secs < 0) return 0;
  return static_cast<int64_t>(secs) * 1000000000 + static_cast<int64_t>(ms) * 1000000;
}

}  // namespace guard
