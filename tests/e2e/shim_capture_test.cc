// The shim's capture (interpose/linux/capture.h) inside real programs,
// without guard and without the tracer: the test makes a ring segment and a
// pending area, runs tests/programs/shim_capture_calls.c with the shim
// preloaded and guard's environment (docs/shim.md, "The capture"), then
// drains the ring and checks the CALL and OUTCOME records
// (common/shim_record.h) and the pre-images in the pending area.
#define BOOST_TEST_MODULE shim_capture
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <cstring>
#include <atomic>
#include <fstream>
#include <thread>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/blob_store.h"
#include "common/inbox_layout.h"
#include "common/ring_consumer.h"
#include "common/ring_segment.h"
#include "common/shim_interface.h"
#include "common/shim_record.h"
#include "tests/e2e/support/bind_mount.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/tmpfs_mount.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

struct Call {
  pid_t pid = 0;
  guard_shim_call fixed{};
  std::string strings[GUARD_SHIM_STR_COUNT];
  bool has_outcome = false;
  guard_shim_outcome outcome{};
  bool inline_content = false;  // the CALL carries path1's content (content)
  std::string content;

  const std::string& path1() const { return strings[GUARD_SHIM_STR_PATH1]; }
  const std::string& path2() const { return strings[GUARD_SHIM_STR_PATH2]; }
  const std::string& pending1() const { return strings[GUARD_SHIM_STR_PENDING1]; }
  const std::string& pending2() const { return strings[GUARD_SHIM_STR_PENDING2]; }
};

// A session as guard sets one up for the shim: the ring, the pending area
// inside a state directory, the root (an e2e Workspace's tree).
class ShimSession {
 public:
  ShimSession() {
    BOOST_REQUIRE(RingSegment::Create(4u << 20, &segment_).ok());  // inline pre-images up to a sixteenth
    BOOST_REQUIRE(consumer_.Attach(segment_.base(), segment_.size()).ok());
    root_ = RealPath(ws_.tree());
    // Inside the root, as when the root is the home directory that holds
    // $GUARD_HOME: what keeps the shim out of it is the state directory
    // rule, not the root's edge.
    state_ = root_ + "/.guard";
    pending_ = state_ + "/pending";
    MakeDir(state_, 0700);
    MakeDir(pending_, 0700);
    MakeShards();
  }
  // The inbox's shards (common/inbox_layout.h), as the supervisor makes
  // them; again after a file system is mounted over pending().
  void MakeShards() const {
    for (unsigned shard = 0; shard < GUARD_INBOX_SHARDS; ++shard) {
      MakeDir(pending_ + "/" + guard_inbox_shard_char(shard), 0700);
    }
  }
  ~ShimSession() {
    consumer_.Detach();
    (void)RingSegment::Remove(segment_.name());
  }

  const Workspace& ws() const { return ws_; }
  std::string Path(const std::string& rel) const { return root_ + "/" + rel; }
  // Where the shim put pre-image `name`: in its shard (common/inbox_layout.h).
  std::string Pending(const std::string& name) const { return pending_ + "/" + BlobStore::InboxPath(name); }
  const std::string& state() const { return state_; }
  const std::string& root() const { return root_; }

  const std::string& pending() const { return pending_; }
  void set_policy(const std::string& policy) { policy_ = policy; }
  void set_env(const std::string& name, const std::string& value) { env_[name] = value; }
  // The end of the last claim made in the ring (safe from another thread).
  uint64_t Claimed() const { return consumer_.ClaimedPosition(); }

  // The environment guard gives the program.
  std::map<std::string, std::string> Env() const {
    std::map<std::string, std::string> env;
    env["LD_PRELOAD"] = GUARD_SHIM_LIBRARY;
    env[GUARD_ENV_SHIM_PROTOCOL] = std::to_string(GUARD_SHIM_PROTOCOL);
    env[GUARD_ENV_SHIM_RING] = segment_.name();
    env[GUARD_ENV_SHIM_PENDING] = pending_;
    env[GUARD_ENV_SESSION] = "shimtest";
    env[GUARD_ENV_ROOT] = root_;
    env[GUARD_ENV_STATE_DIR] = state_;
    if (!policy_.empty()) env[GUARD_ENV_ON_CAPTURE_FAILURE] = policy_;
    for (const auto& [name, value] : env_) env[name] = value;
    env["ASAN_OPTIONS"] = "verify_asan_link_order=0";
    return env;
  }

