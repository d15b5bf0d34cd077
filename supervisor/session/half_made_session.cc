#include "supervisor/session/half_made_session.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "common/clock.h"
#include "common/file_io.h"
#include "common/journal_reader.h"
#include "common/session_meta.h"
#include "common/inbox_layout.h"

namespace guard {
namespace {

// From the session's own log: "root ROOT; command ARGV0" (a session) or
// "restore of ROOT recorded without a tracer" (a restore).
void RootFromLog(const std::string& dir, SessionMeta* meta) {
  std::string log;
  if (!ReadFileToString(dir + "/guard.log", &log).ok()) return;
  size_t start = 0;
  for (size_t end; (end = log.find('\n', start)) != std::string::npos; start = end + 1) {
    std::string line = log.substr(start, end - start);
    size_t r = line.find("] root ");
    size_t c = line.find("; command ");
    if (r != std::string::npos && c != std::string::npos && c > r) {
      meta->root = line.substr(r + 7, c - r - 7);
      meta->argv = {line.substr(c + 10)};
      return;
    }
    size_t restore = line.find("] restore of ");
    size_t tail = line.find(" recorded without a tracer");
    if (restore != std::string::npos && tail != std::string::npos && tail > restore) {
      meta->root = line.substr(restore + 13, tail - restore - 13);
      meta->argv = {"guard", "__restore", "(meta.json was lost)"};
      return;
    }
  }
}

// The session's inbox, if the shim was readied: its shard directories are
// empty once nothing was captured.
void RemoveEmptyInbox(const StateDir& state, const std::string& id) {
  const std::string inbox = state.session_inbox(id);
  for (unsigned shard = 0; shard < GUARD_INBOX_SHARDS; ++shard) {
    ::rmdir((inbox + "/" + guard_inbox_shard_char(shard)).c_str());
  }
  ::rmdir(inbox.c_str());
}

}  // namespace

Status MendHalfMadeSession(const StateDir& state, const std::string& id, HalfMade* what) {
  *what = HalfMade::kNot;
  const std::string dir = state.session_dir(id);
  struct stat st;
  if (::stat((dir + "/meta.json").c_str(), &st) == 0 || errno != ENOENT) return Status::Ok();
  if (::stat(dir.c_str(), &st) != 0) return Status::Ok();
  int64_t changed = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  if (WallNowNs() - changed < kHalfMadeAgeNs) return Status::Ok();  // perhaps being made now

  std::vector<Record> records;
  std::vector<std::string> problems;
  bool has_journal = ::access((dir + "/journal").c_str(), F_OK) == 0;
  if (has_journal) (void)ReadAllRecords(dir + "/journal", &records, &problems);
  if (records.empty()) {
    UniqueFd fd;
    GUARD_RETURN_IF_ERROR(OpenFile(dir, O_RDONLY | O_DIRECTORY, 0, &fd));
    std::vector<std::string> names;
    GUARD_RETURN_IF_ERROR(ReadDirNames(fd.get(), dir, &names));
    for (const std::string& name : names) {
      if (::unlinkat(fd.get(), name.c_str(), 0) != 0 && errno != ENOENT) return Status::FromErrno(dir + "/" + name, errno);
    }
    if (::rmdir(dir.c_str()) != 0 && errno != ENOENT) return Status::FromErrno(dir, errno);
    RemoveEmptyInbox(state, id);
    *what = HalfMade::kRemoved;
    return FsyncDir(state.sessions_dir());
  }

  SessionMeta meta;
  meta.id = id;
  meta.argv = {"(meta.json was lost)"};
  RootFromLog(dir, &meta);
  meta.started_ns = records.front().wall_ns;
  meta.state = SessionState::kRunning;  // no supervisor: recovery seals it
  meta.supervisor_pid = 0;
  if (meta.root.empty()) {
    // Without its root, recovery cannot read the session's end from the
    // tree: sealed as it is, its records kept for show, export and gc.
    meta.state = SessionState::kRecovered;
    meta.ended_ns = records.back().wall_ns;
    for (const Record& r : records) meta.ops += IsOperation(r.kind) ? 1 : 0;
  }
  meta.guard_version = "unknown";
  GUARD_RETURN_IF_ERROR(SaveSessionMeta(dir + "/meta.json", meta));
  *what = HalfMade::kRebuilt;
  return Status::Ok();
}

}  // namespace guard
