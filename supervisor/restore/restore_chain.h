// What guard's own restores have done to one session so far: its restore
// chain. Every `guard undo`, `replay` and `redo` of session X records in
// its meta.json (common/session_meta.h, RestoreOf) the state of X it found
// and the state it left; read in order, they say which state of X the tree
// is in now, how many marked turns are undone (so that `guard undo --turns
// 1` typed again steps one more turn back), which undos a `guard redo`
// can reverse, and whether the last one was interrupted (so that the same
// command typed again finishes it). Specified in docs/restore.md.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/session_meta.h"
#include "common/state_dir.h"
#include "common/status.h"

namespace guard {

struct RestoreChain {
  // Some restore of the session was recorded with its account: the fields
  // below mean something. Otherwise (none, or one recorded by an outer
  // guard, which keeps no account) a restore takes the session as found at
  // its end (undo) or before it (replay), as without a chain.
  bool known = false;
  // The state of the session's paths now, as a boundary (StateAfter).
  uint64_t current = 0;
  // Marked turns undone now (undo --turns).
  uint64_t turns = 0;
  // The last restore was interrupted: each path it planned is in its
  // `from` state or already in its `boundary` state.
  bool partial = false;
  std::string interrupted_id;
  RestoreOf interrupted;
  // The undos in effect, last on top: what `guard redo` reverses.
  struct Undo {
    std::string id;
    RestoreOf account;
    uint64_t turns_before = 0;  // turns undone before it
  };
  std::vector<Undo> undos;
  // The last restore that completed (with `current` its boundary).
  std::string last_id;
};

// The chain of session `id` (whose last journal seq is `last_seq`): every
// restore recorded after it whose account names it, or names one of its
// restores (`guard undo --session <an undo>`, which reverses that undo).
Status LoadRestoreChain(const StateDir& state, const std::string& id, uint64_t last_seq, RestoreChain* chain);

// The interrupted restores that the same command typed again has finished
// since: interrupted id -> the id of the restore that finished it. `metas`
// in session order (their ids'). What `guard sessions` shows of them.
std::map<std::string, std::string> FinishedRestores(const std::vector<SessionMeta>& metas);

}  // namespace guard
