#include "supervisor/session/deferred_seal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/file_io.h"
#include "common/session_meta.h"

namespace guard {
namespace {

constexpr const char* kSealing = "/sealing";
constexpr const char* kLock = "/recovery.lock";

// Whether the lock of session directory `dir` is held by another process
// now. A lock file that is not there is held by nobody.
bool LockHeld(const std::string& dir) {
  int fd = static_cast<int>(GUARD_EINTR_RETRY(::open((dir + kLock).c_str(), O_RDONLY | O_CLOEXEC)));
  if (fd < 0) return false;
  UniqueFd lock(fd);
  if (::flock(lock.get(), LOCK_SH | LOCK_NB) == 0) return false;  // let go as the fd closes
  return errno == EWOULDBLOCK;
}

}  // namespace

Status SealInProgress::Begin(const std::string& dir, SealInProgress* out) {
  UniqueFd lock;
  GUARD_RETURN_IF_ERROR(OpenFile(dir + kLock, O_RDWR | O_CREAT, 0600, &lock));
  while (::flock(lock.get(), LOCK_EX) != 0) {
    if (errno != EINTR) return Status::FromErrno(dir + kLock, errno);
  }
  UniqueFd mark;
  GUARD_RETURN_IF_ERROR(OpenFile(dir + kSealing, O_WRONLY | O_CREAT, 0600, &mark));
  out->dir_ = dir;
  out->lock_ = std::move(lock);
  return Status::Ok();
}

void SealInProgress::End() {
  if (!active()) return;
  ClearSealMark(dir_);
  lock_.reset();
}

bool SealMarked(const std::string& dir) { return ::access((dir + kSealing).c_str(), F_OK) == 0; }

void ClearSealMark(const std::string& dir) { (void)::unlink((dir + kSealing).c_str()); }

bool CompleteLeftSeal(const std::string& dir, void (*finish)(const std::string& id), const std::string& id) {
  if (!SealMarked(dir)) return false;
  UniqueFd lock;
  if (!OpenFile(dir + kLock, O_RDWR | O_CREAT, 0600, &lock).ok()) return false;
  if (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) return false;  // its sealer is at work
  if (!SealMarked(dir)) return false;                             // it finished meanwhile
  if (finish != nullptr) finish(id);
  ClearSealMark(dir);
  return true;
}

void WaitForSeals(const StateDir& state, const std::string& root, const SealWait& how) {
  std::vector<std::string> ids;
  if (!state.ListSessions(&ids).ok()) return;
  const int64_t start = MonoNowNs();
  for (const std::string& id : ids) {
    const std::string dir = state.session_dir(id);
    if (!SealMarked(dir)) continue;
    SessionMeta meta;
    if (!root.empty() && (!LoadSessionMeta(dir + "/meta.json", &meta).ok() || meta.root != root)) continue;
    bool said = false;
    int64_t nap_us = 500;
    while (LockHeld(dir)) {
      const int64_t waited = MonoNowNs() - start;
      if (waited >= how.give_up_after_ns) {
        if (!how.quiet) {
          std::fprintf(stderr, "guard: session %s is still being sealed after %lld s; going on without it\n",
                       id.c_str(), static_cast<long long>(waited / 1000000000));
        }
        break;
      }
      if (!said && waited >= how.word_after_ns && !how.quiet) {
        said = true;
        std::fprintf(stderr, "guard: waiting for session %s to be sealed\n", id.c_str());
      }
      ::usleep(static_cast<useconds_t>(nap_us));
      if (nap_us < 20000) nap_us *= 2;
    }
  }
}

void SealTestPause(const char* step) {
  const char* spec = std::getenv("GUARD_TEST_PAUSE_SEAL");
  if (spec == nullptr || *spec == '\0') return;
  const std::string s(spec);
  const size_t colon = s.find(':');
  if (colon == std::string::npos || s.compare(0, colon, step) != 0) return;
  const std::string target = s.substr(colon + 1);
  const char* path = target.c_str();
  // Written whole under another name first: the test reads the pid once
  // the file is there.
  const std::string tmp = std::string(path) + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "we");
  if (f == nullptr) return;
  std::fprintf(f, "%d\n", static_cast<int>(::getpid()));
  std::fclose(f);
  if (::rename(tmp.c_str(), path) != 0) return;
  for (int i = 0; i < 6000 && ::access(path, F_OK) == 0; ++i) ::usleep(10 * 1000);
}

}  // namespace guard
