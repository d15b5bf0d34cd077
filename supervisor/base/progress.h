// Progress of a long command (undo, replay, export, gc of thousands of
// files) on the terminal: one line on stderr, rewritten in place at most
// ten times a second, erased when the work is done. When stderr is not a
// terminal it prints nothing at all, so that logs and pipes see only the
// command's own output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace guard {

class Progress {
 public:
  // `label` starts the line ("guard undo"). Whether anything is shown is
  // decided here, once: stderr is a terminal and GUARD_NO_PROGRESS is unset.
  explicit Progress(std::string label);
  ~Progress();  // Done()
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` of `total` units of `what` ("files"); cheap to call often.
  void Update(const char* what, size_t done, size_t total);
  // What it is doing now, where no count applies ("syncing the restored
  // files"): the line says it until the next Update, Say or Done, so that
  // no long step after 100% passes in silence.
  void Say(const char* doing);
  // Erases the line (if one was shown).
  void Done();
  bool shown() const { return enabled_; }

 private:
  std::string label_;
  bool enabled_ = false;
  bool visible_ = false;
  int64_t last_ns_ = 0;
};

}  // namespace guard
