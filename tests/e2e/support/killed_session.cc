#include "tests/e2e/support/killed_session.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "common/blob_key.h"
#include "common/journal_reader.h"
#include "common/session_meta.h"
#include "common/unique_fd.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/process_tree.h"

namespace guard::e2e {
namespace {

void SleepMs(int ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

bool WaitFor(const std::function<bool()>& cond, int timeout_ms, int every_ms = 10) {
  for (int waited = 0; waited < timeout_ms; waited += every_ms) {
    if (cond()) return true;
    SleepMs(every_ms);
  }
  return cond();
}

long PeakKib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

}  // namespace

std::map<std::string, std::optional<std::string>> GitTestEnv(const Workspace& ws) {
  return {{"HOME", ws.outside()},          {"GIT_CONFIG_NOSYSTEM", "1"},
          {"GIT_AUTHOR_NAME", "e2e"},      {"GIT_AUTHOR_EMAIL", "e2e@example.com"},
          {"GIT_COMMITTER_NAME", "e2e"},   {"GIT_COMMITTER_EMAIL", "e2e@example.com"}};
}

void RunInTree(const Workspace& ws, const std::string& script) {
  ProcessSpec spec;
  spec.argv = {"bash", "-ec", script};
  spec.cwd = ws.tree();
  spec.env = GitTestEnv(ws);
  ProcessResult r = RunProcess(spec);
  if (r.exit_code != 0) throw std::runtime_error("in the tree: " + script + ": " + r.out + r.err);
}

KilledSession RunAndKillGuard(const Workspace& ws, const KillWhen& when) {
  GuardRun run;
  run.command = {"bash", "-c", when.script};
  run.env = GitTestEnv(ws);
  for (const auto& [k, v] : when.env) run.env[k] = v;
  run.timeout_seconds = 300;
  ChildProcess guard_proc(GuardSpec(ws, run));
  KilledSession out;
  if (!WaitFor([&] { return ws.SessionIds().size() == 1; }, 60000)) {
    throw std::runtime_error("no session started");
  }
  out.id = ws.SessionIds()[0];
  if (when.ready && !WaitFor(when.ready, 120000)) throw std::runtime_error("the agent never got ready");
  if (when.ready_for_kill && !WaitFor([&] { return when.ready_for_kill(out.id); }, 120000, 100)) {
    throw std::runtime_error("the condition for the kill never held");
  }
  if (when.settle_seconds > 0) SleepMs(static_cast<int>(when.settle_seconds * 1000));
  SessionMeta meta;
  if (LoadSessionMeta(ws.home() + "/sessions/" + out.id + "/meta.json", &meta).ok()) {
    out.supervisor_pid = meta.supervisor_pid;
    out.supervisor_peak_kib = PeakKib(meta.supervisor_pid);
  }
  std::vector<pid_t> agent = Descendants(guard_proc.pid());
  kill(guard_proc.pid(), SIGKILL);
  guard_proc.Wait();
  for (pid_t p : ProcessesWithEnv("GUARD_SESSION", out.id)) agent.push_back(p);
  if (!WaitGone(agent, 10000).empty()) throw std::runtime_error("the agent survived guard");
  WaitPastKeeperStamp(ws, out.id);
  out.at_kill = SnapshotTree(ws.tree()).Without(".git");
  return out;
}

void WaitPastKeeperStamp(const Workspace& ws, const std::string& id) {
  SessionMeta meta;
  if (LoadSessionMeta(ws.home() + "/sessions/" + id + "/meta.json", &meta).ok()) {
    for (int waited = 0; SupervisorAlive(meta); waited += 10) {
      if (waited >= 30000) throw std::runtime_error("the session's supervisor survived its kill");
      SleepMs(10);
    }
  }
  const std::string alive_path = ws.home() + "/sessions/" + id + "/alive";
  UniqueFd fd(open(alive_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return;  // no heartbeat: nothing stamps one
  for (int waited = 0; flock(fd.get(), LOCK_SH | LOCK_NB) != 0; waited += 10) {
    if (waited >= 30000) throw std::runtime_error("the session's keeper never let go of its heartbeat");
    SleepMs(10);
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return;
  fd.reset();
  for (;;) {
    timespec now;
    clock_gettime(CLOCK_REALTIME_COARSE, &now);
    if (now.tv_sec > st.st_mtim.tv_sec || (now.tv_sec == st.st_mtim.tv_sec && now.tv_nsec > st.st_mtim.tv_nsec)) break;
    SleepMs(1);
  }
}

namespace {

// The last post-image of each path in session `id`'s journal.
std::map<std::string, FileState> LastPostImages(const Workspace& ws, const std::string& id) {
  std::vector<Record> records;
  std::vector<std::string> problems;
  std::map<std::string, FileState> out;
  if (!ReadAllRecords(ws.home() + "/sessions/" + id + "/journal", &records, &problems).ok()) return out;
  for (const Record& r : records) {
    if (IsPostImage(r)) out[r.path] = r.after;
  }
  return out;
}

}  // namespace

bool PostImagesMatchTree(const Workspace& ws, const std::string& id, const std::vector<std::string>& paths) {
  std::map<std::string, FileState> saved = LastPostImages(ws, id);
  for (const std::string& p : paths) {
    auto it = saved.find(p);
    if (it == saved.end()) return false;
    const FileState& s = it->second;
    struct stat st;
    std::string abs = ws.Path(p);
    if (lstat(abs.c_str(), &st) != 0) {
      if (s.type != FileType::kAbsent) return false;
      continue;
    }
    FileType type = S_ISREG(st.st_mode) ? FileType::kRegular : S_ISDIR(st.st_mode) ? FileType::kDirectory
                    : S_ISLNK(st.st_mode) ? FileType::kSymlink : FileType::kOther;
    if (s.type != type) return false;
    if (type == FileType::kSymlink) {
      char buf[4096];
      ssize_t n = readlink(abs.c_str(), buf, sizeof buf);
      if (n < 0 || s.symlink_target != std::string(buf, static_cast<size_t>(n))) return false;
      continue;
    }
    if (s.mode != (st.st_mode & 07777)) return false;
    if (type != FileType::kRegular) continue;
    std::string content;
    try {
      content = ReadFile(abs);
    } catch (const std::exception&) {
      return false;  // gone meanwhile
    }
    if (s.blob.kind != BlobRef::Kind::kKey || !(s.blob.key == BlobKey::OfBytes(content))) return false;
  }
  return true;
}

size_t PostImageCount(const Workspace& ws, const std::string& id, const std::string& path) {
  std::vector<Record> records;
  std::vector<std::string> problems;
  size_t n = 0;
  if (!ReadAllRecords(ws.home() + "/sessions/" + id + "/journal", &records, &problems).ok()) return 0;
  for (const Record& r : records) n += IsPostImage(r) && r.path == path;
  return n;
}

}  // namespace guard::e2e