  // Runs the program with `args` and requires exit 0.
  void Run(std::vector<std::string> args) {
    ProcessSpec spec;
    spec.argv = {TestProgram("shim_capture_calls")};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.cwd = root_;
    for (const auto& [name, value] : Env()) spec.env[name] = value;
    ProcessResult r = RunProcess(spec);
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "exit " << r.exit_code << "; stderr:\n" << r.err);
  }

  // The same under `strace -f -c` (the environment given to the program
  // alone, by -E): the calls it made, by name, from strace's summary.
  std::map<std::string, long> RunCounted(std::vector<std::string> args) {
    const std::string out = ws_.dir() + "/strace-summary";
    ProcessSpec spec;
    spec.argv = {"strace", "-f", "-c", "-o", out};
    for (const auto& [name, value] : Env()) {
      spec.argv.push_back("-E");
      spec.argv.push_back(name + "=" + value);
    }
    spec.argv.push_back(TestProgram("shim_capture_calls"));
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.cwd = root_;
    ProcessResult r = RunProcess(spec);
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "exit " << r.exit_code << "; stderr:\n" << r.err);
    // "% time  seconds  usecs/call  calls  [errors]  syscall" rows.
    std::map<std::string, long> calls;
    std::istringstream in(ReadFile(out));
    for (std::string line; std::getline(in, line);) {
      std::istringstream row(line);
      std::vector<std::string> cols;
      for (std::string c; row >> c;) cols.push_back(c);
      if ((cols.size() != 5 && cols.size() != 6) || cols.back() == "total" || cols.back() == "syscall") continue;
      if (cols[0].find_first_not_of("0123456789.") != std::string::npos) continue;
      calls[cols.back()] = std::stol(cols[3]);
    }
    return calls;
  }

  // Every CALL in the ring, with its OUTCOME when there is one.
  std::vector<Call> Drain() {
    std::vector<Call> calls;
    consumer_.Drain([&](const RingRecord& rec) {
      if (rec.type == GUARD_SHIM_RECORD_CALL) {
        Call c;
        c.pid = rec.pid;
        BOOST_REQUIRE_GE(rec.payload.size(), sizeof c.fixed);
        std::memcpy(&c.fixed, rec.payload.data(), sizeof c.fixed);
        size_t at = sizeof c.fixed;
        for (int i = 0; i < GUARD_SHIM_STR_COUNT; ++i) {
          BOOST_REQUIRE_LE(at + c.fixed.lengths[i], rec.payload.size());
          c.strings[i].assign(reinterpret_cast<const char*>(rec.payload.data()) + at, c.fixed.lengths[i]);
          at += c.fixed.lengths[i];
        }
        c.inline_content = (c.fixed.content & GUARD_SHIM_CONTENT_INLINE) != 0;
        if (c.inline_content) {
          c.content.assign(reinterpret_cast<const char*>(rec.payload.data()) + at, rec.payload.size() - at);
          BOOST_TEST(c.content.size() == c.fixed.before1.size);
          BOOST_TEST(c.pending1().empty());
        } else {
          BOOST_TEST(at == rec.payload.size());
        }
        calls.push_back(c);
      } else if (rec.type == GUARD_SHIM_RECORD_OUTCOME) {
        guard_shim_outcome o;
        BOOST_REQUIRE_EQUAL(rec.payload.size(), sizeof o);
        std::memcpy(&o, rec.payload.data(), sizeof o);
        bool matched = false;
        for (Call& c : calls) {
          if (c.pid == rec.pid && c.fixed.tid == o.tid && c.fixed.call_id == o.call_id && !c.has_outcome) {
            c.has_outcome = true;
            c.outcome = o;
            matched = true;
            break;
          }
        }
        BOOST_TEST(matched, "an OUTCOME without its CALL");
      }
      return true;
    });
    return calls;
  }

 private:
  Workspace ws_;
  RingSegment segment_;
  RingConsumer consumer_;
  std::string state_, pending_, root_;
  std::string policy_;
  std::map<std::string, std::string> env_;
};

// The names in the pending directory.
// The pre-images in the inbox, whatever their shard.
std::vector<std::string> PendingNames(const ShimSession& s) {
  std::vector<std::string> names;
  for (const auto& shard : std::filesystem::directory_iterator(s.pending())) {
    for (const auto& e : std::filesystem::directory_iterator(shard.path())) names.push_back(e.path().filename());
  }
  return names;
}

struct stat Lstat(const std::string& path) {
  struct stat st{};
  BOOST_REQUIRE_MESSAGE(lstat(path.c_str(), &st) == 0, path << ": " << std::strerror(errno));
  return st;
}

// Whether the CALL saved path1's content (in the record or in pending/),
// and that content.
bool HasPreImage(const Call& c) { return c.inline_content || !c.pending1().empty(); }
std::string PreImage(const ShimSession& s, const Call& c) {
  return c.inline_content ? c.content : ReadFile(s.Pending(c.pending1()));
}

// The one call of `action` on `path1`; fails the test if not exactly one.
const Call& OnlyCall(const std::vector<Call>& calls, uint32_t action, const std::string& path1) {
  const Call* found = nullptr;
  int n = 0;
  for (const Call& c : calls) {
    if (c.fixed.action == action && c.path1() == path1) {
      found = &c;
      ++n;
    }
  }
  BOOST_REQUIRE_MESSAGE(n == 1, n << " calls of action " << action << " on " << path1 << " among " << calls.size());
  return *found;
}

std::string Bytes(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 251) % 26);
  return s;
}

BOOST_AUTO_TEST_CASE(UnlinkOfAFileLinksItIntoPendingBeforeItGoes) {
  ShimSession s;
  WriteFile(s.Path("victim"), "the old content\n");
  ino_t ino = Lstat(s.Path("victim")).st_ino;
  s.Run({"unlink", "victim"});
  std::vector<Call> calls = s.Drain();
  const Call& c = OnlyCall(calls, GUARD_SHIM_UNLINK, s.Path("victim"));
  BOOST_TEST(c.fixed.before1.err == 0);
  BOOST_TEST(S_ISREG(c.fixed.before1.mode));
  BOOST_TEST(c.fixed.before1.ino == ino);
  BOOST_TEST(c.fixed.before1.nlink == 1u);
  BOOST_REQUIRE(!c.pending1().empty());
  BOOST_TEST(c.pending1().rfind("shimtest-s", 0) == 0, c.pending1());
  BOOST_TEST(c.pending1().find('/') == std::string::npos);
  BOOST_TEST(ReadFile(s.Pending(c.pending1())) == "the old content\n");
  BOOST_TEST(Lstat(s.Pending(c.pending1())).st_ino == ino);
  BOOST_REQUIRE(c.has_outcome);
  BOOST_TEST(c.outcome.err == 0);
  BOOST_TEST(c.outcome.result == 0);
  BOOST_TEST(c.outcome.after.err == ENOENT);
  BOOST_TEST(!PathExists(s.Path("victim")));
}

