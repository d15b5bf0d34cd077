// The blob store's on-disk layout: directory and file names, the version,
// and the few helpers blob_store.cc and blob_store_pending.cc share. Internal
// to the store; the layout is specified in docs/format.md (Part II).
//
//   VERSION                  "1\n": the layout version (kStoreVersion)
//   objects/XX/<32hex>       raw content       (XX = first two hex digits)
//   objects/XX/<32hex>.zst   one zstd frame of the content
//   pending/<name>           a file adopted by hard link, not yet hashed
//   resolved/<name>          symlink whose target is the 32-hex key <name> resolved to
//   tmp/<name>               blobs and markers being written
//   trash/<32hex>[.zst]      an object a sweep is removing (store_gc.h)
#pragma once

#include <cerrno>
#include <string>

#include "common/blob_key.h"
#include "common/status.h"

namespace guard::store_layout {

// A reader refuses a store whose VERSION is larger.
inline constexpr int kStoreVersion = 1;
inline constexpr const char* kSubdirs[] = {"objects", "pending", "resolved", "tmp", "trash"};
inline constexpr const char* kTrashDir = "trash";
inline constexpr const char* kZstdSuffix = ".zst";

inline std::string ObjectDir(const BlobKey& key) { return "objects/" + key.Hex().substr(0, 2); }

inline std::string ObjectName(const BlobKey& key, bool compressed) {
  std::string hex = key.Hex();
  return "objects/" + hex.substr(0, 2) + "/" + hex + (compressed ? kZstdSuffix : "");
}

// Pending names are made by AdoptByLink ("<session id>-<counter>-<random>",
// or "<pid>-..." from a store with no owner set and from earlier guards);
// any single path component other than "." and ".." is accepted back.
inline bool ValidPendingName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

inline std::string PendingPath(const std::string& name) { return "pending/" + name; }
inline std::string ResolvedPath(const std::string& name) { return "resolved/" + name; }

// FromErrno for a failed call on `rel` under the store: errno is read before
// the message is built, since building it allocates.
inline Status StoreErrno(const std::string& store_dir, const std::string& rel) {
  int err = errno;
  return Status::FromErrno(store_dir + "/" + rel, err);
}

// The object file holding `key` relative to the store (raw preferred), or ""
// if there is none.
std::string FindObject(int store_dirfd, const BlobKey& key);

// The key recorded in resolved/<name>: kNotFound when <name> was never
// resolved, kCorruption when the marker does not hold a key.
Status ReadResolvedMarker(int store_dirfd, const std::string& name, BlobKey* key);

}  // namespace guard::store_layout
