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
  // After `abs` was moved away: drops the watches of `abs` and of every
  // directory below it whose directory is no longer the one at its path
  // (moved away, or exchanged with another). A watch added since on the
  // directory that is there now is kept: a RENAME_EXCHANGE of A and B
  // queues "A moved away, B moved in, B moved away, A moved in", and by
  // the third event the watches under B are A's tree, under its new name.
  void Unwatch(const std::string& abs);
  // Reads every event queued now; false when none was (EAGAIN at once).
  Status ReadQueued(std::vector<WatchHint>* out, bool* read_any);
  void Decode(const char* buf, size_t len, std::vector<WatchHint>* out);
  bool Excluded(const std::string& abs) const;

  std::string root_;
  std::vector<std::string> excluded_;
  UniqueFd fd_;
  struct WatchedDir {
    std::string path;  // absolute
    dev_t dev = 0;     // the directory's identity when watched
    ino_t ino = 0;
  };
  std::unordered_map<int, WatchedDir> dirs_;  // watch descriptor -> its directory
  bool blind_ = false;
  uint64_t overflows_ = 0;
};

}  // namespace guard
