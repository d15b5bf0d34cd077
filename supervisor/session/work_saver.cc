#include "supervisor/session/work_saver.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>

#include "common/clock.h"
#include "common/file_io.h"
#include "common/os_calls.h"
#include "common/path_util.h"
#include "supervisor/capture/file_state.h"
#include "supervisor/capture/tree_edge.h"

namespace guard {
namespace {

constexpr int64_t Ns(std::chrono::milliseconds ms) { return static_cast<int64_t>(ms.count()) * 1000000; }

// Saves waiting for the ring's reports (WorkSaver::Deferred): flushed
// without waiting once this many wait, and at the end of each tick after
// waiting at most kFlushWait for the feed to catch up.
constexpr size_t kFlushEvery = 256;
constexpr std::chrono::milliseconds kFlushWait{30};

// Stores the content of `fd` into *state; a file that grew from the last
// version the session stored of `rel` (a pre-image or a post-image: a log),
// as that version and the bytes appended, when the store finds it so
// (BlobStore::PutFdAfter; docs/gc.md, "Inside a session").
Status StoreGrownContent(int fd, BlobStore* store, SavedVersions* versions, const std::string& rel,
                         FileState* state) {
  SavedVersion latest;
  const bool known = versions != nullptr && versions->Latest(rel, &latest);
  GUARD_RETURN_IF_ERROR(StoreContent(fd, store, state, known ? &latest : nullptr));
  if (versions != nullptr) versions->Note(rel, *state);
  return Status::Ok();
}

// Whether no process has open file `fd` open for writing (nor mapped
// writable): the kernel grants a read lease only then (fcntl(2),
// F_SETLEASE). Released at once. A filesystem without leases, or a file of
// another owner, answers no. SIGIO, which a lease break would send, is
// ignored (WorkSaver::Start).
bool NoWriter(int fd) {
  return os::ProbeReadLease(fd);
}

// Whether two polls saw the same thing: for a directory its inode, type and
// mode (its size and times change with its entries, which have entries of
// their own); for anything else the whole stat signature.
bool SamePoll(const FileState& a, const FileState& b) {
  if (a.type != b.type || a.mode != b.mode || a.dev != b.dev || a.ino != b.ino) return false;
  if (a.type == FileType::kDirectory) return true;
  return a.size == b.size && a.mtime_ns == b.mtime_ns && a.ctime_ns == b.ctime_ns;
}

bool SameSignature(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size && a.st_mode == b.st_mode &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec &&
         a.st_ctim.tv_sec == b.st_ctim.tv_sec && a.st_ctim.tv_nsec == b.st_ctim.tv_nsec;
}

Record PostImageRecord(const std::string& rel, FileState state, bool no_writer) {
  Record r;
  r.kind = OpKind::kFinal;
  r.flags = kPostImage | (no_writer ? static_cast<uint32_t>(kNoWriter) : 0u);
  r.path = rel;
  r.after = std::move(state);
  return r;
}

FileState Observed(bool exists, const struct stat& st) {
  FileState s;
  if (!exists) return s;
  FillFromStat(st, &s);
  FillSignature(st, &s);
  return s;
}

}  // namespace

WorkSaver::WorkSaver(std::string root, Recorder* recorder, std::string alive_path,
                     std::shared_ptr<spdlog::logger> log, Timing timing)
    : root_(std::move(root)),
      recorder_(recorder),
      alive_path_(std::move(alive_path)),
      log_(std::move(log)),
      timing_(timing) {}

WorkSaver::~WorkSaver() {
  Stop();
  if (lag_file_ != nullptr) std::fclose(lag_file_);
}

Status WorkSaver::Start() {
  GUARD_RETURN_IF_ERROR(OpenFile(alive_path_, O_WRONLY | O_CREAT | O_CLOEXEC, 0600, &alive_fd_));
  // A process that opens for writing a file the saver holds a read lease on
  // (for the microseconds of NoWriter) breaks the lease, and the kernel then
  // sends the lease holder SIGIO, whose default action would kill guard.
  // The command was started before this, so it keeps its own disposition.
  signal(SIGIO, SIG_IGN);
  active_.store(true, std::memory_order_relaxed);
  ticker_ = std::thread([this] { RunTicks(); });
  heart_ = std::thread([this] { RunHeartbeat(); });
  return Status::Ok();
}

void WorkSaver::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  if (heart_.joinable()) heart_.join();
  // The feed has stopped and delivered every report (run_command.cc stops
  // it first): the saves still waiting for them are appended now, or
  // dropped if one of them named their path.
  if (late_delivered_) FlushDeferred(std::chrono::milliseconds(0), true, MonoNowNs());
  // The calls since the last tick decide which post-images still hold.
  std::vector<Event> events;
  {
    std::lock_guard<std::mutex> lock(mu_);
    events.swap(events_);
  }
  int64_t now = MonoNowNs();
  for (const Event& e : events) Apply(e, now);
  if (tick_hook_) tick_hook_();
  // No event comes any more, and the seal reads entries_ alone: the names
  // of retired paths are freed before it needs its own memory.
  std::set<std::string>().swap(retired_);
}

