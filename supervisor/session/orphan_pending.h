// Pending blobs of a recovered session that no surviving record names.
//
// A pending blob (docs/format.md, "Pending blobs") is adopted by hard link
// before its operation record is appended. If that record is lost (a torn
// tail: the append was cut short, or never reached the disk before a power
// loss; or damage in the middle of the journal), nothing will ever resolve
// the blob, and nothing but its own link would ever remove it. Recovery
// deals with each such blob of the session it completes, by what its link
// count says:
//  - more than one link: a file outside the store still holds the same
//    inode (the call was never let through, or it failed), so the blob is
//    no one's only copy: it is removed;
//  - one link: the file it was adopted from is gone (the call may have run
//    and its record been lost to a power loss), so the store holds the only
//    copy of that content: it is kept, resolved at the seal like the
//    session's other pending blobs, and its kBlobResolved record names it in
//    the session's journal, so that it lives and goes with the session.
// Only names adopted for this session ("<id>-...") are looked at: another
// session's pending blobs, running or not, are never touched. The shim's
// names ("<id>-s...") are left to KeepUnnamedShimPending.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include <spdlog/logger.h>

#include "common/blob_store.h"
#include "common/status.h"
#include "supervisor/capture/recorder.h"

namespace guard {

struct OrphanPendingCount {
  size_t kept = 0;     // the only copy: resolved at the seal, named by the journal
  size_t removed = 0;  // another name still holds the content
};

// For session `id`, whose supervisor is gone: every pending blob in `store`
// adopted for it, not yet resolved, and not in `named` (the pending names
// its surviving records hold). Kept ones are noted on `recorder` for Seal.
Status SweepOrphanPending(BlobStore* store, const std::string& id, const std::set<std::string>& named,
                          Recorder* recorder, spdlog::logger* log, OrphanPendingCount* count);

// The pre-images the shim put into `store`'s pending directory for session
// `id` ("<id>-s...") that no record names (none in `named`): made by a
// process killed between its link or copy and the CALL that names it, after
// a put the ring refused, or left behind a forged ring record that stopped
// delivery (docs/security.md): then the store holds what may be a file's
// only copy. Each is kept (never removed because no record names it):
// noted on `recorder` (Recorder::NoteUnnamedPending), resolved into the
// store by the seal and listed in the session's journal with its size and
// time, where `guard show` lists it and `guard export --pending KEY` gives
// its bytes back (docs/restore.md). Bounded, newest first, by
// kUnnamedPreImagesMax and kUnnamedPreImageBytesMax per session: those past
// the bound are removed and counted, and the log says so.
// Call before Recorder::Seal, once the ring is drained.
inline constexpr size_t kUnnamedPreImagesMax = 1000;
inline constexpr uint64_t kUnnamedPreImageBytesMax = uint64_t{256} << 20;

struct UnnamedPendingCount {
  size_t kept = 0;
  uint64_t kept_bytes = 0;
  size_t past_bound = 0;  // removed: older than the kept ones, past a bound
};

// `named`: whether a record of the session names a pending name.
UnnamedPendingCount KeepUnnamedShimPending(BlobStore* store, const std::string& id,
                                           const std::function<bool(std::string_view)>& named, Recorder* recorder,
                                           spdlog::logger* log);

}  // namespace guard
