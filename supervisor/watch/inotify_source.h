// InotifySource: the Linux platform layer of watch mode (watch_source.h).
// One inotify watch on each directory under the root; a directory that
// appears (made, or moved in) is watched, with every directory below it,
// before its hint is handed on, so that the scan its kTree hint asks for
// comes after the watch and nothing made in it is missed either way. A
// queue overflow (IN_Q_OVERFLOW) becomes a kAll hint, after every
// directory is watched again. Linux only: the macOS build leaves it out.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "common/unique_fd.h"
#include "supervisor/watch/watch_source.h"

namespace guard {

class InotifySource final : public WatchSource {
 public:
  // Watches `root` (absolute, canonical) and every directory below it,
  // except those under `excluded` (guard's own). A directory that cannot
  // be watched (the watch limit, a directory that cannot be read) makes the
  // source blind there: it adds a kAll hint to every Wait and Drain
  // from then on, and blind() says so.
  static Status Open(const std::string& root, std::vector<std::string> excluded,
                     std::unique_ptr<InotifySource>* out);

  Status Wait(std::vector<WatchHint>* out, std::chrono::milliseconds timeout) override;
  Status Drain(std::vector<WatchHint>* out) override;

  bool blind() const { return blind_; }
  uint64_t overflows() const { return overflows_; }
  size_t watches() const { return dirs_.size(); }

 private:
  InotifySource(std::string root, std::vector<std::string> excluded, UniqueFd fd)
      : root_(std::move(root)), excluded_(std::move(excluded)), fd_(std::move(fd)) {}
  // Watches directory `abs` and every directory below it.
  void WatchTree(const std::string& abs);
  void WatchDir(int dir_fd, const std::string& abs, int depth);
  // Drops the watches of `abs` and every directory below it (moved away).
  void Unwatch(const std::string& abs);
  // Reads every event queued now; false when none was (EAGAIN at once).
  Status ReadQueued(std::vector<WatchHint>* out, bool* read_any);
  void Decode(const char* buf, size_t len, std::vector<WatchHint>* out);
  bool Excluded(const std::string& abs) const;

  std::string root_;
  std::vector<std::string> excluded_;
  UniqueFd fd_;
  std::unordered_map<int, std::string> dirs_;  // watch descriptor -> the directory's absolute path
  bool blind_ = false;
  uint64_t overflows_ = 0;
};

}  // namespace guard
