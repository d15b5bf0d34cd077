// StateDir: where guard keeps its sessions and blobs.
//   $GUARD_HOME, else ${XDG_STATE_HOME:-$HOME/.local/state}/guard
//     sessions/<id>/meta.json   session metadata (session_meta.h)
//     sessions/<id>/journal     the session's journal (journal_format.h)
//     store/                    the blob store (blob_store.h)
//   beside it, <state>-inbox/<id>/  where the shim leaves pre-images for
//     session <id> (docs/security.md: outside the state directory, which
//     the session cannot write; the supervisor checks each before taking it
//     into the store)
// Every directory guard creates here is mode 0700: the store holds copies of
// the user's files, keys and .env included.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace guard {

class StateDir {
 public:
  // Resolves the location from the environment, creates it (0700) if needed,
  // and tightens an existing directory that is readable by others.
  static Status Open(StateDir* out);
  static Status OpenAt(const std::string& path, StateDir* out);

  const std::string& path() const { return path_; }
  std::string sessions_dir() const { return path_ + "/sessions"; }
  std::string store_dir() const { return path_ + "/store"; }
  std::string session_dir(const std::string& id) const { return sessions_dir() + "/" + id; }
  // Beside the state directory, on its filesystem and mount; inside it when
  // the state directory is a mount of its own (no place beside it is on its
  // mount, and a pre-image saved elsewhere would not tell a full store):
  // then it cannot be hidden from the session (inbox_inside()).
  std::string inbox_root() const { return inbox_inside() ? path_ + "/inbox" : path_ + "-inbox"; }
  bool inbox_inside() const;
  std::string session_inbox(const std::string& id) const { return inbox_root() + "/" + id; }
  // Makes the session's inbox (and the inbox root), mode 0700.
  Status MakeSessionInbox(const std::string& id) const;
  // Session ids present, sorted (ids sort by start time).
  Status ListSessions(std::vector<std::string>* ids) const;

 private:
  std::string path_;
};

// What to say when writing below the state directory `state_path` failed
// with `s`: for a full disk (kNoSpace) "the state directory is full
// (PATH): free space or run `guard gc`", naming no temporary file; any
// other status as it is.
Status StateDirWriteError(const std::string& state_path, const Status& s);

// Where the state directory lives per the environment, without creating it.
std::string DefaultStatePath();

}  // namespace guard
