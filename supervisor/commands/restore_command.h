// `guard undo` and `guard replay`: put the paths a session touched back as
// they were before it (or before operation SEQ), or forward as it left them
// (or just after SEQ); `guard redo`: reverse the last undo. Read against the
// session's earlier restores (supervisor/restore/chained_request.h): an
// interrupted one is finished by the same command typed again. The restore runs untraced and records itself as a new
// session (supervisor/restore/restore_session.h), so an undo can be undone;
// inside a guard session the outer guard records it instead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/session_history.h"
#include "common/status.h"
#include "supervisor/restore/restore.h"

namespace guard {

class RestoreCommand {
 public:
  struct Options {
    RestoreDirection direction = RestoreDirection::kUndo;
    std::string session;  // "" = last session of the root the user ran (session_selector.h)
    std::string root;     // --root; "": the one around the current directory
    // --to: an operation's SEQ, or a mark (@N or its label,
    // common/session_marks.h): undo lands just before the operation or
    // just after the mark, replay just after either. "": the whole session.
    std::string to;
    uint64_t turns = 0;  // --turns N (undo): the last N marked turns
    bool dry_run = false;
    bool json = false;  // with dry_run: the plan as JSON (plan_json.h)
    bool yes = false;
    bool force = false;
    bool verbose = false;  // --verbose: every line of a long plan on a terminal too
    std::vector<std::string> paths;  // as given, relative to the current directory
    bool redo = false;               // `guard redo`: reverse the last undo (restore_chain.h)
    bool internal = false;           // `guard __restore`: apply now, under an outer guard
    // The internal command's plan, as its parent made it (chained_request.h).
    uint64_t boundary = 0;
    std::vector<uint64_t> expect;
    bool absent_expected = false;
    bool auto_gc = true;             // retention.auto_gc: start the automatic gc after the restore's seal
  };
  explicit RestoreCommand(Options options) : options_(std::move(options)) {}
  int Run();

 private:
  Options options_;
};

}  // namespace guard
