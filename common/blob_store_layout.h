// The blob store's on-disk layout: directory and file names, the version,
// and the few helpers blob_store.cc and blob_store_pending.cc share. Internal
// to the store; the layout is specified in docs/format.md (Part II).
//
//   VERSION                  "1\n" or "2\n": the layout version (kStoreVersion)
//   objects/XX/<32hex>       raw content       (XX = first two hex digits)
//   objects/XX/<32hex>.zst   one zstd frame of the content
//   objects/XX/<32hex>.app   a base key and appended bytes (blob_append_format.h)
//   pending/<name>           a file adopted by hard link, not yet hashed
//   resolved/<name>          symlink whose target is the 32-hex key <name> resolved to
//   tmp/<name>               blobs and markers being written
//   trash/<32hex>[.zst]      an object a sweep is removing (store_gc.h)
#pragma once

#include <cerrno>
#include <cstdint>
#include <functional>
#include <string>

#include "common/blob_key.h"
#include "common/journal_record.h"
#include "common/status.h"

namespace guard::store_layout {

// A reader refuses a store whose VERSION is larger. A new store is written
// as version 1; the first append object raises it to 2 (a guard of
// version 1 would not find those objects, so it must refuse the store).
inline constexpr int kStoreVersion = 2;
inline constexpr int kStoreVersionNew = 1;
inline constexpr int kStoreVersionAppend = 2;
inline constexpr const char* kSubdirs[] = {"objects", "pending", "resolved", "tmp", "trash"};
inline constexpr const char* kTrashDir = "trash";
inline constexpr const char* kZstdSuffix = ".zst";
inline constexpr const char* kAppendSuffix = ".app";

// How an object file holds its content; readers try them in this order.
enum class ObjectKind { kRaw, kZstd, kAppend };
inline constexpr ObjectKind kObjectKinds[] = {ObjectKind::kRaw, ObjectKind::kZstd, ObjectKind::kAppend};

inline std::string ObjectDir(const BlobKey& key) { return "objects/" + key.Hex().substr(0, 2); }

inline std::string ObjectName(const BlobKey& key, ObjectKind kind) {
  std::string hex = key.Hex();
  const char* suffix = kind == ObjectKind::kZstd ? kZstdSuffix : kind == ObjectKind::kAppend ? kAppendSuffix : "";
  return "objects/" + hex.substr(0, 2) + "/" + hex + suffix;
}
inline std::string ObjectName(const BlobKey& key, bool compressed) {
  return ObjectName(key, compressed ? ObjectKind::kZstd : ObjectKind::kRaw);
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

// The object file holding `key` relative to the store (raw preferred, then
// .zst, then .app), or "" if there is none.
std::string FindObject(int store_dirfd, const BlobKey& key);

// Passes the content of `ref` to `sink`, verified against its key: a raw,
// .zst or .app object, or a pending blob (blob_store_read.cc). An append
// object's bases are read in turn; each must be of a smaller depth than
// `max_depth`, so that no chain of bases loops.
Status ReadObject(int store_dirfd, const BlobRef& ref, const std::function<Status(const char*, size_t)>& sink,
                  uint64_t* size, uint32_t max_depth = 0xffffffffu);

// The key recorded in resolved/<name>: kNotFound when <name> was never
// resolved, kCorruption when the marker does not hold a key.
Status ReadResolvedMarker(int store_dirfd, const std::string& name, BlobKey* key);

}  // namespace guard::store_layout
