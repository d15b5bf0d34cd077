#include "tests/e2e/support/stepped_session.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "common/file_io.h"
#include "common/unique_fd.h"
#include "tests/e2e/support/random_workload.h"
#include "tests/e2e/support/session_view.h"

namespace guard::e2e {
namespace {

int64_t NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// Whether `pid` has exited, without reaping it (ChildProcess::Wait does that).
bool HasExited(pid_t pid) {
  siginfo_t info;
  std::memset(&info, 0, sizeof info);
  if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return true;
  return info.si_pid != 0;
}

// Reads one line from `fd` (non-blocking) into *line. False when `pid` exits
// or the deadline passes first; *why says which.
bool ReadLine(int fd, pid_t pid, int timeout_seconds, std::string* buffer, std::string* line, std::string* why) {
  int64_t deadline = NowMs() + static_cast<int64_t>(timeout_seconds) * 1000;
  for (bool last_try = false;;) {
    size_t nl = buffer->find('\n');
    if (nl != std::string::npos) {
      *line = buffer->substr(0, nl);
      buffer->erase(0, nl + 1);
      return true;
    }
    if (last_try) {
      *why = "guard exited before the driver reached the sync point";
      return false;
    }
    pollfd p{fd, POLLIN, 0};
    int rc = poll(&p, 1, 1000);
    if (rc < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    if (rc > 0) {
      char buf[256];
      ssize_t got = read(fd, buf, sizeof buf);
      if (got > 0) buffer->append(buf, static_cast<size_t>(got));
      continue;
    }
    if (HasExited(pid)) {
      last_try = true;  // read what it wrote before exiting
      char buf[256];
      ssize_t got;
      while ((got = read(fd, buf, sizeof buf)) > 0) buffer->append(buf, static_cast<size_t>(got));
      continue;
    }
    if (NowMs() > deadline) {
      *why = "timed out after " + std::to_string(timeout_seconds) + " s waiting for the driver";
      return false;
    }
  }
}

UniqueFd OpenFifo(const std::string& path, int extra_flags) {
  if (mkfifo(path.c_str(), 0600) != 0) throw std::runtime_error("mkfifo " + path + ": " + std::strerror(errno));
  // Read-write: the open never blocks, and the FIFO always has a writer and
  // a reader on this side, so the driver's opens never block either.
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC | extra_flags);
  if (fd < 0) throw std::runtime_error("open " + path + ": " + std::strerror(errno));
  return UniqueFd(fd);
}

std::string DriverScript(const std::string& dir, const std::vector<std::string>& steps) {
  std::ostringstream os;
  os << "# written by RunSteppedSession (tests/e2e/support/stepped_session.cc)\n"
     << "set -u\n"
     << "markers=" << ShellQuote(dir + "/markers") << "\n"
     << "ready=" << ShellQuote(dir + "/ready") << "\n"
     << "go=" << ShellQuote(dir + "/go") << "\n"
     << "sync_point() {\n"
     << "  mkdir -- \"$markers/step-$1\" || exit 90\n"
     << "  printf '%s %s\\n' \"$1\" \"$2\" > \"$ready\" || exit 91\n"
     << "  read -r reply < \"$go\" || exit 92\n"
     << "  [ \"$reply\" = next ] || exit 93\n"
     << "}\n"
     << "sync_point 0 0\n";
  for (size_t k = 0; k < steps.size(); ++k) {
    os << "(\nset -e\n" << steps[k] << "\n)\n"
       << "sync_point " << k + 1 << " $?\n";
  }
  return os.str();
}

}  // namespace

int SteppedSession::FailedStep() const {
  for (size_t k = 0; k < step_status.size(); ++k) {
    if (step_status[k] != 0) return static_cast<int>(k);
  }
  return -1;
}

SteppedSession RunSteppedSession(const Workspace& ws, const std::vector<std::string>& steps,
                                 int step_timeout_seconds) {
  SteppedSession out;
  // A fresh directory per run, so that a workspace can hold several.
  std::string dir;
  for (int i = 0;; ++i) {
    dir = ws.outside() + "/stepped-" + std::to_string(i);
    if (!PathExists(dir)) break;
  }
  MakeDir(dir, 0755);
  MakeDir(dir + "/markers", 0755);
  UniqueFd ready = OpenFifo(dir + "/ready", O_NONBLOCK);
  UniqueFd go = OpenFifo(dir + "/go", 0);
  WriteFile(dir + "/driver.sh", DriverScript(dir, steps), 0644);

  std::vector<std::string> before = ws.SessionIds();
  GuardRun run;
  run.command = {"bash", dir + "/driver.sh"};
  run.timeout_seconds = step_timeout_seconds * static_cast<int>(steps.size() + 2);
  {
    ChildProcess child(GuardSpec(ws, run));
    std::string buffer, line;
    for (size_t k = 0; k <= steps.size(); ++k) {
      std::string why;
      if (!ReadLine(ready.get(), child.pid(), step_timeout_seconds, &buffer, &line, &why)) {
        out.error = "sync point " + std::to_string(k) + ": " + why;
        break;
      }
      unsigned long got_k = 0;
      int status = 0;
      if (std::sscanf(line.c_str(), "%lu %d", &got_k, &status) != 2 || got_k != k) {
        out.error = "sync point " + std::to_string(k) + ": the driver wrote \"" + Printable(line) + "\"";
        break;
      }
      if (k > 0) out.step_status.push_back(status);
      out.snapshots.push_back(SnapshotTree(ws.tree()));
      Status s = WriteAll(go.get(), "next\n", 5, "go fifo");
      if (!s.ok()) throw std::runtime_error(s.ToString());
    }
    if (!out.ok()) {
      // Unblocks a driver waiting for "next": its read sees end of file.
      go.reset();
    }
    static_cast<ProcessResult&>(out.guard) = child.Wait();
  }
  for (const std::string& id : ws.SessionIds()) {
    if (!std::binary_search(before.begin(), before.end(), id)) out.guard.new_sessions.push_back(id);
  }
  if (out.guard.new_sessions.size() == 1) out.session_id = out.guard.new_sessions[0];
  if (out.ok() && out.guard.exit_code != 0) {
    out.error = "guard exited " + std::to_string(out.guard.exit_code);
  }
  if (out.ok() && out.session_id.empty()) {
    out.error = std::to_string(out.guard.new_sessions.size()) + " new sessions instead of 1";
  }
  if (!out.ok()) return out;

  SessionView view = SessionView::Load(ws.home(), out.session_id);
  std::vector<const Record*> ops = view.Operations();
  for (size_t k = 0; k <= steps.size(); ++k) {
    std::string marker = dir + "/markers/step-" + std::to_string(k);
    auto it = std::find_if(ops.begin(), ops.end(), [&](const Record* r) {
      return r->kind == OpKind::kMkdir && (r->flags & kOutsideRoot) && r->path == marker;
    });
    if (it == ops.end()) {
      out.error = "no operation recorded for marker " + marker;
      return out;
    }
    out.marker_seq.push_back((*it)->seq);
    uint64_t first = 0;
    for (const Record* r : ops) {
      if (r->seq > (*it)->seq && (first == 0 || r->seq < first)) first = r->seq;
    }
    out.first_seq.push_back(first);
  }
  return out;
}

}  // namespace guard::e2e