// What the shim adds to a delete as rm -rf makes it (unlinkat by a dirfd it
// holds), call by call: the runs of 100 and 200 deletes differ by 100 of
// each. Per file: the parent's name (readlink of the dirfd's /proc link),
// one look at the name that also says its mount (statx: the place test
// needs no second one), the lease check (openat, fcntl F_SETSIG, fcntl
// F_SETLEASE, close: a writer holding the file open keeps it from being
// linked), the link into the inbox, and the host's unlinkat. No getpid:
// the pid is kept (interpose/shim_process.h). No lstat, no other call.
BOOST_AUTO_TEST_CASE(ADeleteByDirfdCostsSevenCallsBesidesItsOwn) {
  if (!PathExists("/usr/bin/strace") && !PathExists("/bin/strace")) {
    BOOST_TEST_MESSAGE("no strace here: nothing to count with");
    return;
  }
  ShimSession s;
  MakeDir(s.Path("d"), 0755);
  auto counted = [&](int n) {
    for (int i = 0; i < n; ++i) WriteFile(s.Path("d/f" + std::to_string(i)), "x");
    return s.RunCounted({"unlinkat-n", "d", std::to_string(n)});
  };
  std::map<std::string, long> few = counted(100);
  std::map<std::string, long> more = counted(200);
  std::map<std::string, long> per_file;
  for (const auto& [name, n] : more) {
    // The ring's give-back (docs/ring.md): one madvise per 64 KiB of
    // records, wherever the two runs' records fall.
    if (name == "madvise") continue;
    long d = n - (few.count(name) ? few.at(name) : 0);
    if (d != 0) per_file[name] = d;
  }
  const std::map<std::string, long> expected = {{"readlink", 100}, {"statx", 100}, {"openat", 100},
                                                {"fcntl", 200},    {"close", 100}, {"linkat", 100},
                                                {"unlinkat", 100}};
  std::ostringstream got;
  for (const auto& [name, d] : per_file) got << name << " " << d << "; ";
  BOOST_TEST((per_file == expected), "per 100 deletes: " << got.str());
}

BOOST_AUTO_TEST_CASE(FailedUnlinkHasItsErrnoInTheOutcomeAndInTheProgram) {
  ShimSession s;
  s.Run({"unlink-missing", "nothing-here"});  // the program checks errno == ENOENT
  std::vector<Call> calls = s.Drain();
  const Call& c = OnlyCall(calls, GUARD_SHIM_UNLINK, s.Path("nothing-here"));
  BOOST_TEST(c.fixed.before1.err == ENOENT);
  BOOST_TEST(c.pending1().empty());
  BOOST_REQUIRE(c.has_outcome);
  BOOST_TEST(c.outcome.err == ENOENT);
  BOOST_TEST(c.outcome.result == -1);
  BOOST_TEST(c.outcome.after.err == -1);
}

BOOST_AUTO_TEST_CASE(OpenWithTruncCopiesTheOldContentIntoPending) {
  ShimSession s;
  const std::string old = Bytes(GUARD_SHIM_INLINE_MAX + 100 * 1024);  // larger than an inline pre-image
  WriteFile(s.Path("big"), old);
  ino_t ino = Lstat(s.Path("big")).st_ino;
  s.Run({"trunc", "big"});
  std::vector<Call> calls = s.Drain();
  const Call& c = OnlyCall(calls, GUARD_SHIM_OPEN, s.Path("big"));
  BOOST_TEST((c.fixed.flags & O_TRUNC) != 0u);
  BOOST_TEST(c.fixed.before1.size == old.size());
  BOOST_REQUIRE(!c.pending1().empty());
  BOOST_TEST(ReadFile(s.Pending(c.pending1())) == old);  // byte for byte
  BOOST_TEST(Lstat(s.Pending(c.pending1())).st_ino != ino);  // a copy, not a link
  BOOST_REQUIRE(c.has_outcome);
  BOOST_TEST(c.outcome.err == 0);
  BOOST_TEST(c.outcome.result >= 0);
  BOOST_TEST(c.outcome.after.ino == ino);
  BOOST_TEST(c.outcome.after.size == 0u);  // the fstat right after the open
  BOOST_TEST(ReadFile(s.Path("big")) == "new\n");
  BOOST_TEST(calls.size() == 1u);  // the writes after it are on a captured fd
}

// A small file's content goes inside the CALL (docs/ring.md, "Inline
// pre-images"): nothing in pending/, the bytes in the record, as many as the
// lstat said; an empty file too. One byte more than the limit goes by copy.
BOOST_AUTO_TEST_CASE(OpenWithTruncOfASmallFileCarriesItsContentInTheCall) {
  ShimSession s;
  const std::string at_limit = Bytes(GUARD_SHIM_INLINE_MAX);
  WriteFile(s.Path("small"), "small old content\n");
  WriteFile(s.Path("empty"), "");
  WriteFile(s.Path("limit"), at_limit);
  WriteFile(s.Path("over"), at_limit + "x");
  for (const char* f : {"small", "empty", "limit", "over"}) s.Run({"trunc", f});
  std::vector<Call> calls = s.Drain();
  BOOST_REQUIRE_EQUAL(calls.size(), 4u);
  const Call& small = OnlyCall(calls, GUARD_SHIM_OPEN, s.Path("small"));
  BOOST_TEST(small.inline_content);
  BOOST_TEST(small.content == "small old content\n");
  const Call& empty = OnlyCall(calls, GUARD_SHIM_OPEN, s.Path("empty"));
  BOOST_TEST(empty.inline_content);
  BOOST_TEST(empty.content.empty());
  const Call& limit = OnlyCall(calls, GUARD_SHIM_OPEN, s.Path("limit"));
  BOOST_TEST(limit.inline_content);
  BOOST_TEST((limit.content == at_limit));
  const Call& over = OnlyCall(calls, GUARD_SHIM_OPEN, s.Path("over"));
  BOOST_TEST(!over.inline_content);
  BOOST_REQUIRE(!over.pending1().empty());
  BOOST_TEST((ReadFile(s.Pending(over.pending1())) == at_limit + "x"));
  BOOST_TEST(PendingNames(s).size() == 1u);  // the copy of "over" alone
  for (const Call& c : calls) {
    BOOST_TEST(c.has_outcome);
    BOOST_TEST(c.outcome.err == 0);
  }
  for (const char* f : {"small", "empty", "limit", "over"}) BOOST_TEST(ReadFile(s.Path(f)) == "new\n");
}

