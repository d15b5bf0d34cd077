// What one `guard undo`, `guard replay` or `guard redo` asks of a session,
// read against the session's restore chain (restore_chain.h): the target
// state and the states the tree may be in now (RestoreRequest), and the
// account the restore's own session records (RestoreOf).
//  - After an interrupted restore, the same command typed again finishes
//    it: the same target and paths, the paths already restored taken as
//    done (the target), the others as found before it.
//  - `undo --turns N` counts N turns back from the turns already undone.
//  - `redo` reverses the last undo in effect: back to the state that undo
//    found.
//  - A whole `undo` of a session already undone whole changes nothing: the
//    caller says so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/session_history.h"
#include "common/session_meta.h"
#include "common/status.h"
#include "supervisor/restore/restore.h"
#include "supervisor/restore/restore_chain.h"

namespace guard {

struct RestoreAsk {
  std::string verb;                // "undo", "replay" or "redo"
  std::string to;                  // --to as given ("": none)
  uint64_t turns = 0;              // --turns (undo)
  std::vector<std::string> paths;  // root-relative; empty: every path
};

struct ChainedRequest {
  RestoreRequest request;
  RestoreOf account;
  bool finishing = false;       // finishes chain.interrupted_id
  bool already_undone = false;  // a whole undo of a session undone whole: nothing to do
};

// kInvalidArgument: the ask is a usage error (a bad --to, too many turns);
// kNotFound: a redo with no undo to reverse. The message names session `id`.
Status MakeChainedRequest(const SessionHistory& history, const std::string& id, const RestoreChain& chain,
                          const RestoreAsk& ask, ChainedRequest* out);

}  // namespace guard
