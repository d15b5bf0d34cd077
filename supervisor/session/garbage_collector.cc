#include "supervisor/session/garbage_collector.h"
#include "supervisor/session/disk_use.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <filesystem>

#include "common/blob_store.h"
#include "common/clock.h"
#include "common/file_io.h"
#include "common/session_meta.h"

namespace guard {
namespace {

// Objects newer than the cut are kept. The margin covers the coarse clock
// filesystems stamp files with (a tick behind CLOCK_REALTIME) and
// filesystems whose timestamps have a granularity of a second or two.
constexpr int64_t kCutMarginNs = 10LL * 1000000000;
constexpr const char* kRemovingPrefix = ".gc-";

// Deletes what a killed gc left half removed: sessions/.gc-<id>.
void FinishRemovals(const StateDir& state) {
  std::error_code ec;
  for (auto& e : std::filesystem::directory_iterator(state.sessions_dir(), ec)) {
    if (e.path().filename().string().rfind(kRemovingPrefix, 0) == 0) std::filesystem::remove_all(e.path(), ec);
  }
}

// Takes the session away from every reader in one rename; false (with why)
// when it must stay.
bool TakeAway(const StateDir& state, const std::string& id, std::string* why) {
  std::string dir = state.session_dir(id);
  // Recovery holds this lock while it seals the session.
  UniqueFd lock;
  if (!OpenFile(dir + "/recovery.lock", O_RDWR | O_CREAT, 0600, &lock).ok() ||
      ::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    *why = "being recovered";
    return false;
  }
  SessionMeta meta;
  if (LoadSessionMeta(dir + "/meta.json", &meta).ok() && meta.state == SessionState::kRunning) {
    *why = SupervisorAlive(meta) ? "running" : "needs recovery";
    return false;
  }
  std::string to = state.sessions_dir() + "/" + kRemovingPrefix + id;
  if (::rename(dir.c_str(), to.c_str()) != 0) {
    *why = std::string("cannot rename: ") + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace

Status MeasureStore(const StateDir& state, StoreInventory* inv, StoreUsage* usage, int64_t* cut_ns) {
  // Taken before anything is read: whatever a session writes from now on
  // is newer than the cut.
  int64_t cut = WallNowNs();
  std::vector<std::string> ids;
  GUARD_RETURN_IF_ERROR(state.ListSessions(&ids));
  usage->sessions.clear();
  for (const std::string& id : ids) {
    SessionUsage u;
    u.id = id;
    std::string dir = state.session_dir(id);
    SessionMeta meta;
    if (!LoadSessionMeta(dir + "/meta.json", &meta).ok()) {
      u.protection = Protection::kUnreadable;
      u.started_ns = SessionIdTimeNs(id);
    } else {
      u.root = meta.root;
      u.started_ns = meta.started_ns;
      u.ended_ns = meta.ended_ns;
      if (meta.state == SessionState::kRunning)
        u.protection = SupervisorAlive(meta) ? Protection::kRunning : Protection::kNeedsRecovery;
    }
    // A session that may still write (or be written by its recovery) does
    // so after its start: the cut goes back to it.
    if (u.protection != Protection::kNone && u.started_ns != 0) cut = std::min(cut, u.started_ns);
    std::vector<std::string> problems;
    Status s = ReadSessionRefs(dir + "/journal", &u.refs, &problems);
    u.refs_complete = s.ok() && problems.empty();
    u.dir_bytes = DiskBytesUnder(dir);
    usage->sessions.push_back(std::move(u));
  }
  GUARD_RETURN_IF_ERROR(TakeInventory(state.store_dir(), inv));
  ComputeUsage(*inv, usage);
  *cut_ns = cut - kCutMarginNs;
  return Status::Ok();
}

Status PinStore(const StateDir& state, UniqueFd* pin) {
  *pin = UniqueFd();
  UniqueFd lock;
  Status s = OpenFile(state.path() + "/gc.lock", O_RDONLY | O_CREAT, 0600, &lock);
  if (!s.ok()) {
    if (s.err() == EROFS || s.err() == EACCES) return Status::Ok();
    return s;
  }
  if (GUARD_EINTR_RETRY(::flock(lock.get(), LOCK_SH)) != 0) return Status::FromErrno(state.path() + "/gc.lock", errno);
  *pin = std::move(lock);
  return Status::Ok();
}

Status CollectGarbage(const StateDir& state, const GcRequest& request, GcReport* report) {
  auto start = std::chrono::steady_clock::now();
  *report = GcReport();
  UniqueFd lock;
  GUARD_RETURN_IF_ERROR(OpenFile(state.path() + "/gc.lock", O_RDWR | O_CREAT, 0600, &lock));
  if (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) return Status::FromErrno(state.path() + "/gc.lock", errno);
    if (!request.wait_for_lock) return Status::Ok();
    if (request.waiting) request.waiting();
    if (GUARD_EINTR_RETRY(::flock(lock.get(), LOCK_EX)) != 0) {
      return Status::FromErrno(state.path() + "/gc.lock", errno);
    }
  }
  if (!request.dry_run) FinishRemovals(state);
  // Opening the store also puts back objects a killed sweep left in trash/.
  std::unique_ptr<BlobStore> store;
  GUARD_RETURN_IF_ERROR(BlobStore::Open(state.store_dir(), &store));
  // Recovery first, as every command does, except in the automatic gc: it
  // runs detached, and a session that needs recovery is protected anyway.
  if (!request.dry_run && !request.only_if_over) {
    Status s = RecoverOrphans(state, "", &report->recovered);
    (void)s;  // a session that could not be recovered stays protected below
  }

  // What sessions stored raw since the last pass is compressed, in every gc
  // that writes (the automatic one when over the policy), after the sweep
  // so that nothing about to go is compressed first. The stamp's
  // mtime is when the last whole pass started.
  auto compact = [&]() -> Status {
    if (request.dry_run) return Status::Ok();
    const std::string stamp = state.path() + "/compacted";
    struct stat st;
    int64_t since = ::stat(stamp.c_str(), &st) == 0 ? TimespecNs(st.st_mtim) : 0;
    struct timespec start;
    ::clock_gettime(CLOCK_REALTIME, &start);
    // The sweep's margin (file times come from a coarser clock), and a
    // stamp from a clock since stepped back means nothing.
    since -= kCutMarginNs;
    if (since > TimespecNs(start) || since < 0) since = 0;
    GUARD_RETURN_IF_ERROR(CompactStore(state.store_dir(), since, &report->compact));
    UniqueFd fd;
    GUARD_RETURN_IF_ERROR(OpenFile(stamp, O_WRONLY | O_CREAT, 0600, &fd));
    struct timespec times[2] = {start, start};
    if (::futimens(fd.get(), times) != 0) return Status::FromErrno(stamp, errno);
    return Status::Ok();
  };

  StoreInventory inv;
  StoreUsage usage;
  int64_t cut = 0;
  GUARD_RETURN_IF_ERROR(MeasureStore(state, &inv, &usage, &cut));
  if (request.forget.empty()) {
    ProtectNewest(request.policy.keep_newest, &usage);
    report->plan = PlanRetention(usage, request.policy, WallNowNs(), cut);
    // The automatic gc within the policy writes nothing, compaction
    // included: it runs detached after every session, and whatever removes
    // or inspects the store right after a session (a script, the tests)
    // would race with it.
    if (request.only_if_over && report->plan.within_policy_before) return Status::Ok();
  } else {
    std::vector<std::string> ids;
    for (const std::string& id : request.forget) {
      auto it = std::find_if(usage.sessions.begin(), usage.sessions.end(),
                             [&](const SessionUsage& u) { return u.id == id; });
      if (it == usage.sessions.end()) {
        report->skipped.push_back(id + ": no such session");
      } else if (it->protection == Protection::kRunning || it->protection == Protection::kNeedsRecovery) {
        report->skipped.push_back(id + ": " + ProtectionName(it->protection));
      } else {
        ids.push_back(id);
      }
    }
    report->plan = PlanRemoval(usage, ids, cut);
  }
  report->ran = true;

  // Sessions first, each taken away in one rename; the renames are made
  // durable before any blob goes, so that no session can come back after a
  // crash without the blobs it names.
  std::vector<std::string> removed;
  if (!request.dry_run) {
    for (const std::string& id : report->plan.remove) {
      std::string why;
      if (TakeAway(state, id, &why)) removed.push_back(id);
      else report->skipped.push_back(id + ": " + why);
    }
    if (!removed.empty()) GUARD_RETURN_IF_ERROR(FsyncDir(state.sessions_dir()));
    for (size_t i = 0; i < removed.size(); ++i) {
      if (request.progress) request.progress("removing sessions", i, removed.size());
      std::error_code ec;
      std::filesystem::remove_all(state.sessions_dir() + "/" + kRemovingPrefix + removed[i], ec);
    }
  } else {
    removed = report->plan.remove;
  }
  report->removed = removed;

  // Mark: what every remaining session names.
  StoreMarks marks;
  for (const SessionUsage& u : usage.sessions) {
    if (std::find(removed.begin(), removed.end(), u.id) != removed.end()) continue;
    if (!u.refs_complete && report->no_sweep.empty()) {
      report->no_sweep = "the journal of session " + u.id + " could not be read whole";
    }
    marks.keys.insert(u.refs.keys.begin(), u.refs.keys.end());
    marks.pending.insert(u.refs.pending.begin(), u.refs.pending.end());
  }
  if (const char* pause = std::getenv("GUARD_TEST_GC_PAUSE_MS"); pause != nullptr && *pause != '\0') {
    // Test hook: widens the window between the marks and the sweep, where a
    // running session may store content the sweep is about to remove.
    std::this_thread::sleep_for(std::chrono::milliseconds(std::atol(pause)));
  }
  if (report->no_sweep.empty()) {
    SweepOptions options;
    options.cut_ns = cut;
    options.dry_run = request.dry_run;
    if (request.progress) options.progress = [&](size_t d, size_t t) { request.progress("sweeping", d, t); };
    GUARD_RETURN_IF_ERROR(SweepStore(state.store_dir(), inv, marks, options, &report->sweep));
    report->swept = true;
  }
  if (request.dry_run) {
    report->total_after = report->plan.total_after;
  } else {
    // What was measured, less what went (not measured again: that would
    // read every journal a second time).
    uint64_t freed = report->sweep.bytes;
    for (const SessionUsage& u : usage.sessions)
      if (std::find(removed.begin(), removed.end(), u.id) != removed.end()) freed += u.dir_bytes;
    report->total_after = usage.total() - std::min(usage.total(), freed);
  }
  // What compaction could not do is said, not gc's failure: the sessions
  // and blobs above are gone already, and nothing it left is lost.
  if (Status compacted = compact(); !compacted.ok()) report->compact_error = compacted.ToString();
  if (!request.dry_run) report->total_after -= std::min(report->total_after, report->compact.bytes_before);
  if (!request.dry_run) report->total_after += report->compact.bytes_after;
  report->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return Status::Ok();
}

}  // namespace guard