// A file that another process grows between the shim's lstat and its read
// into the ring (here while the put sleeps between its claim and its fill,
// GUARD_SHIM_TEST_SLOW_PUT) is not taken for its first bytes: the claim
// becomes padding and the content goes to pending/ as a copy of what the
// file holds then, which the CALL names.
BOOST_AUTO_TEST_CASE(ASmallFileThatGrowsBeforeItsReadIsCopiedInstead) {
  ShimSession s;
  WriteFile(s.Path("growing"), "before\n");
  s.set_env("GUARD_SHIM_TEST_SLOW_PUT", "1500");
  std::atomic<bool> appended{false};
  std::thread writer([&] {
    // The CALL's claim is the first put of the process: once the tail moved,
    // the put sleeps before it reads the file.
    for (int i = 0; i < 60000 && s.Claimed() == 0; ++i) ::usleep(1000);
    if (s.Claimed() == 0) return;
    std::ofstream(s.Path("growing"), std::ios::app) << "appended\n";
    appended = true;
  });
  s.Run({"trunc", "growing"});
  writer.join();
  BOOST_REQUIRE(appended.load());
  std::vector<Call> calls = s.Drain();
  const Call& c = OnlyCall(calls, GUARD_SHIM_OPEN, s.Path("growing"));
  BOOST_TEST(!c.inline_content);
  BOOST_REQUIRE(!c.pending1().empty());
  BOOST_TEST(ReadFile(s.Pending(c.pending1())) == "before\nappended\n");
  BOOST_TEST(c.has_outcome);
  BOOST_TEST(ReadFile(s.Path("growing")) == "new\n");
}

BOOST_AUTO_TEST_CASE(OpenForWritingIsCapturedAtItsFirstWriteOnly) {
  ShimSession s;
  WriteFile(s.Path("lazy"), "0123456789\n");
  s.Run({"rdwr-write", "lazy"});
  std::vector<Call> calls = s.Drain();
  BOOST_REQUIRE_EQUAL(calls.size(), 1u);  // nothing at the open, one at the first of two writes
  const Call& c = OnlyCall(calls, GUARD_SHIM_FTRUNCATE, s.Path("lazy"));
  BOOST_TEST(c.fixed.before1.size == 11u);
  BOOST_REQUIRE(HasPreImage(c));
  BOOST_TEST(PreImage(s, c) == "0123456789\n");
  BOOST_REQUIRE(c.has_outcome);
  BOOST_TEST(c.outcome.err == 0);
  BOOST_TEST(c.outcome.result == 0);
  BOOST_TEST(c.outcome.after.err == 0);
  BOOST_TEST(ReadFile(s.Path("lazy")) == "XYZ3456789\n");
}

BOOST_AUTO_TEST_CASE(OpenForWritingThatNeverWritesIsNotCaptured) {
  ShimSession s;
  WriteFile(s.Path("untouched"), "same\n");
  s.Run({"rdwr-nowrite", "untouched"});
  BOOST_TEST(s.Drain().empty());
  // The same session does capture: a call after it is in the ring.
  WriteFile(s.Path("control"), "c\n");
  s.Run({"unlink", "control"});
  std::vector<Call> calls = s.Drain();
  BOOST_REQUIRE_EQUAL(calls.size(), 1u);
  BOOST_TEST(calls[0].path1() == s.Path("control"));
}

BOOST_AUTO_TEST_CASE(RenameOverAFileLinksTheDestinationIntoPending) {
  ShimSession s;
  WriteFile(s.Path("from"), "new\n");
  WriteFile(s.Path("to"), "replaced\n");
  ino_t to_ino = Lstat(s.Path("to")).st_ino;
  ino_t from_ino = Lstat(s.Path("from")).st_ino;
  s.Run({"rename", "from", "to"});
  std::vector<Call> calls = s.Drain();
  const Call& c = OnlyCall(calls, GUARD_SHIM_RENAME, s.Path("from"));
  BOOST_TEST(c.path2() == s.Path("to"));
  BOOST_TEST(c.fixed.before1.ino == from_ino);
  BOOST_TEST(c.fixed.before2.ino == to_ino);
  BOOST_TEST(c.pending1().empty());
  BOOST_REQUIRE(!c.pending2().empty());
  BOOST_TEST(ReadFile(s.Pending(c.pending2())) == "replaced\n");
  BOOST_TEST(Lstat(s.Pending(c.pending2())).st_ino == to_ino);
  BOOST_REQUIRE(c.has_outcome);
  BOOST_TEST(c.outcome.err == 0);
  BOOST_TEST(c.outcome.after.ino == from_ino);  // the lstat of path2 after the call
}

BOOST_AUTO_TEST_CASE(MkdirSymlinkAndChmodAreRecordsAlone) {
  ShimSession s;
  s.Run({"mkdir-symlink-chmod", "dir", "link"});
  std::vector<Call> calls = s.Drain();
  BOOST_REQUIRE_EQUAL(calls.size(), 3u);
  const Call& mk = OnlyCall(calls, GUARD_SHIM_MKDIR, s.Path("dir"));
  BOOST_TEST(mk.fixed.mode == 0750u);
  BOOST_TEST(mk.fixed.before1.err == ENOENT);
  BOOST_REQUIRE(mk.has_outcome);
  BOOST_TEST(S_ISDIR(mk.outcome.after.mode));
  const Call& sl = OnlyCall(calls, GUARD_SHIM_SYMLINK, s.Path("link"));
  BOOST_TEST(sl.strings[GUARD_SHIM_STR_TARGET] == "target");
  BOOST_REQUIRE(sl.has_outcome);
  BOOST_TEST(S_ISLNK(sl.outcome.after.mode));
  const Call& ch = OnlyCall(calls, GUARD_SHIM_CHMOD, s.Path("dir"));
  BOOST_TEST(ch.fixed.mode == 0700u);
  BOOST_TEST((ch.fixed.before1.mode & 07777) == 0750u);
  BOOST_REQUIRE(ch.has_outcome);
  BOOST_TEST((ch.outcome.after.mode & 07777) == 0700u);
  for (const Call& c : calls) BOOST_TEST(c.pending1().empty());
}

