// Examining a path's current state for the journal: type, mode, size, mtime,
// symlink target, and (when asked) its content saved into the blob store.
#pragma once

#include <sys/stat.h>

#include <string>

#include "common/blob_store.h"
#include "common/journal_record.h"
#include "common/status.h"
#include "supervisor/capture/saved_versions.h"
#include "supervisor/base/stat_state.h"

namespace guard {

enum class ContentCapture {
  kNone,        // metadata only
  kCopy,        // stream the content into the store
  kLinkOrCopy,  // hard-link the inode into the store when it has one link; else copy
};

// Copies the content of open regular file `fd` into the store and sets
// state->blob and state->size from it. With `grown_from` (the last version
// of the file the session stored), a file that only grew since is stored
// as that version and the bytes appended (BlobStore::PutFdAfter).
Status StoreContent(int fd, BlobStore* store, FileState* state, const SavedVersion* grown_from = nullptr);

// Fills *out with the state of absolute path `path` (never following a final
// symlink). An absent path is kAbsent with ok status. When saving the content
// fails, the metadata is still filled in and the store's error is returned.
// `st_out`, if given, receives the lstat the state was read with (st_mode 0
// when the path is absent or could not be examined).
Status CaptureFileState(const std::string& path, BlobStore* store, ContentCapture how,
                        FileState* out, struct stat* st_out = nullptr);
// The same from `known`, the lstat of `path` made in this stop (made
// here when it was not).
Status CaptureFileStateFrom(const std::string& path, const KnownLstat& known, BlobStore* store,
                            ContentCapture how, FileState* out, struct stat* st_out = nullptr,
                            const SavedVersion* grown_from = nullptr);

// The same from what a producer saved before the call ran (the shim:
// Mutation::PreCaptured), reading nothing of the tree: `known` its lstat,
// `target` the symlink text, `pending` the name in the store's pending
// directory of the content it saved (empty: none). A regular file whose
// content `how` asks for and which has none is an error, the metadata kept.
Status SavedFileState(const KnownLstat& known, const std::string& target, const std::string& pending,
                      ContentCapture how, FileState* out);
// The same for a producer that carried the content itself (`content`, as
// long as the producer's own lstat said): put into `store` under its key.
Status SavedFileStateWithContent(const KnownLstat& known, const std::string& content, BlobStore* store,
                                 ContentCapture how, FileState* out);

// CaptureFileState with ContentCapture::kCopy, and the stat signature of
// what it read (a final state or a post-image).
Status CaptureStateWithSignature(const std::string& path, BlobStore* store, FileState* out,
                                 const SavedVersion* grown_from = nullptr);

// Sets out->dev, ino and ctime_ns: the stat signature (journal_record.h).
void FillSignature(const struct stat& st, FileState* out);
// Whether a path whose lstat is now `st` still holds `saved`, as far as its
// signature tells: the same inode, type, mode, size, mtime and ctime.
// (A directory's size, mtime and ctime change with its entries: only its
// inode, type and mode count.) A state without a signature never matches.
bool StillHolds(const FileState& saved, const struct stat& st);

}  // namespace guard
