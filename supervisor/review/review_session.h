// ReviewSession: the session a review command looks at, opened the same way
// by all of them: --session resolved by SelectSession against the current
// root, its history read from the journal, its blob store opened.
#pragma once

#include <memory>
#include <string>

#include "common/blob_store.h"
#include "common/session_history.h"
#include "common/state_dir.h"

namespace guard {

struct ReviewSession {
  StateDir state;
  std::string id;
  SessionHistory history;
  std::unique_ptr<BlobStore> store;  // null unless asked for

  // Opens the session `spec` names ("" = the last one of the root), among
  // the sessions of `root` (--root; "": FindSessionRoot's). Journal problems are printed on stderr as warnings, one line each. On
  // failure prints a one-line error and returns the exit status for it:
  // kExitReviewUsage when `spec` names no session, 1 otherwise; 0 on success.
  static int Open(const std::string& spec, const std::string& root, bool with_store, ReviewSession* out);
};

}  // namespace guard
