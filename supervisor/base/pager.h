// The pager of long output (diff, show, long plans), decided in one place
// as git's pager.c does: on a terminal only, `GUARD_PAGER`, then `PAGER`,
// then `less -FRX` (quit if one screen, keep colour, leave the screen as
// it is); an empty command or "cat" means none. While it runs, stdout is
// the pager's stdin; Finish() (or the destructor) closes it and waits for
// the pager, so that guard's prompt never returns over the pager's.
// A pager that quits early (q in less) is not an error: SIGPIPE is ignored
// while it runs and a write that fails with EPIPE stops the output quietly.
#pragma once

#include <sys/types.h>

#include <string>

namespace guard {

class Pager {
 public:
  Pager() = default;
  ~Pager() { Finish(); }
  Pager(const Pager&) = delete;
  Pager& operator=(const Pager&) = delete;

  // The pager command for this process's environment, "" for none.
  static std::string Command();

  // Starts the pager when `enabled` (no --no-pager), stdout is a terminal
  // and Command() names one. Returns whether output now goes to it; a pager
  // that cannot start leaves stdout as it was.
  bool Start(bool enabled);
  // Flushes stdout, closes the pipe and waits for the pager. Idempotent.
  void Finish();
  bool running() const { return pid_ > 0; }

 private:
  pid_t pid_ = -1;
  int saved_stdout_ = -1;
};

}  // namespace guard