void WorkSaver::CallBegins(const Call& call) {
  if (!active_.load(std::memory_order_relaxed)) return;  // never started: nobody would take the events
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto* list : {&call.changed, &call.removed, &call.left, &call.arrived}) {
    for (const std::string& p : *list) {
      in_flight_.insert(p);
      ++GenLocked(p);
    }
  }
  if (!call.left.empty() || !call.arrived.empty()) ++move_gen_;
}

void WorkSaver::CallEnds(const Call& call, bool happened) {
  if (!active_.load(std::memory_order_relaxed)) return;
  calls_ended_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto* list : {&call.changed, &call.removed, &call.left, &call.arrived}) {
    for (const std::string& p : *list) {
      if (auto it = in_flight_.find(p); it != in_flight_.end()) in_flight_.erase(it);
      ++GenLocked(p);
    }
  }
  if (!call.left.empty() || !call.arrived.empty()) ++move_gen_;
  if (!happened) return;
  // Order matters: what left a directory before what arrived in it (an
  // exchange names both sides in both lists).
  for (const std::string& p : call.left) events_.push_back({EventKind::kLeft, p});
  for (const std::string& p : call.removed) events_.push_back({EventKind::kRemoved, p});
  for (const std::string& p : call.changed) events_.push_back({EventKind::kChanged, p});
  for (const std::string& p : call.arrived) events_.push_back({EventKind::kArrived, p});
}

bool WorkSaver::InFlightLocked(const std::string& rel) const {
  if (in_flight_.empty()) return false;
  if (in_flight_.count(rel) || in_flight_.count(".")) return true;
  return ForEachAncestor(rel, [&](const std::string& dir) { return in_flight_.count(dir) > 0; });
}

std::string WorkSaver::Absolute(const std::string& rel) const {
  if (rel == ".") return root_;
  return root_ == "/" ? "/" + rel : root_ + "/" + rel;
}

void WorkSaver::RunHeartbeat() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    lock.unlock();
    // The file's mtime, not its content: recovery compares it with the
    // ctime of the tree's files, which the kernel stamps from the same clock.
    futimens(alive_fd_.get(), nullptr);
    lock.lock();
    cv_.wait_for(lock, timing_.heartbeat, [this] { return stopping_; });
  }
}

void WorkSaver::RunTicks() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, timing_.tick, [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    Tick();
    if (tick_hook_) tick_hook_();
    lock.lock();
  }
}

