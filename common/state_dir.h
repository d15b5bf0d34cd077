// StateDir: where guard keeps its sessions and blobs.
//   $GUARD_HOME, else ${XDG_STATE_HOME:-$HOME/.local/state}/guard
//     sessions/<id>/meta.json   session metadata (session_meta.h)
//     sessions/<id>/journal     the session's journal (journal_format.h)
//     store/                    the blob store (blob_store.h)
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
  // Session ids present, sorted (ids sort by start time).
  Status ListSessions(std::vector<std::string>* ids) const;

 private:
  std::string path_;
};

// Where the state directory lives per the environment, without creating it.
std::string DefaultStatePath();

}  // namespace guard