BOOST_AUTO_TEST_CASE(PathUnderTheStateDirectoryIsLeftToTheTracer) {
  ShimSession s;
  WriteFile(s.state() + "/guarded", "state\n");
  WriteFile(s.Path("control"), "c\n");
  s.Run({"unlink", s.state() + "/guarded", "control"});
  // The state directory's file fell back (the real function: no record, no
  // pre-image); the root's, in the same run, did not.
  std::vector<Call> calls = s.Drain();
  BOOST_REQUIRE_EQUAL(calls.size(), 1u);
  BOOST_TEST(calls[0].path1() == s.Path("control"));
  BOOST_TEST(!PathExists(s.state() + "/guarded"));
}

BOOST_AUTO_TEST_CASE(ForkedParentAndChildEachCaptureTheirUnlink) {
  ShimSession s;
  WriteFile(s.Path("parents"), "p\n");
  WriteFile(s.Path("childs"), "c\n");
  s.Run({"fork-unlink", "parents", "childs"});
  std::vector<Call> calls = s.Drain();
  const Call& p = OnlyCall(calls, GUARD_SHIM_UNLINK, s.Path("parents"));
  const Call& c = OnlyCall(calls, GUARD_SHIM_UNLINK, s.Path("childs"));
  BOOST_TEST(p.pid != c.pid);
  BOOST_TEST(p.pending1() != c.pending1());
  BOOST_TEST(ReadFile(s.Pending(p.pending1())) == "p\n");
  BOOST_TEST(ReadFile(s.Pending(c.pending1())) == "c\n");
  BOOST_TEST(p.has_outcome);
  BOOST_TEST(c.has_outcome);
}

BOOST_AUTO_TEST_CASE(VforkChildThatUnlinksBeforeExecIsCaptured) {
  ShimSession s;
  WriteFile(s.Path("vforked"), "v\n");
  s.Run({"vfork-unlink", "vforked"});
  std::vector<Call> calls = s.Drain();
  const Call& c = OnlyCall(calls, GUARD_SHIM_UNLINK, s.Path("vforked"));
  BOOST_REQUIRE(!c.pending1().empty());
  BOOST_TEST(ReadFile(s.Pending(c.pending1())) == "v\n");
  BOOST_REQUIRE(c.has_outcome);
  BOOST_TEST(c.outcome.err == 0);
}

// That the session's shim does capture (what a test that expects no record
// needs to know): records alone, which need no room in the pending area.
void RequireCapturing(ShimSession& s) {
  s.Run({"mkdir-symlink-chmod", "control-dir", "control-link"});
  BOOST_TEST(s.Drain().size() == 3u);
}

// A pending area too small for the pre-image: a 64 KiB tmpfs for a file of
// 200 KiB.
#define REQUIRE_TMPFS()                                                  \
  do {                                                                   \
    std::string why_;                                                    \
    if (!CanMountTmpfs(&why_)) {                                         \
      BOOST_TEST_MESSAGE("skipped: " << why_);                           \
      return;                                                            \
    }                                                                    \
  } while (0)

BOOST_AUTO_TEST_CASE(FirstWriteWhoseCaptureFailsIsBlockedWithENOSPC) {
  REQUIRE_TMPFS();
  ShimSession s;
  TmpfsMount small(s.pending(), 64 * 1024);
  s.MakeShards();
  const std::string old = Bytes(GUARD_SHIM_INLINE_MAX + 200 * 1024);
  WriteFile(s.Path("big"), old);
  s.Run({"rdwr-write-blocked", "big"});  // the program checks ENOSPC, twice
  BOOST_TEST(s.Drain().empty());
  BOOST_TEST(ReadFile(s.Path("big")) == old);  // nothing ran
  BOOST_TEST(PendingNames(s).empty());         // the partial copy removed
}

BOOST_AUTO_TEST_CASE(FirstWriteWhoseCaptureFailsRunsUnrecordedUnderAllow) {
  REQUIRE_TMPFS();
  ShimSession s;
  s.set_policy("allow");
  TmpfsMount small(s.pending(), 64 * 1024);
  s.MakeShards();
  WriteFile(s.Path("big"), Bytes(GUARD_SHIM_INLINE_MAX + 200 * 1024));
  s.Run({"rdwr-write", "big"});  // the program checks that both writes succeed
  BOOST_TEST(s.Drain().empty());
  BOOST_TEST(ReadFile(s.Path("big")).substr(0, 3) == "XYZ");
  BOOST_TEST(PendingNames(s).empty());
  RequireCapturing(s);
}

BOOST_AUTO_TEST_CASE(OpenWithTruncWhoseCopyFailsFallsBackToTheTracer) {
  REQUIRE_TMPFS();
  ShimSession s;
  TmpfsMount small(s.pending(), 64 * 1024);
  s.MakeShards();
  WriteFile(s.Path("big"), Bytes(GUARD_SHIM_INLINE_MAX + 200 * 1024));
  s.Run({"trunc", "big"});  // through the real function: the tracer would capture it
  BOOST_TEST(s.Drain().empty());
  BOOST_TEST(ReadFile(s.Path("big")) == "new\n");
  BOOST_TEST(PendingNames(s).empty());
  RequireCapturing(s);
}

// ---------------------------------------------------------------------------
// stdio and the mkstemp family: glibc opens them through its internal
// __open, which no preload reaches; the shim opens them itself (a CALL in
// the ring, the call made from the stub). A stream's writes are glibc's
// internal __write, unseen: its content is captured at the open.

