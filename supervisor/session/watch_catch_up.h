// Recovery's catch-up of a watch session (docs/durability.md, "What
// recovery does"): in watch mode the changes made after the watcher's last
// round are in the tree only. When guard dies, the keeper stops the
// session's processes (session_keeper.h) and stamps the heartbeat file
// once none is left; the next guard command compares the tree with what the
// dead session had saved last (its baseline file, watch_baseline.h,
// overlaid with the post-images of its journal) and records each
// difference as the dead session's change (Capture::Observed: kObserved,
// with its post-image), so that `guard replay` gives its whole work back.
//
// Whose a difference is, told by the clock as recovery_end_state.h tells
// it: a path changed after the session's processes were all stopped (its
// ctime, or for a directory made since the last save its birth time, is
// later than the heartbeat's last stamp; for a path gone, that of the
// deepest directory still above it) was changed by someone else (a `git
// checkout`, a `git clean` before this command): it is not recorded, and
// counted. What the session did to such a path after its last save was
// never saved and is lost; its saved work is the end (recovery_end_state.h).
// A directory so removed with paths the session changed below it keeps its
// saved state as a post-image, so that replay makes it again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "common/blob_store.h"
#include "common/journal_record.h"
#include "common/session_meta.h"
#include "common/status.h"
#include "supervisor/capture/recorder.h"
#include "supervisor/watch/watched_tree.h"

namespace guard {

struct WatchCatchUp {
  bool had_baseline = false;  // a watch session (it left its baseline file)
  size_t recorded = 0;        // changes recorded as the session's
  size_t after_end = 0;       // differences made after its processes stopped: not its own
  // Of those, directories removed with what the session made below them:
  // their saved state kept as a post-image (replay makes them again).
  size_t kept_directories = 0;
};

// How recovery reaches content a watch baseline kept by another's id (a
// clean tracked file's git blob, supervisor/git/baseline_objects.h): the
// commands layer sets it at start (the git layer is above this one). Unset,
// or when it gives null, such a file changed after the last save is
// recorded with its pre-image flagged not captured.
using KeptContentOpener =
    std::function<std::unique_ptr<KeptContent>(const SessionMeta& meta, const std::string& state_dir)>;
void SetKeptContentOpener(KeptContentOpener opener);

// `records`: the session's journal, read whole; `state_dir`: the state
// directory's canonical path; `alive_ns`: SupervisorLastAlive (0: unknown,
// then every difference is the session's).
Status CatchUpWatchSession(const SessionMeta& meta, const std::string& session_dir, const std::string& state_dir,
                           const std::vector<Record>& records, BlobStore* store, Recorder* recorder,
                           int64_t alive_ns, const std::shared_ptr<spdlog::logger>& log, WatchCatchUp* out);

}  // namespace guard
