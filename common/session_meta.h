// SessionMeta: what is known of one session, kept as sessions/<id>/meta.json
// (written atomically; specified in docs/format.md, "Session metadata").
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace guard {

enum class SessionState {
  kRunning,    // supervisor alive (or died without sealing: see NeedsRecovery)
  kFinished,   // the command exited by itself
  kKilled,     // the command was killed by a signal
  kCrashed,    // the command died of a crash signal (SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE)
  kRecovered,  // the supervisor died; a later guard sealed the session
};
const char* SessionStateName(SessionState s);
bool ParseSessionState(const std::string& s, SessionState* out);

// What a restore session (`guard undo`, `replay`, `redo`) did, as its
// meta.json's optional "restore" object says (docs/format.md): which
// session it restored, between which of that session's states, and
// whether it was interrupted before it finished.
struct RestoreOf {
  std::string verb;                 // "undo", "replay" or "redo"; "" = not a restore session
  std::string of;                   // the session it restored
  uint64_t from = 0;                // the state of `of`'s paths it expected to find (a journal seq)
  uint64_t boundary = 0;            // the state it put them in: SessionHistory::StateAfter(path, boundary)
  uint64_t turns = 0;               // undo --turns: marked turns of `of` undone once it is done, in all
  std::vector<std::string> paths;   // root-relative; empty: every path
  bool interrupted = false;         // stopped (a signal, a kill) before it applied its whole plan
  uint64_t planned = 0;             // paths its plan changes
  uint64_t done = 0;                // of those, changed before it was interrupted
};

struct SessionMeta {
  static constexpr int kFormatVersion = 1;

  std::string id;                  // NewSessionId()
  std::string root;                // absolute, canonical
  std::vector<std::string> argv;   // the command
  int64_t started_ns = 0;          // wall clock
  int64_t ended_ns = 0;            // 0 while running or unknown
  SessionState state = SessionState::kRunning;
  int exit_code = -1;              // -1 unknown
  int signal = 0;                  // the signal that ended the command, 0 if none
  uint64_t ops = 0;                // operation records
  uint64_t files = 0;              // distinct paths under the root changed
  pid_t supervisor_pid = 0;
  uint64_t supervisor_start_ticks = 0;  // /proc/PID/stat field 22, to tell pid reuse apart
  std::string guard_version;
  // The commit HEAD named when the session started, when its root is in a
  // git work tree with a commit ("" otherwise): the first checkpoint's
  // parent (docs/workflows.md). Optional in meta.json ("git_head").
  std::string git_head;
  // The shared-memory ring the shim streams its records through (--mode
  // auto; common/ring_segment.h), "" without one: recovery drains what a
  // dead supervisor left in it. Optional in meta.json ("ring").
  std::string ring;
  // Set once guard saw, in this session, what no honest producer makes (a
  // forged ring record or claim: docs/security.md): from `incomplete_ns`
  // (wall clock) on, changes may be missing from the log. `incomplete_what`
  // says what was seen. The journal's first `incomplete` record is the
  // source; meta.json repeats it for listings ("log_incomplete", optional).
  int64_t incomplete_ns = 0;
  std::string incomplete_what;
  // A restore session's own account (guard undo, replay, redo); verb ""
  // otherwise. Optional in meta.json ("restore").
  RestoreOf restore;
};

// A new id: "YYYYMMDD-HHMMSS-mmmxxxx" (UTC, milliseconds, 4 hex digits): sorts by
// start time and is unique in practice; ties are broken by the directory
// creation, which is O_EXCL.
std::string NewSessionId();
// Makes a new session's directory below `sessions_dir` (mode 0700, by
// mkdir, so that a tie on the id is caught): sets meta->id and *dir.
Status CreateSessionDir(const std::string& sessions_dir, SessionMeta* meta, std::string* dir);
std::string FormatIso8601(int64_t wall_ns);

Status SaveSessionMeta(const std::string& path, const SessionMeta& m);
Status LoadSessionMeta(const std::string& path, SessionMeta* m);
std::string SessionMetaToJson(const SessionMeta& m);  // as in meta.json, one line

// The one line that says a session's log is incomplete ("" when it is not):
// what was seen, from when, and that changes after it may be missing.
std::string LogIncompleteLine(const SessionMeta& m);

// Start time of process `pid` in clock ticks since boot, or 0 if it is gone.
uint64_t ProcessStartTicks(pid_t pid);
// Whether `m` is a session of guard's own restore (`guard undo`, `replay`,
// `redo`), recorded by itself or by an outer guard (`guard __restore`).
bool IsRestoreSession(const SessionMeta& m);
// What the restore session `m` did: m.restore, or for a restore recorded
// by an outer guard what its command line says (verb and of alone).
RestoreOf RestoreOfSession(const SessionMeta& m);

// Whether the supervisor that owns `m` is still alive (pid and start time match).
bool SupervisorAlive(const SessionMeta& m);

}  // namespace guard