// The one OPEN record of `path`, checked for a capture that succeeded.
const Call& OpenOf(const std::vector<Call>& calls, const std::string& path, uint64_t flags) {
  const Call& c = OnlyCall(calls, GUARD_SHIM_OPEN, path);
  BOOST_TEST((c.fixed.flags & (O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND | O_EXCL)) == flags);
  BOOST_TEST(c.has_outcome);
  return c;
}

BOOST_AUTO_TEST_CASE(FopenForWritingCopiesTheOldContentBeforeItTruncates) {
  ShimSession s;
  const std::string old = Bytes(50 * 1024);
  WriteFile(s.Path("w.txt"), old);
  s.Run({"fopen", "w.txt", "w"});
  std::vector<Call> calls = s.Drain();
  BOOST_TEST(calls.size() == 1u);
  const Call& c = OpenOf(calls, s.Path("w.txt"), O_WRONLY | O_CREAT | O_TRUNC);
  BOOST_TEST(c.fixed.mode == 0666u);
  BOOST_REQUIRE(HasPreImage(c));
  BOOST_TEST(PreImage(s, c) == old);
  BOOST_TEST(c.outcome.err == 0);
  BOOST_TEST(c.outcome.after.size == 0u);
  BOOST_TEST(ReadFile(s.Path("w.txt")) == "new\n");
}

BOOST_AUTO_TEST_CASE(FopenForAppendingCapturesAtTheOpenSinceItsWritesAreUnseen) {
  ShimSession s;
  WriteFile(s.Path("log"), "first\n");
  s.Run({"fopen-append-ftell", "log"});
  std::vector<Call> calls = s.Drain();
  BOOST_TEST(calls.size() == 1u);  // no first-write capture: fwrite's write is glibc's own
  const Call& c = OpenOf(calls, s.Path("log"), O_WRONLY | O_CREAT | O_APPEND);
  BOOST_REQUIRE(HasPreImage(c));
  BOOST_TEST(PreImage(s, c) == "first\n");
  BOOST_TEST(ReadFile(s.Path("log")) == "first\nmore\n");
}

BOOST_AUTO_TEST_CASE(FopenReadWriteCapturesAtTheOpen) {
  ShimSession s;
  WriteFile(s.Path("rw"), "0123456789\n");
  s.Run({"fopen", "rw", "r+"});
  std::vector<Call> calls = s.Drain();
  BOOST_TEST(calls.size() == 1u);
  const Call& c = OpenOf(calls, s.Path("rw"), O_RDWR);
  BOOST_REQUIRE(HasPreImage(c));
  BOOST_TEST(PreImage(s, c) == "0123456789\n");
  BOOST_TEST(ReadFile(s.Path("rw")) == "new\n456789\n");
}

BOOST_AUTO_TEST_CASE(FopenOfANewFileIsARecordAlone) {
  ShimSession s;
  s.Run({"fopen", "fresh", "a+"});
  std::vector<Call> calls = s.Drain();
  const Call& c = OpenOf(calls, s.Path("fresh"), O_RDWR | O_CREAT | O_APPEND);
  BOOST_TEST(c.fixed.before1.err == ENOENT);
  BOOST_TEST(c.pending1().empty());
  BOOST_TEST(S_ISREG(c.outcome.after.mode));
  BOOST_TEST(ReadFile(s.Path("fresh")) == "new\n");
}

BOOST_AUTO_TEST_CASE(FopenExclusiveOfAnExistingFileFailsWithoutPreImage) {
  ShimSession s;
  WriteFile(s.Path("there"), "kept\n");
  s.Run({"fopen-excl-existing", "there"});  // the program checks EEXIST
  std::vector<Call> calls = s.Drain();
  const Call& c = OpenOf(calls, s.Path("there"), O_WRONLY | O_CREAT | O_TRUNC | O_EXCL);
  BOOST_TEST(c.pending1().empty());
  BOOST_TEST(c.outcome.result == -1);
  BOOST_TEST(c.outcome.err == EEXIST);
  BOOST_TEST(PendingNames(s).empty());
  BOOST_TEST(ReadFile(s.Path("there")) == "kept\n");
}

BOOST_AUTO_TEST_CASE(FopenForReadingLeavesNoRecord) {
  ShimSession s;
  WriteFile(s.Path("read"), "r\n");
  s.Run({"fopen-read", "read"});
  BOOST_TEST(s.Drain().empty());
  RequireCapturing(s);
}

BOOST_AUTO_TEST_CASE(FreopenKeepsTheStreamAndCapturesTheNewFile) {
  ShimSession s;
  WriteFile(s.Path("from"), "from\n");
  WriteFile(s.Path("to-w"), "old w\n");
  WriteFile(s.Path("to-a"), "old a\n");
  s.Run({"freopen", "from", "to-w", "w"});  // the program checks the FILE* and its fd number
  s.Run({"freopen", "from", "to-a", "a"});
  std::vector<Call> calls = s.Drain();
  BOOST_TEST(calls.size() == 2u);
  const Call& w = OpenOf(calls, s.Path("to-w"), O_WRONLY | O_CREAT | O_TRUNC);
  const Call& a = OpenOf(calls, s.Path("to-a"), O_WRONLY | O_CREAT | O_APPEND);
  BOOST_REQUIRE(HasPreImage(w));
  BOOST_REQUIRE(HasPreImage(a));
  BOOST_TEST(PreImage(s, w) == "old w\n");
  BOOST_TEST(PreImage(s, a) == "old a\n");
  BOOST_TEST(ReadFile(s.Path("to-w")) == "new\n");
  BOOST_TEST(ReadFile(s.Path("to-a")) == "old a\nnew\n");
  BOOST_TEST(ReadFile(s.Path("from")) == "from\n");
}

