// The mark channel's transport (mark_channel.h): where a supervisor
// listens, how `guard mark` reaches it, and who is at the other end. The
// protocol and the checks built on these are platform-free
// (mark_channel.cc, mark_listener.cc); these are the platform's:
//   Linux (mark_socket_linux.cc): the abstract name "guard-mark-<pid>"
//     (MarkSocketName), no file anywhere, reachable from the session's
//     namespaces; the peer by SO_PEERCRED, and its pidfd (Linux 6.5), so
//     that a reused pid cannot pass; parents from /proc/PID/stat.
//   macOS (mark_socket_darwin.cc): no abstract names, so a socket file
//     "<state directory>/marks/<pid>", mode 0600 in a 0700 directory,
//     removed when the listener stops; the peer by LOCAL_PEERPID and
//     getpeereid, the same process checked by its start time
//     (proc_pidinfo) before and after its ancestry; parents from
//     sysctl(KERN_PROC_PID).
#pragma once

#include <sys/types.h>

#include <cstddef>

#include "common/status.h"
#include "common/unique_fd.h"

namespace guard::mark_socket {

// Listens for supervisor `self` (this process).
Status Listen(pid_t self, UniqueFd* out);
// Undoes what Listen left outside the socket (macOS: its file).
void Unlisten(pid_t self);
// Connects to supervisor `pid`: false when nobody listens there, or the
// one listening is not `pid` (a process that took the name first).
bool Connect(pid_t pid, UniqueFd* out);
// A connection from the listening socket, close-on-exec; -1 if none.
int Accept(int listening);
// The peer of a connection: its pid, and a token that tells a process
// from a later one with the same pid (PeerIsStill). False when unknown or
// of another user.
bool Peer(int fd, pid_t* pid, uint64_t* token);
// Whether `pid` is still the process the token was taken from.
bool PeerIsStill(int fd, pid_t pid, uint64_t token);
// Sends all of `data` without SIGPIPE.
bool SendAll(int fd, const char* data, size_t n);
// The parent of `pid`, -1 if it is gone.
pid_t ParentOf(pid_t pid);

}  // namespace guard::mark_socket
