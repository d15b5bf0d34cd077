// The watch baseline file (sessions/<id>/watch_baseline, docs/format.md
// "The watch baseline"): what watch mode saved of every path under the root
// before the command ran, kept on disk so that recovery can tell what the
// session changed after its last save when guard died (watch_catch_up.h).
// The journal holds every change saved after it (each an observed record
// with its post-image); the baseline is the rest of the saved tree.
//
// Its framing is the journal's (common/journal_format.h): one kFinal record
// per path, its state in `after` with the stat signature, flagged kObserved,
// and kNotCaptured when the store lacks the content (kept by name only, or
// unreadable); a file whose content the repository keeps (KeptContent, a
// git blob id) has that id in `label` and no blob; then one kMark record per directory below the root that
// guard never watches (its state, its configuration), the absolute path in
// `label`. Written once, synced, before the command starts.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "supervisor/watch/watched_tree.h"

namespace guard {

// Writes `tree`'s saved paths and `excluded` to a new file at `path`
// (0600, O_EXCL) and syncs it.
Status WriteWatchBaseline(const std::string& path, const WatchedTree& tree,
                          const std::vector<std::string>& excluded);

// Reads the file at `path`. NotFound when there is none (a session of
// another mode, or one cut short before its command ran). A torn tail is
// reported in *problems and the whole records before it are kept.
Status ReadWatchBaseline(const std::string& path, std::vector<WatchedTree::SavedPath>* saved,
                         std::vector<std::string>* excluded, std::vector<std::string>* problems);

}  // namespace guard