BOOST_AUTO_TEST_CASE(FreopenOfStdoutIntoItsClosedNumberWritesTheNewFile) {
  ShimSession s;
  WriteFile(s.Path("out"), "old out\n");
  s.Run({"freopen-stdout", "out"});  // the program checks stdout's fd is 1 again
  std::vector<Call> calls = s.Drain();
  const Call& c = OpenOf(calls, s.Path("out"), O_WRONLY | O_CREAT | O_TRUNC);
  BOOST_REQUIRE(HasPreImage(c));
  BOOST_TEST(PreImage(s, c) == "old out\n");
  BOOST_TEST(ReadFile(s.Path("out")) == "new\n");
}

// An fd the host opened for writing waits for its first write to be
// captured; through a stream or dprintf that write is glibc's own, which
// the shim never sees, so the capture is made when the stream is made or
// dprintf is called.
BOOST_AUTO_TEST_CASE(AStreamOrDprintfOnAnFdOpenedForWritingCapturesItFirst) {
  ShimSession s;
  WriteFile(s.Path("streamed"), "0123456789\n");
  WriteFile(s.Path("printed"), "first\n");
  s.Run({"fdopen-write", "streamed"});
  s.Run({"dprintf-write", "printed"});
  std::vector<Call> calls = s.Drain();
  BOOST_TEST(calls.size() == 2u);
  const Call& f = OnlyCall(calls, GUARD_SHIM_FTRUNCATE, s.Path("streamed"));
  const Call& d = OnlyCall(calls, GUARD_SHIM_FTRUNCATE, s.Path("printed"));
  BOOST_REQUIRE(HasPreImage(f));
  BOOST_REQUIRE(HasPreImage(d));
  BOOST_TEST(PreImage(s, f) == "0123456789\n");
  BOOST_TEST(PreImage(s, d) == "first\n");
  BOOST_TEST(ReadFile(s.Path("streamed")) == "XY23456789\n");
  BOOST_TEST(ReadFile(s.Path("printed")) == "first\nmore\n");
}

BOOST_AUTO_TEST_CASE(MkstempFamilyCreatesItsFilesWithARecordAlone) {
  ShimSession s;
  MakeDir(s.Path("t"));
  s.Run({"mkstemp-all", "t"});  // the program checks names, modes, emptiness
  std::vector<Call> calls = s.Drain();
  BOOST_REQUIRE_EQUAL(calls.size(), 8u);
  for (const Call& c : calls) {
    BOOST_TEST(c.fixed.action == GUARD_SHIM_OPEN);
    BOOST_TEST(c.path1().rfind(s.Path("t/tmp"), 0) == 0, c.path1());
    BOOST_TEST((c.fixed.flags & (O_ACCMODE | O_CREAT | O_EXCL)) == uint64_t{O_RDWR | O_CREAT | O_EXCL});
    BOOST_TEST(c.fixed.mode == 0600u);
    BOOST_TEST(c.fixed.before1.err == ENOENT);
    BOOST_TEST(c.pending1().empty());
    BOOST_REQUIRE(c.has_outcome);
    BOOST_TEST(c.outcome.err == 0);
    BOOST_TEST(S_ISREG(c.outcome.after.mode));
    BOOST_TEST(ReadFile(c.path1()) == "t\n");
  }
  // The mkostemp flags are the open's.
  int with_cloexec = 0, with_append = 0;
  for (const Call& c : calls) {
    with_cloexec += (c.fixed.flags & O_CLOEXEC) != 0;
    with_append += (c.fixed.flags & O_APPEND) != 0;
  }
  BOOST_TEST(with_cloexec == 2);
  BOOST_TEST(with_append == 1);
}

BOOST_AUTO_TEST_CASE(MkdtempMakesItsDirectoryWithARecordAlone) {
  ShimSession s;
  MakeDir(s.Path("t"));
  s.Run({"mkdtemp", "t"});  // the program checks the name and the mode
  std::vector<Call> calls = s.Drain();
  BOOST_REQUIRE_EQUAL(calls.size(), 1u);
  const Call& c = calls[0];
  BOOST_TEST(c.fixed.action == GUARD_SHIM_MKDIR);
  BOOST_TEST(c.path1().rfind(s.Path("t/dir"), 0) == 0, c.path1());
  BOOST_TEST(c.fixed.mode == 0700u);
  BOOST_TEST(c.fixed.before1.err == ENOENT);
  BOOST_REQUIRE(c.has_outcome);
  BOOST_TEST(c.outcome.err == 0);
  BOOST_TEST(S_ISDIR(c.outcome.after.mode));
}

// Parity with glibc (it passes with glibc's own too): EINVAL, the template
// untouched, no open.
BOOST_AUTO_TEST_CASE(MkstempOfABadTemplateFailsWithEINVALAndTouchesNothing) {
  ShimSession s;
  s.Run({"mkstemp-bad", "unused"});
  BOOST_TEST(s.Drain().empty());
  RequireCapturing(s);
}

// ---------------------------------------------------------------------------
// Outside the root: a record by name, no pre-image. On a file system of its
// own (a tmpfs), since a path outside the root on the root's device may be
// another name of the root (a bind mount), which the shim leaves to the
// tracer (the next tests).