void WorkSaver::Tick() {
  std::vector<Event> events;
  {
    std::lock_guard<std::mutex> lock(mu_);
    events.swap(events_);
  }
  int64_t now = MonoNowNs();
  for (const Event& e : events) Apply(e, now);
  // A burst: calls ending at burst_calls a tick or faster since the last
  // tick (one that took long, copying a large file, counts by its length).
  const uint64_t calls = calls_ended_.load(std::memory_order_relaxed);
  const uint64_t ended = calls - calls_at_tick_;
  const int64_t since = last_tick_ns_ == 0 ? Ns(timing_.tick) : std::max<int64_t>(now - last_tick_ns_, 0);
  const bool burst = ended > 0 && ended * static_cast<uint64_t>(Ns(timing_.tick)) >=
                                      timing_.burst_calls * static_cast<uint64_t>(since);
  calls_at_tick_ = calls;
  last_tick_ns_ = now;
  if (burst) burst_ticks_.fetch_add(1, std::memory_order_relaxed);
  size_t waiting = 0;
  for (auto it = entries_.begin(); it != entries_.end();) {
    Entry& e = it->second;
    if (!e.dirty || e.awaiting || now < e.retry_at_ns) {
      ++it;
      continue;
    }
    if (burst && now - e.dirty_since_ns < Ns(timing_.burst_wait)) {
      // The command is at work: its disk and CPU are worth more now than
      // this path's post-image, which waits for the burst to end, at most
      // burst_wait from the path's first change since its last save.
      burst_held_.fetch_add(1, std::memory_order_relaxed);
      ++waiting;
      ++it;
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
    }
    Poll(it->first, &e, now);
    // Keeps what waits for the ring small, once the ring has delivered
    // what the oldest waits for (the reads are in the order of their
    // positions; a ring that does not move is not scanned again and again).
    // The entries stay where they are (a std::map), and retiring below
    // skips the awaiting ones.
    if (deferred_.size() >= kFlushEvery && late_delivered_() >= deferred_.front().late) {
      waiting += FlushDeferred(std::chrono::milliseconds(0), false, now);
    }
    waiting += e.dirty && e.retry_at_ns == 0;
    if (!e.dirty && !e.awaiting && e.saved_kind == Entry::Saved::kRemovedByCall && !e.ever_saved && e.seen_valid &&
        e.seen.type == FileType::kAbsent) {
      // Gone by a call, and seen gone: nothing of it is left to save.
      retired_.insert(retired_.end(), it->first);
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  // A read dropped here leaves its path dirty, to be read again: not idle.
  waiting += FlushDeferred(kFlushWait, false, now);
  waiting += deferred_.size();
  // Test mode: say when everything is saved and durable (a path the saver
  // cannot read does not count), once per change from busy to idle.
  std::lock_guard<std::mutex> lock(lag_mu_);
  bool idle = waiting == 0 && lag_queue_.empty();
  if (lag_file_ != nullptr && idle && !reported_idle_) {
    std::fprintf(lag_file_, "idle wall_ns %lld\n", static_cast<long long>(WallNowNs()));
    std::fflush(lag_file_);
  }
  reported_idle_ = idle;
}

WorkSaver::Entry& WorkSaver::EntryOf(const std::string& rel) {
  auto [it, added] = entries_.try_emplace(rel);
  if (added && !retired_.empty()) {
    if (auto r = retired_.find(rel); r != retired_.end()) {
      retired_.erase(r);
      Entry& e = it->second;
      e.saved_kind = Entry::Saved::kRemovedByCall;
      e.seen_valid = true;  // seen absent
    }
  }
  return it->second;
}

void WorkSaver::Apply(const Event& ev, int64_t now) {
  auto dirty = [&](Entry* e) {
    if (!e->dirty) e->dirty_since_ns = now;
    e->dirty = true;
    e->retry_at_ns = 0;
  };
  if (ev.kind == EventKind::kRemoved) {
    // The call happened (CallEnds), so its record says the name is gone:
    // seen absent without a look, and retired at once unless it has a
    // post-image or a read of it waits for the ring. Nothing of the
    // session's work is at a removed name, so its directories are not
    // saved for it either. A later call that makes the name again brings
    // it back (EntryOf).
    Entry& e = EntryOf(ev.path);
    e.saved_kind = Entry::Saved::kRemovedByCall;
    e.seen = FileState();
    e.seen_valid = true;
    e.seen_since_ns = now;
    e.dirty = false;
    e.retry_at_ns = 0;
    if (!e.ever_saved && !e.awaiting) {
      entries_.erase(ev.path);
      retired_.insert(ev.path);
    }
    return;
  }
  // The directories above a changed path are saved once too (type and
  // mode), so that the session's work can be put back after an `rm -rf` of
  // a directory the session only wrote into.
  ForEachAncestor(ev.path, [&](const std::string& dir) {
    if (retired_.count(dir)) return false;  // it has an entry, retired
    auto [it, added] = entries_.try_emplace(dir);
    if (added) dirty(&it->second);
    return false;
  });
  switch (ev.kind) {
    case EventKind::kChanged: {
      Entry& e = EntryOf(ev.path);
      // The call supersedes the last post-image (docs/format.md, Part IV),
      // and what it opened may be written from now on: the quiet period
      // starts again.
      e.saved_kind = Entry::Saved::kNothing;
      e.seen_since_ns = now;
      dirty(&e);
      return;
    }
    case EventKind::kRemoved:
      return;  // above
    case EventKind::kLeft: {
      // Everything below moved away with the directory: its post-images no
      // longer hold under these names, and nothing is there to save.
      std::string prefix = ev.path == "." ? "" : ev.path + "/";
      for (auto it = entries_.lower_bound(prefix); it != entries_.end() && it->first.starts_with(prefix); ++it) {
        it->second.saved_kind = Entry::Saved::kRemovedByCall;
        it->second.dirty = false;
      }
      return;
    }
    case EventKind::kArrived: {
      // Everything below may be new at these names: save it all (a file
      // saved under its old name is recognised by its inode, not read).
      std::string prefix = ev.path == "." ? "" : ev.path + "/";
      for (auto it = retired_.lower_bound(prefix); it != retired_.end() && it->starts_with(prefix);) {
        auto [e, added] = entries_.try_emplace(*it);
        e->second.seen_valid = true;  // seen absent; made kNothing and dirty below
        it = retired_.erase(it);
      }
      for (auto it = entries_.lower_bound(prefix); it != entries_.end() && it->first.starts_with(prefix); ++it) {
        it->second.saved_kind = Entry::Saved::kNothing;
        dirty(&it->second);
      }
      std::string abs = Absolute(ev.path);
      struct stat st;
      if (ParentLeavesTheTree(root_, ev.path) || lstat(abs.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return;
      std::error_code ec;
      auto walk = std::filesystem::recursive_directory_iterator(abs, std::filesystem::directory_options::none, ec);
      if (ec) return;
      for (; walk != std::filesystem::recursive_directory_iterator(); walk.increment(ec)) {
        if (ec) break;
        std::string rel = walk->path().string().substr(root_ == "/" ? 1 : root_.size() + 1);
        Entry& e = EntryOf(rel);
        e.saved_kind = Entry::Saved::kNothing;
        dirty(&e);
      }
      return;
    }
  }
}

void WorkSaver::Poll(const std::string& rel, Entry* e, int64_t now) {
  std::string abs = Absolute(rel);
  struct stat st;
  bool exists = lstat(abs.c_str(), &st) == 0;
  if (!exists && errno != ENOENT && errno != ENOTDIR) {
    e->retry_at_ns = now + Ns(timing_.max_age);
    return;
  }
  FileState cur = Observed(exists, st);
  if (!e->seen_valid || !SamePoll(e->seen, cur)) {
    e->seen = cur;
    e->seen_valid = true;
    e->seen_since_ns = now;
    // A file written without pause (a log, a database) is saved anyway
    // every max_age while it changes.
    if (exists && S_ISREG(st.st_mode) && now - e->dirty_since_ns >= Ns(timing_.max_age)) {
      Save(rel, e, st, /*forced=*/true, now);
    }
    return;
  }
  // Unchanged since the last tick.
  if (!exists) {
    bool known_gone = e->saved_kind == Entry::Saved::kRemovedByCall ||
                      (e->saved_kind == Entry::Saved::kPostImage && e->saved.type == FileType::kAbsent);
    if (known_gone) {
      e->dirty = false;  // the call's own record says it is gone
      return;
    }
  } else if (e->saved_kind == Entry::Saved::kPostImage && StillHolds(e->saved, st)) {
    // Saved while a writer had it open, and not written since: stop polling
    // once the writer has gone.
    UniqueFd fd;
    if (!S_ISREG(st.st_mode) || now - e->seen_since_ns < Ns(timing_.quiet)) return;
    if (OpenFile(abs, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0, &fd).ok() && NoWriter(fd.get())) {
      e->dirty = false;
    }
    return;
  }
  Save(rel, e, st, /*forced=*/false, now);
}

void WorkSaver::Save(const std::string& rel, Entry* e, const struct stat& polled, bool forced, int64_t now) {
  uint64_t gen0 = 0, move_gen0 = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (InFlightLocked(rel)) return;  // next tick
    gen0 = GenLocked(rel);
    move_gen0 = move_gen_;
  }
  // Calls reported late that may have run before this read: their reports
  // must reach CallBegins before the post-image may be appended.
  const uint64_t late0 = late_claimed_ ? late_claimed_() : 0;
  std::string abs = Absolute(rel);
  struct stat st;
  bool exists = !ParentLeavesTheTree(root_, rel) && lstat(abs.c_str(), &st) == 0;
  if (exists && !SameSignature(st, polled) && !forced) {
    e->seen_valid = false;  // changed since the poll: wait for it to settle
    return;
  }
  FileState state;
  bool no_writer = true;
  if (exists) {
    FillFromStat(st, &state);
    FillSignature(st, &state);
  }
  if (exists && S_ISLNK(st.st_mode)) {
    char buf[PATH_MAX + 1];
    ssize_t n = readlink(abs.c_str(), buf, PATH_MAX);
    if (n < 0) return;
    state.symlink_target.assign(buf, static_cast<size_t>(n));
  } else if (exists && S_ISREG(st.st_mode)) {
    UniqueFd fd;
    Status s = OpenFile(abs, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0, &fd);
    struct stat opened;
    if (s.ok() && fstat(fd.get(), &opened) != 0) s = Status::FromErrno(abs, errno);
    if (!s.ok()) {
      // Unreadable (mode 0000, say): the seal reads it again as it can.
      if (unsaveable_logged_++ < 10) log_->warn("work saver: cannot save {}: {}", rel, s.ToString());
      e->retry_at_ns = now + Ns(timing_.max_age);
      return;
    }
    if (opened.st_dev != st.st_dev || opened.st_ino != st.st_ino) return;  // replaced: next tick
    no_writer = NoWriter(fd.get());
    // A writer that paused may go on: wait until it closes, or until the
    // file has been quiet for `quiet`.
    if (!no_writer && !forced && now - e->seen_since_ns < Ns(timing_.quiet)) return;
    auto known = by_inode_.find({state.dev, state.ino});
    if (known != by_inode_.end() && known->second.size == state.size && known->second.mtime_ns == state.mtime_ns) {
      // The same inode, size and mtime as a file already saved (renamed,
      // chmod'ed, moved with its directory): the same content, not read again.
      state.blob = known->second.blob;
    } else {
      s = StoreGrownContent(fd.get(), recorder_->store(), recorder_->versions(), rel, &state);
      struct stat after;
      if (s.ok() && fstat(fd.get(), &after) != 0) s = Status::FromErrno(abs, errno);
      if (!s.ok()) {
        if (unsaveable_logged_++ < 10) log_->warn("work saver: cannot save {}: {}", rel, s.ToString());
        e->retry_at_ns = now + Ns(timing_.max_age);
        return;
      }
      if (!SameSignature(after, st)) {
        // Written while it was read: not a state the file ever had, unless
        // it only grew (a log). Kept only when it keeps changing, and then
        // without a signature, so that nothing takes it for the file's
        // current content.
        if (!forced) {
          e->seen_valid = false;
          return;
        }
        state.dev = state.ino = 0;
        state.ctime_ns = 0;
      }
    }
  }

  Record r = PostImageRecord(rel, std::move(state), no_writer);
  uint64_t end_offset = 0;
  Status s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || InFlightLocked(rel) || move_gen_ != move_gen0) return;
    if (GenLocked(rel) != gen0) return;
    if (late_delivered_ && late_delivered_() < late0) {
      // A call the ring has not yet reported may have changed the path
      // before the read: the record waits until the ring's reports reach
      // late0, and is then appended only if none of them named the path.
      late_deferred_.fetch_add(1, std::memory_order_relaxed);
      e->awaiting = true;
      deferred_.push_back({rel, std::move(r.after), no_writer, exists, gen0, move_gen0, late0});
      return;
    }
    s = recorder_->Append(&r, &end_offset);
  }
  if (!s.ok()) {
    if (unsaveable_logged_++ < 10) log_->warn("work saver: cannot record {}: {}", rel, s.ToString());
    e->retry_at_ns = now + Ns(timing_.max_age);
    return;
  }
  NoteSaved(rel, e, r.after, no_writer, exists, end_offset, now);
}

void WorkSaver::NoteSaved(const std::string& rel, Entry* e, const FileState& state, bool no_writer, bool exists,
                          uint64_t end_offset, int64_t now) {
  saved_count_.fetch_add(1, std::memory_order_relaxed);
  e->saved_kind = Entry::Saved::kPostImage;
  e->saved = state;
  e->ever_saved = true;
  // With no writer, only a call can change it now, and calls are reported.
  e->dirty = !no_writer || (exists && state.ino == 0);
  e->dirty_since_ns = now;
  if (state.type == FileType::kRegular && state.ino != 0) by_inode_[{state.dev, state.ino}] = state;
  if (state.type == FileType::kRegular) {
    std::lock_guard<std::mutex> lock(lag_mu_);
    if (lag_file_ != nullptr) lag_queue_.push_back({end_offset, state.mtime_ns, rel});
  }
}

size_t WorkSaver::FlushDeferred(std::chrono::milliseconds wait, bool at_stop, int64_t now) {
  if (deferred_.empty()) return 0;
  size_t dropped = 0;
  const uint64_t last = deferred_.back().late;  // in the order of their positions
  // The feed drains at least every 10 ms (shim_feed.cc): a short wait
  // lets most of a tick's saves be appended in the same tick.
  const int64_t give_up = MonoNowNs() + Ns(wait);
  while (!at_stop && late_delivered_() < last && MonoNowNs() < give_up) {
    std::unique_lock<std::mutex> lock(mu_);
    if (cv_.wait_for(lock, std::chrono::milliseconds(1), [this] { return stopping_; })) break;
  }
  size_t kept = 0;
  for (size_t i = 0; i < deferred_.size(); ++i) {
    Deferred& d = deferred_[i];
    auto it = entries_.find(d.rel);
    if (it == entries_.end()) continue;  // never so: an awaiting entry is not retired
    Entry& e = it->second;
    Record r;
    uint64_t end_offset = 0;
    Status s;
    {
      std::lock_guard<std::mutex> lock(mu_);
      // Kept for the next flush: the ring has not caught up yet, or the
      // saver is stopping (Stop's own flush, after the feed has delivered
      // every report, takes it).
      if (!at_stop && (stopping_ || late_delivered_() < d.late)) {
        if (kept != i) deferred_[kept] = std::move(d);
        ++kept;
        continue;
      }
      e.awaiting = false;
      if (late_delivered_() < d.late || InFlightLocked(d.rel) || move_gen_ != d.move_gen ||
          GenLocked(d.rel) != d.gen) {
        late_dropped_.fetch_add(1, std::memory_order_relaxed);
        e.seen_valid = false;  // polled again, read again once it settles
        dropped += e.dirty && e.retry_at_ns == 0;
        continue;
      }
      r = PostImageRecord(d.rel, std::move(d.state), d.no_writer);
      s = recorder_->Append(&r, &end_offset);
    }
    if (!s.ok()) {
      if (unsaveable_logged_++ < 10) log_->warn("work saver: cannot record {}: {}", d.rel, s.ToString());
      e.retry_at_ns = now + Ns(timing_.max_age);
      continue;
    }
    NoteSaved(d.rel, &e, r.after, d.no_writer, d.exists, end_offset, now);
  }
  deferred_.resize(kept);
  return dropped;
}

void WorkSaver::SetLagFile(const std::string& path) {
  std::lock_guard<std::mutex> lock(lag_mu_);
  lag_file_ = std::fopen(path.c_str(), "ae");
  if (lag_file_ == nullptr) log_->warn("work saver: cannot open {}", path);
}

void WorkSaver::OnDurable(uint64_t durable_bytes) {
  std::lock_guard<std::mutex> lock(lag_mu_);
  if (lag_file_ == nullptr) return;
  int64_t now = WallNowNs();
  while (!lag_queue_.empty() && lag_queue_.front().end_offset <= durable_bytes) {
    const LagEntry& l = lag_queue_.front();
    std::fprintf(lag_file_, "lag_us %lld path %s\n", static_cast<long long>((now - l.mtime_ns) / 1000),
                 l.path.c_str());
    lag_queue_.pop_front();
  }
  std::fflush(lag_file_);
}

void WorkSaver::AddPaths(std::set<std::string>* paths) const {
  for (const auto& [rel, e] : entries_) {
    if (e.ever_saved) paths->insert(rel);
  }
}

Status WorkSaver::Read(const std::string& rel, const std::string& abs, bool beneath, FileState* out,
                       uint32_t* flags) {
  *flags = 0;
  if (!beneath) {
    *out = FileState();  // absent
    return Status::Ok();
  }
  auto it = entries_.find(rel);
  struct stat st;
  if (it != entries_.end() && it->second.saved_kind == Entry::Saved::kPostImage && lstat(abs.c_str(), &st) == 0 &&
      StillHolds(it->second.saved, st)) {
    *out = it->second.saved;  // unchanged since its post-image: not read again
    seal_reused_.fetch_add(1, std::memory_order_relaxed);
    return Status::Ok();
  }
  seal_read_.fetch_add(1, std::memory_order_relaxed);
  SavedVersion latest;
  const bool known = recorder_->versions()->Latest(rel, &latest);
  return CaptureStateWithSignature(abs, recorder_->store(), out, known ? &latest : nullptr);
}

}  // namespace guard
