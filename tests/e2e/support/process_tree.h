// Looking at live processes through /proc, for the tests that kill a guard
// session: which processes descend from guard, which still carry a
// session's GUARD_SESSION, and whether a process is gone.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace guard::e2e {

// Every process below `ancestor` (children, grandchildren, ...), not
// `ancestor` itself, zombies included. A snapshot: the tree may change
// while it is read.
std::vector<pid_t> Descendants(pid_t ancestor);

// Whether `pid` no longer runs: it does not exist or is a zombie (a dead
// process whose parent has not reaped it yet can change nothing).
bool ProcessGone(pid_t pid);

// Live (non-zombie) processes whose environment holds NAME=VALUE exactly.
// guard gives every process of a session GUARD_SESSION=<id>, so this finds
// whatever of a session still runs, wherever it has been reparented.
std::vector<pid_t> ProcessesWithEnv(const std::string& name, const std::string& value);

// Sends `sig` to every process of session `session_id` run by the guard
// `guard_pid` (its descendants, and whatever carries GUARD_SESSION=<id>
// after being reparented), again and again until none is left alive (a
// process may fork while the tree is walked), at most `rounds` times.
// guard itself is spared. Returns how many processes were signalled.
// (guard's own supervisor process, a child of guard_pid, is spared)
int SignalSessionProcesses(pid_t guard_pid, const std::string& session_id, int sig, int rounds = 50);

// Waits until every pid in `pids` is gone, at most `timeout_ms`; returns
// those still alive then.
std::vector<pid_t> WaitGone(const std::vector<pid_t>& pids, int timeout_ms);

// "1234 (bash)" for messages.
std::string DescribeProcess(pid_t pid);

}  // namespace guard::e2e