BOOST_AUTO_TEST_CASE(CallsOutsideTheRootAreRecordedByNameWithoutPreImage) {
  REQUIRE_TMPFS();
  ShimSession s;
  const std::string out = s.ws().outside() + "/other";
  MakeDir(out);
  TmpfsMount other(out, 1 << 20);
  WriteFile(out + "/gone", "deleted outside\n");
  WriteFile(out + "/cut", "truncated outside\n");
  WriteFile(out + "/from", "moved\n");
  WriteFile(out + "/to", "replaced outside\n");
  s.Run({"unlink", out + "/gone"});
  s.Run({"trunc", out + "/cut"});
  s.Run({"rename", out + "/from", out + "/to"});
  s.Run({"mkdir", out + "/dir"});
  std::vector<Call> calls = s.Drain();
  BOOST_TEST(calls.size() == 4u);
  const Call& unlink = OnlyCall(calls, GUARD_SHIM_UNLINK, out + "/gone");
  const Call& trunc = OnlyCall(calls, GUARD_SHIM_OPEN, out + "/cut");
  const Call& rename = OnlyCall(calls, GUARD_SHIM_RENAME, out + "/from");
  const Call& mkdir = OnlyCall(calls, GUARD_SHIM_MKDIR, out + "/dir");
  BOOST_TEST(rename.path2() == out + "/to");
  BOOST_TEST(S_ISREG(unlink.fixed.before1.mode));  // the lstats, as inside the root
  BOOST_TEST(trunc.fixed.before1.size == 18u);
  BOOST_TEST(S_ISREG(rename.fixed.before2.mode));
  BOOST_TEST(mkdir.fixed.before1.err == ENOENT);
  for (const Call* c : {&unlink, &trunc, &rename, &mkdir}) {
    BOOST_TEST(c->pending1().empty());
    BOOST_TEST(c->pending2().empty());
    BOOST_TEST(c->strings[GUARD_SHIM_STR_OLD_TARGET1].empty());
    BOOST_REQUIRE(c->has_outcome);
    BOOST_TEST(c->outcome.err == 0);
  }
  BOOST_TEST(PendingNames(s).empty());  // no link, no copy
  BOOST_TEST(ReadFile(out + "/cut") == "new\n");
}

// A rename across the root's edge needs what leaves kept (a copy) or walks
// a tree: the tracer's, whatever moves. (Between file systems it fails with
// EXDEV anyway; across the edge on one file system the far side shares the
// root's device, which the test below leaves to the tracer as well.)
BOOST_AUTO_TEST_CASE(RenameAcrossTheRootsEdgeIsLeftToTheTracer) {
  REQUIRE_TMPFS();
  ShimSession s;
  const std::string out = s.ws().outside() + "/other";
  MakeDir(out);
  TmpfsMount other(out, 1 << 20);
  WriteFile(s.Path("leaving"), "l\n");
  WriteFile(out + "/arriving", "a\n");
  s.Run({"rename-exdev", "leaving", out + "/left"});
  s.Run({"rename-exdev", out + "/arriving", "arrived"});
  BOOST_TEST(s.Drain().empty());
  RequireCapturing(s);
}

// The root, or the state directory, by another name: a bind mount keeps
// their device, on a mount of its own. The shim cannot tell which name it
// is (the tracer can: supervisor/trace/tree_anchors.h), so it leaves the
// call to the tracer: no record, no pre-image (and through a bind mount of
// the state directory, the tracer refuses the change).
BOOST_AUTO_TEST_CASE(PathsThroughABindMountOfTheRootAreLeftToTheTracer) {
  REQUIRE_TMPFS();
  ShimSession s;
  const std::string alias = s.ws().outside() + "/alias";
  MakeDir(alias);
  BindMount bind(s.root(), alias);
  WriteFile(s.Path("victim"), "v\n");
  s.Run({"unlink", alias + "/victim"});
  s.Run({"mkdir", alias + "/dir"});
  BOOST_TEST(s.Drain().empty());
  BOOST_TEST(PendingNames(s).empty());
  BOOST_TEST(!PathExists(s.Path("victim")));
  RequireCapturing(s);
}

BOOST_AUTO_TEST_CASE(PathInsideTheRootOnAnotherMountIsLeftToTheTracer) {
  REQUIRE_TMPFS();
  ShimSession s;
  MakeDir(s.Path("mnt"));
  TmpfsMount inner(s.Path("mnt"), 1 << 20);
  s.Run({"mkdir", "mnt/dir"});
  BOOST_TEST(s.Drain().empty());
  BOOST_TEST(PathExists(s.Path("mnt/dir")));
  RequireCapturing(s);
}

// A file someone has open for writing is not linked into pending: the
// writer could change the pre-image through its fd after the call. The
// tracer copies it instead.
BOOST_AUTO_TEST_CASE(UnlinkOrRenameOverAFileSomeoneWritesIsLeftToTheTracer) {
  ShimSession s;
  WriteFile(s.Path("held"), "held open\n");
  WriteFile(s.Path("target"), "held open too\n");
  WriteFile(s.Path("replacement"), "r\n");
  int held = open(s.Path("held").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  int target = open(s.Path("target").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  BOOST_REQUIRE(held >= 0 && target >= 0);
  s.Run({"unlink", "held"});
  s.Run({"rename", "replacement", "target"});
  close(held);
  close(target);
  BOOST_TEST(s.Drain().empty());
  BOOST_TEST(PendingNames(s).empty());
  // Nobody writes it any more: linked as before.
  WriteFile(s.Path("free"), "f\n");
  s.Run({"unlink", "free"});
  std::vector<Call> calls = s.Drain();
  BOOST_REQUIRE_EQUAL(calls.size(), 1u);
  BOOST_TEST(!calls[0].pending1().empty());
}

// The record's program: the process's name (the supervisor drains the ring
// after short-lived programs are gone), as prctl(PR_SET_NAME) left it.
BOOST_AUTO_TEST_CASE(RecordsNameTheProgramAsTheKernelDoes) {
  ShimSession s;
  for (const char* f : {"a", "b", "c", "d"}) WriteFile(s.Path(f), "x\n");
  s.Run({"unlink", "a"});
  s.Run({"named-unlink", "renamed-self", "b"});
  s.Run({"thread-named-unlink", "worker", "c", "d"});
  std::vector<Call> calls = s.Drain();
  auto comm = [&](const char* f) { return OnlyCall(calls, GUARD_SHIM_UNLINK, s.Path(f)).strings[GUARD_SHIM_STR_COMM]; };
  BOOST_TEST(comm("a") == "shim_capture_ca");  // the kernel keeps 15 bytes
  BOOST_TEST(comm("b") == "renamed-self");
  BOOST_TEST(comm("c") == "worker");
  BOOST_TEST(comm("d") == "shim_capture_ca");  // the main thread kept its name
}

}  // namespace
}  // namespace guard::e2e
