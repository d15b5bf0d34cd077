#include "supervisor/session/shim_feed.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "common/blob_store.h"
#include "common/blob_store_layout.h"
#include "common/file_io.h"
#include "common/inbox_layout.h"
#include "common/os_calls.h"
#include "common/ring_lineage.h"
#include "common/ring_os.h"
#include "common/shim_record.h"
#include "supervisor/base/stat_state.h"
#include "supervisor/session/orphan_pending.h"

namespace guard {

namespace {

using Action = MutationRequest::Action;

static_assert(sizeof(guard_shim_call) % 8 == 0 && sizeof(guard_shim_call) == 208, "the layout of docs/ring.md");
static_assert(static_cast<int>(Action::kMknod) == GUARD_SHIM_MKNOD, "shim actions are the request's");
static_assert(static_cast<int>(Action::kFchmod) == GUARD_SHIM_FCHMOD, "shim actions are the request's");

// The syscall column of the journal for the shim's calls: the call the
// action stands for (the shim reports the action, not the entry point).
const char* SyscallOf(uint32_t action) {
  switch (action) {
    case GUARD_SHIM_OPEN: return "openat";
    case GUARD_SHIM_TRUNCATE: return "truncate";
    case GUARD_SHIM_FTRUNCATE: return "write";
    case GUARD_SHIM_RENAME: return "renameat2";
    case GUARD_SHIM_UNLINK: return "unlinkat";
    case GUARD_SHIM_RMDIR: return "rmdir";
    case GUARD_SHIM_MKDIR: return "mkdirat";
    case GUARD_SHIM_SYMLINK: return "symlinkat";
    case GUARD_SHIM_LINK: return "linkat";
    case GUARD_SHIM_CHMOD: return "fchmodat";
    case GUARD_SHIM_FCHMOD: return "fchmod";
    case GUARD_SHIM_MKNOD: return "mknodat";
  }
  return "?";
}

KnownLstat LstatOf(const guard_shim_stat& s) {
  KnownLstat k;
  k.made = s.err != -1;
  k.err = s.err;
  if (k.made && s.err == 0) {
    k.st.st_mode = s.mode;
    k.st.st_dev = s.dev;
    k.st.st_ino = s.ino;
    k.st.st_size = static_cast<off_t>(s.size);
    k.st.st_nlink = s.nlink;
    k.st.st_uid = s.uid;
    k.st.st_gid = s.gid;
    k.st.st_mtim.tv_sec = s.mtime_sec;
    k.st.st_mtim.tv_nsec = s.mtime_nsec;
    k.st.st_ctim.tv_sec = s.ctime_sec;
    k.st.st_ctim.tv_nsec = s.ctime_nsec;
  }
  return k;
}

constexpr std::string_view kDeleted = " (deleted)";

bool EndsWith(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

}  // namespace

ShimFeed::ShimFeed(Capture* capture, std::mutex* mu, std::string owner, std::shared_ptr<spdlog::logger> log)
    : capture_(capture), mu_(mu), owner_(std::move(owner)), log_(std::move(log)) {
  // Test only: the live feed drains nothing, so that a supervisor killed
  // meanwhile leaves every record in the ring for recovery (the kill tests).
  const char* hold = getenv("GUARD_TEST_HOLD_RING");
  hold_ = hold != nullptr && std::string(hold) == "1";
}

ShimFeed::~ShimFeed() { Stop(); }

Status ShimFeed::Attach(void* base, size_t size) {
  GUARD_RETURN_IF_ERROR(consumer_.Attach(base, size));
  // The live session: its processes descend from this one, a child
  // subreaper (common/ring_lineage.h), and a claim of any other process is
  // forged. Recovery's feed checks nobody: the session's supervisor is gone.
  if (!keep_pending_names_) consumer_.SetSession(::getpid());
  header_ = static_cast<guard_ring_header*>(base);
  attached_ = true;
  return Status::Ok();
}

// The protocol is the shim's (interpose/linux/name_lock.c), but the
// supervisor never waits: a lock held by a live thread is reported, and
// the tracer hands the call back later (Verdict::retry_later).
ShimFeed::NameLock ShimFeed::TakeNameLock(const std::string& abs, pid_t tid, uint32_t* index) {
  if (!attached_ || header_ == nullptr || abs.empty() || tid <= 0 ||
      (static_cast<uint32_t>(tid) & ~GUARD_RING_LOCK_TID_MASK) != 0) {
    return NameLock::kNone;
  }
  *index = guard_ring_name_lock_index(abs.data(), abs.size());
  uint32_t* word = &header_->name_locks[*index];
  uint32_t cur = __atomic_load_n(word, __ATOMIC_RELAXED);
  for (;;) {
    const uint32_t owner = cur & GUARD_RING_LOCK_TID_MASK;
    if (owner == static_cast<uint32_t>(tid)) return NameLock::kMine;
    // Whether the owner's lock counts, by the shim's rule: its thread lives
    // (tkill with no signal: ESRCH is gone) and is of the session (its
    // parent chain reaches this supervisor). Another lock is taken over.
    if (owner != 0 && OwnerHolds(owner)) return NameLock::kHeld;
    uint32_t gen = cur & GUARD_RING_LOCK_GEN_MASK;
    if (owner != 0) gen = (gen + GUARD_RING_LOCK_GEN_ONE) & GUARD_RING_LOCK_GEN_MASK;
    const uint32_t want = (cur & GUARD_RING_LOCK_WAITERS) | gen | static_cast<uint32_t>(tid);
    // Acquire: what the last owner did comes before guard's look at the name.
    if (__atomic_compare_exchange_n(word, &cur, want, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
      return NameLock::kTaken;
    }
  }
}

bool ShimFeed::OwnerHolds(uint32_t tid) const {
  if (!os::ThreadMayExist(static_cast<pid_t>(tid))) return false;
  // Unknown (it ended meanwhile) counts as holding: the next look says.
  return keep_pending_names_ || guard_ring_descends_from(static_cast<int>(tid), ::getpid()) != 0;
}

void ShimFeed::GiveNameLock(uint32_t index, pid_t tid) {
  if (!attached_ || header_ == nullptr || index >= GUARD_RING_NAME_LOCKS) return;
  uint32_t* word = &header_->name_locks[index];
  uint32_t cur = __atomic_load_n(word, __ATOMIC_RELAXED);
  for (;;) {
    // Taken over meanwhile (the thread was thought dead): not ours to give.
    if ((cur & GUARD_RING_LOCK_TID_MASK) != static_cast<uint32_t>(tid)) return;
    const uint32_t gen = (cur + GUARD_RING_LOCK_GEN_ONE) & GUARD_RING_LOCK_GEN_MASK;
    // Release: the call and its record come before the next owner's look.
    if (__atomic_compare_exchange_n(word, &cur, gen, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) break;
  }
  if (cur & GUARD_RING_LOCK_WAITERS) ring_os_futex_wake_all(word);
}

void ShimFeed::Start() {
  if (!attached_ || thread_.joinable()) return;
  stop_.store(false);
  thread_ = std::thread([this] { Loop(); });
}

void ShimFeed::Loop() {
  while (!stop_.load(std::memory_order_acquire)) {
    // Records are safe in the segment meanwhile: the wait only bounds how
    // long they sit there (and how soon the work saver hears of them).
    consumer_.Wait(10);
    {
      std::lock_guard<std::mutex> lock(*mu_);
      DrainLocked();
    }
    SayShimMismatch();
  }
}

void ShimFeed::SayShimMismatch() {
  if (mismatch_said_ || header_ == nullptr) return;
  const std::string line = ShimMismatchLine(LoadShimMismatch(header_));
  if (line.empty()) return;
  mismatch_said_ = true;
  log_->warn("{}", line);
  std::fprintf(stderr, "guard: warning: %s\n", line.c_str());
}

void ShimFeed::Stop() {
  if (thread_.joinable()) {
    stop_.store(true, std::memory_order_release);
    consumer_.Interrupt();  // not the rest of its 10 ms wait
    thread_.join();
    SayShimMismatch();  // a shim that refused after the thread's last look
  }
  if (!attached_) return;
  std::lock_guard<std::mutex> lock(*mu_);
  DrainLocked();
  // Every process of the session has ended: a CALL still open never got
  // its OUTCOME (its thread was killed inside the call).
  for (const auto& [tid, open] : open_) {
    log_->warn("shim call {} of tid {} ended without its outcome: it may have happened", open.call_id, tid);
    capture_->Abandon(tid);
  }
  open_.clear();
  consumer_.Detach();
  attached_ = false;
}

void ShimFeed::DrainLocked() {
  if (!attached_ || hold_) return;
  consumer_.Drain([this](const RingRecord& r) { return Apply(r); });
  const RingConsumerCounters& counters = consumer_.counters();
  if (const uint64_t at = counters.corrupt_at; at != 0 && !corrupt_reported_) {
    corrupt_reported_ = true;
    log_->error("the ring's record at position {} has a length no producer makes: the ring is no longer read", at - 1);
    Evidence("a process of the session forged a record in the shim's ring (framing no producer makes, at position " +
             std::to_string(at - 1) + "), and the shim's records after it are lost");
  }
  if (counters.foreign_claims > foreign_seen_) {
    log_->error("{} claim(s) in the ring owned by no process of the session", counters.foreign_claims - foreign_seen_);
    foreign_seen_ = counters.foreign_claims;
    Evidence("a claim in the shim's ring named an owner that is no process of the session");
  }
  // Set again at every drain: a process of the session may have cleared it.
  if (failed_closed_) __atomic_store_n(&header_->fail_closed, 1u, __ATOMIC_RELAXED);
}

void ShimFeed::Evidence(const std::string& what) {
  if (header_ != nullptr) __atomic_store_n(&header_->fail_closed, 1u, __ATOMIC_RELAXED);
  if (failed_closed_) {
    log_->warn("more evidence of forgery: {}", what);
    return;
  }
  failed_closed_ = true;
  log_->error("evidence of forgery: {}; from now on the session's calls go to the tracer (--mode auto) or "
              "follow the capture-failure policy (--mode preload)", what);
  std::fprintf(stderr, "guard: %s; the session's log is incomplete from now on, and every further call goes to "
               "the tracer or the capture-failure policy (see the session's guard.log)\n", what.c_str());
  if (on_evidence_) on_evidence_(what);
}

void ShimFeed::Malformed(const RingRecord& record, const char* why) {
  malformed_.fetch_add(1, std::memory_order_relaxed);
  log_->warn("malformed shim record from pid {}: {}", record.pid, why);
  // The shim checks what it puts (and a shim of another protocol puts
  // nothing): a record that fails these checks was written by something else.
  Evidence(std::string("a record in the shim's ring that no shim makes (") + why + ")");
}

bool ShimFeed::Apply(const RingRecord& record) {
  if (record.type == GUARD_SHIM_RECORD_CALL) {
    ApplyCall(record);
  } else if (record.type == GUARD_SHIM_RECORD_OUTCOME) {
    ApplyOutcome(record);
  } else {
    Malformed(record, "a record of unknown type");
  }
  return true;  // consumed either way: a record the feed cannot use must not block the ring
}

Status ShimFeed::SetInbox(const std::string& dir, BlobStore* store) {
  UniqueFd fd;
  GUARD_RETURN_IF_ERROR(OpenFileAt(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0, &fd));
  inbox_dir_ = dir;
  inbox_ = std::move(fd);
  store_ = store;
  return Status::Ok();
}

bool ShimFeed::TakePending(const std::string& name, const guard_shim_stat& victim) {
  if (!inbox_.valid()) return true;  // a ring without an inbox (unit tests): names are the store's
  BlobStore::InboxVictim v;
  v.known = victim.err == 0 && S_ISREG(victim.mode);
  v.dev = static_cast<dev_t>(victim.dev);
  v.ino = static_cast<ino_t>(victim.ino);
  Status s = store_->TakeFromInbox(inbox_.get(), name, v);
  if (s.ok()) return true;
  log_->warn("pre-image {} from the shim not taken: {}", name, s.ToString());
  return false;
}

void ShimFeed::EmptyInbox() {
  if (!inbox_.valid()) return;
  BlobStore::InboxVictim unknown;
  // A pre-image linked from a file that kept its name (its process died
  // before the call) is kept too, as a copy (orphan_pending.h).
  unknown.orphan_max_bytes = kUnnamedPreImageBytesMax;
  size_t left = 0;
  // The shards' own names: a file the shim put there is in the shard its
  // name says (common/inbox_layout.h); anything else is nothing of ours.
  for (unsigned shard = 0; shard < GUARD_INBOX_SHARDS; ++shard) {
    const std::string sub(1, guard_inbox_shard_char(shard));
    // Empty (the shim's pre-images were all taken as their records came):
    // removed at once, without a listing. This is on the caller's path.
    if (::unlinkat(inbox_.get(), sub.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT) continue;
    UniqueFd dir;
    if (Status s = OpenFileAt(inbox_.get(), sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0, &dir); !s.ok()) {
      if (!s.IsNotFound()) log_->warn("inbox {}/{}: {}", inbox_dir_, sub, s.ToString());
      continue;
    }
    std::vector<std::string> names;
    if (Status s = ReadDirNames(dir.get(), "inbox", &names); !s.ok()) {
      log_->warn("inbox {}/{}: {}", inbox_dir_, sub, s.ToString());
    }
    for (const std::string& name : names) {
      if (!BlobStore::PendingNameOf(name, owner_) || guard_inbox_shard(name.data(), name.size()) != shard) continue;
      if (Status s = store_->TakeFromInbox(inbox_.get(), name, unknown); !s.ok()) {
        log_->warn("inbox {}: {}", name, s.ToString());
      } else {
        ++left;
      }
    }
    dir.reset();
    if (::unlinkat(inbox_.get(), sub.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
      log_->warn("inbox {}/{}: {}", inbox_dir_, sub, std::strerror(errno));
    }
  }
  if (left > 0) log_->warn("{} pre-image(s) in the inbox without their record (orphans)", left);
  inbox_.reset();
  if (::rmdir(inbox_dir_.c_str()) != 0 && errno != ENOENT) {
    log_->warn("inbox {}: {}", inbox_dir_, std::strerror(errno));
  }
}

void ShimFeed::ApplyCall(const RingRecord& record) {
  guard_shim_call call;
  const size_t fixed = sizeof call;
  auto bad = [&](const char* why) { Malformed(record, why); };
  if (record.payload.size() < fixed) return bad("shorter than a call");
  std::memcpy(&call, record.payload.data(), fixed);
  if (call.tid <= 0) return bad("no thread");
  if (call.action > GUARD_SHIM_MKNOD) return bad("unknown action");
  std::string str[GUARD_SHIM_STR_COUNT];
  size_t at = fixed;
  for (int i = 0; i < GUARD_SHIM_STR_COUNT; ++i) {
    size_t n = call.lengths[i];
    if (n > GUARD_SHIM_MAX_STRING || at + n > record.payload.size()) return bad("a string runs past the record");
    str[i].assign(reinterpret_cast<const char*>(record.payload.data()) + at, n);
    at += n;
  }
  const std::string& path1 = str[GUARD_SHIM_STR_PATH1];
  if (path1.empty() || path1[0] != '/') return bad("path not absolute");
  // Path1's content, when the record carries it: the rest of the record,
  // as long as path1's lstat said, of a regular file, with no pending name.
  std::string_view content;
  const bool has_content = (call.content & GUARD_SHIM_CONTENT_INLINE) != 0;
  if (has_content) {
    content = std::string_view(reinterpret_cast<const char*>(record.payload.data()) + at, record.payload.size() - at);
    const bool in_place = call.action == GUARD_SHIM_OPEN || call.action == GUARD_SHIM_TRUNCATE ||
                          call.action == GUARD_SHIM_FTRUNCATE;
    if (!in_place || call.before1.err != 0 || !S_ISREG(call.before1.mode) || call.before1.size != content.size() ||
        content.size() > GUARD_SHIM_INLINE_MAX || !str[GUARD_SHIM_STR_PENDING1].empty()) {
      return bad("inline content not of its file");
    }
  }
  // A pending name names a file of this session's in the store: one
  // component, with the session's prefix (another's would be adopted by it).
  for (int i : {GUARD_SHIM_STR_PENDING1, GUARD_SHIM_STR_PENDING2}) {
    if (!str[i].empty() && (!store_layout::ValidPendingName(str[i]) || !BlobStore::PendingNameOf(str[i], owner_))) {
      return bad("pending name not this session's");
    }
  }
  // What cannot be taken from the inbox is a pre-image the CALL does not
  // have: capture says so (Capture::MayProceedUncaptured).
  if (!str[GUARD_SHIM_STR_PENDING1].empty() && !TakePending(str[GUARD_SHIM_STR_PENDING1], call.before1)) {
    str[GUARD_SHIM_STR_PENDING1].clear();
  }
  if (!str[GUARD_SHIM_STR_PENDING2].empty() && !TakePending(str[GUARD_SHIM_STR_PENDING2], call.before2)) {
    str[GUARD_SHIM_STR_PENDING2].clear();
  }
  const pid_t tid = call.tid;
  // The thread is making another call: any before it has returned (a
  // traced one let run without an exit stop, or a shim call whose OUTCOME
  // was lost). Its outcome is learnt from what this call's lstat saw, not
  // from the tree, which may show later calls already.
  if (capture_->InCall(tid)) {
    if (open_.count(tid) != 0) {
      capture_->Returned(tid);
    } else {
      capture_->ReturnedBefore(tid, path1, LstatOf(call.before1));
    }
  }
  open_.erase(tid);

  Mutation m;
  m.tid = tid;
  m.req.action = static_cast<Action>(call.action);
  m.req.syscall = SyscallOf(call.action);
  m.req.path = path1;
  m.req.flags = call.flags;
  m.req.mode = call.mode;
  m.req.target = str[GUARD_SHIM_STR_TARGET];
  m.abs = path1;
  m.abs_lstat = LstatOf(call.before1);
  m.has2 = call.action == GUARD_SHIM_RENAME || call.action == GUARD_SHIM_LINK;
  if (m.has2) {
    m.abs2 = str[GUARD_SHIM_STR_PATH2];
    if (m.abs2.empty() || m.abs2[0] != '/') return bad("second path not absolute");
    m.req.path2 = m.abs2;
    m.abs2_lstat = LstatOf(call.before2);
  }
  m.pre.present = true;
  m.pre.target = str[GUARD_SHIM_STR_OLD_TARGET1];
  m.pre.target2 = str[GUARD_SHIM_STR_OLD_TARGET2];
  m.pre.pending = str[GUARD_SHIM_STR_PENDING1];
  m.pre.pending2 = str[GUARD_SHIM_STR_PENDING2];
  m.pre.has_content = has_content;
  if (has_content) m.pre.content.assign(content);
  // A change through an fd whose file has lost its name: /proc's link text
  // is "<old path> (deleted)" (capture finds any name it has left).
  if (call.action == GUARD_SHIM_FTRUNCATE && EndsWith(path1, kDeleted) && m.abs_lstat.exists()) {
    m.unnamed = true;
    m.unnamed_st = m.abs_lstat.st;
  }
  m.comm = str[GUARD_SHIM_STR_COMM];
  calls_.fetch_add(1, std::memory_order_relaxed);
  if (keep_pending_names_) {
    for (const std::string* p : {&m.pre.pending, &m.pre.pending2}) {
      if (!p->empty()) pending_names_.push_back(*p);
    }
  }
  Verdict v = capture_->Before(m);
  if (v.deny_errno != 0) {
    // The call has run: the shim leaves to the tracer what guard refuses.
    log_->error("the shim let run a call guard refuses: {} of {} by tid {} ({})", m.req.syscall, m.abs, tid,
                std::strerror(v.deny_errno));
  }
  if (!capture_->InCall(tid)) return;  // nothing recorded, nothing to wait for
  OpenCall open;
  open.call_id = call.call_id;
  open.action = call.action;
  if (call.action == GUARD_SHIM_SYMLINK) open.after_target = m.req.target;
  if (call.action == GUARD_SHIM_RENAME || call.action == GUARD_SHIM_LINK) open.after_target = m.pre.target;
  open_[tid] = std::move(open);
}

void ShimFeed::ApplyOutcome(const RingRecord& record) {
  guard_shim_outcome out;
  if (record.payload.size() < sizeof out) return Malformed(record, "an outcome shorter than an outcome");
  std::memcpy(&out, record.payload.data(), sizeof out);
  auto it = open_.find(out.tid);
  // An OUTCOME of a call that recorded nothing, or of one a nested call
  // (a signal handler's) already took the place of.
  if (it == open_.end() || it->second.call_id != out.call_id) return;
  const OpenCall open = std::move(it->second);
  open_.erase(it);
  FileState after;
  const KnownLstat l = LstatOf(out.after);
  if (out.err == 0) {
    if (!l.made) {
      after.type = FileType::kUnknown;
    } else if (l.err == 0) {
      FillFromStat(l.st, &after);
      if (after.type == FileType::kSymlink) after.symlink_target = open.after_target;
    } else if (l.err != ENOENT && l.err != ENOTDIR) {
      after.type = FileType::kUnknown;
    }  // else kAbsent
  }
  capture_->Ran(out.tid, out.err, after);
}

void ShimFeed::ThreadGone(pid_t tid) {
  auto it = open_.find(tid);
  if (it == open_.end()) return;
  log_->warn("tid {} ended inside shim call {}: it may have happened", tid, it->second.call_id);
  open_.erase(it);
  capture_->Abandon(tid);
}

bool FedSink::TakeLocks(const Mutation& m, bool waited_out, std::vector<uint32_t>* taken) {
  for (const std::string* abs : {&m.abs, m.has2 ? &m.abs2 : nullptr}) {
    if (abs == nullptr) continue;
    uint32_t index = 0;
    switch (feed_->TakeNameLock(*abs, m.tid, &index)) {
      case ShimFeed::NameLock::kTaken: taken->push_back(index); break;
      case ShimFeed::NameLock::kHeld:
        if (waited_out) break;  // goes on without that one, keeping the others
        GiveLocks(m.tid, taken);
        return false;
      case ShimFeed::NameLock::kMine:
      case ShimFeed::NameLock::kNone: break;
    }
  }
  return true;
}

void FedSink::GiveLocks(pid_t tid, std::vector<uint32_t>* taken) {
  for (uint32_t index : *taken) feed_->GiveNameLock(index, tid);
  taken->clear();
}

void FedSink::GiveLocks(pid_t tid) {
  auto it = locks_.find(tid);
  if (it == locks_.end()) return;
  GiveLocks(tid, &it->second);
  locks_.erase(it);
}

Verdict FedSink::Before(const Mutation& m) {
  std::lock_guard<std::mutex> lock(*mu_);
  feed_->DrainLocked();
  GiveLocks(m.tid);  // a call before this one that was never seen to end
  // The call holds its names' locks from guard's look at them until it has
  // ended, as a shim call holds them: a shim call on one of its names then
  // waits for it (docs/ring.md, "Name locks"). A shim call of another
  // thread that holds one is between its look at the name and its OUTCOME:
  // it may not have run yet, and this call is held until it has, as the
  // tracer's own calls on one name are (past kHoldLimitNs it goes on
  // without the lock).
  std::vector<uint32_t> taken;
  if (m.holdable && !TakeLocks(m, m.held_ns >= kHoldLimitNs, &taken)) {
    Verdict v;
    v.retry_later = true;
    return v;
  }
  if (m.holdable && feed_->BlockedLocked() && feed_->DeliveredPosition() != waited_out_at_) {
    // Another producer's record, claimed and not yet published, holds back
    // the records behind it, which may be this thread's own shim calls made
    // before this one: recorded now, this call would come before them in
    // the journal. Held and handed back shortly, until the head moves (a
    // put is a copy: microseconds), or at most kHoldLimitNs (its
    // producer may be stopped: it is never waited for here, which could
    // block the tracer that would resume it). A record one call has waited
    // out holds up no other.
    if (m.held_ns < kHoldLimitNs) {
      GiveLocks(m.tid, &taken);
      Verdict v;
      v.retry_later = true;
      return v;
    }
    waited_out_at_ = feed_->DeliveredPosition();
    feed_->log()->warn("a ring record at position {} stayed unpublished for {} ms: the call of tid {} is "
                       "recorded without waiting for the records behind it", waited_out_at_,
                       kHoldLimitNs / 1000000, m.tid);
  }
  // The tracer looked at the names (Mutation::abs_lstat) before their locks
  // were taken: a shim call could have changed one and let go of its lock
  // in between. Capture looks again, under the locks.
  Mutation relooked;
  const Mutation* call = &m;
  if (!taken.empty()) {
    relooked = m;
    relooked.abs_lstat = KnownLstat();
    relooked.abs2_lstat = KnownLstat();
    call = &relooked;
  }
  Verdict v = capture_->Before(*call);
  // Kept by a call let run until it is seen to have ended: at its exit
  // stop (After), or, for one let run without it (learned_outcome.h), at
  // its thread's next stop of any kind (Returned), which the settle nudge
  // brings within 100 ms whatever the thread does next. Given back at the
  // moment it was let run, they would let a shim call of another thread
  // look at the name and change it before the kernel ran this one (an
  // unlink would then remove the file that call put there).
  if ((v.watch_exit || v.settle_later) && v.deny_errno == 0 && v.wait_for == 0 && !v.retry_later && !taken.empty()) {
    locks_[m.tid] = std::move(taken);
  } else {
    GiveLocks(m.tid, &taken);
  }
  return v;
}

// The tracer reports the end of its own call of `tid`. If the thread has
// made a shim call since (its CALL drained just now), that one is what
// capture waits on, and the traced call was settled when it came.
void FedSink::After(pid_t tid, long result) {
  std::lock_guard<std::mutex> lock(*mu_);
  feed_->DrainLocked();
  if (!feed_->HasOpen(tid)) capture_->After(tid, result);
  GiveLocks(tid);
}

void FedSink::Returned(pid_t tid) {
  std::lock_guard<std::mutex> lock(*mu_);
  feed_->DrainLocked();
  if (!feed_->HasOpen(tid)) capture_->Returned(tid);
  GiveLocks(tid);
}

// The thread died inside a call: whichever it is in, traced or the shim's.
void FedSink::Abandon(pid_t tid) {
  std::lock_guard<std::mutex> lock(*mu_);
  feed_->DrainLocked();
  feed_->ThreadGone(tid);
  capture_->Abandon(tid);
  GiveLocks(tid);
}

void FedSink::ForgetProcess(pid_t tid) {
  std::lock_guard<std::mutex> lock(*mu_);
  feed_->DrainLocked();
  feed_->ThreadGone(tid);
  capture_->ForgetProcess(tid);
  GiveLocks(tid);
}

long FedSink::Mark(pid_t tid, std::string_view label, bool step) {
  std::lock_guard<std::mutex> lock(*mu_);
  feed_->DrainLocked();
  return capture_->Mark(tid, label, step);
}

}  // namespace guard
