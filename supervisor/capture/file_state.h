// Examining a path's current state for the journal: type, mode, size, mtime,
// symlink target, and (when asked) its content saved into the blob store.
#pragma once

#include <string>

#include "common/blob_store.h"
#include "common/journal_record.h"
#include "common/status.h"

namespace guard {

enum class ContentCapture {
  kNone,        // metadata only
  kCopy,        // stream the content into the store
  kLinkOrCopy,  // hard-link the inode into the store when it has one link; else copy
};

// Copies the content of open regular file `fd` into the store and sets
// state->blob and state->size from it.
Status StoreContent(int fd, BlobStore* store, FileState* state);

// Fills *out with the state of absolute path `path` (never following a final
// symlink). An absent path is kAbsent with ok status. When saving the content
// fails, the metadata is still filled in and the store's error is returned.
Status CaptureFileState(const std::string& path, BlobStore* store, ContentCapture how,
                        FileState* out);

}  // namespace guard
