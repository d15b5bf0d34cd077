// The tracer's side of the shim's handshake (common/shim_hello.h): a shim
// starting in a process of the session tells what it read from its
// environment (the root, the state directory, the inbox, the session, the
// ring it mapped); the tracer compares it with what the supervisor knows
// and answers agreed or refused. A refused shim captures nothing, so its
// process's calls reach the tracer like any program's: a session process
// that rewrites a child's environment (a static `env GUARD_ROOT=decoy`)
// cannot make that child's shim record into the wrong place or call from
// the stub on a decoy's word (docs/security.md).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "common/shim_hello.h"
#include "common/status.h"
#include "supervisor/trace/syscall_regs.h"

namespace guard {

// A file's identity as the shim reports it: makedev(major, minor) and the
// inode number, both from statx.
struct FileIdentity {
  uint64_t dev = 0;
  uint64_t ino = 0;
  bool operator==(const FileIdentity&) const = default;
};

// What the supervisor gave the shim, and the identities behind the names.
struct ShimTruth {
  std::string root, state_dir, pending, inbox_root, config_dir, session;
  FileIdentity root_id, pending_id, ring_id;
};

// Fills truth->*_id from its paths and `ring_path` (the segment in the
// supervisor's own /dev/shm).
Status IdentifyShimTruth(const std::string& ring_path, ShimTruth* truth);

// The shim's hello and its texts, as read from the tracee.
struct ShimHello {
  guard_shim_hello fixed{};
  std::string root, state_dir, pending, inbox_root, config_dir, session;
};

// "" when `hello` says what `truth` holds; else what differs, for the log.
std::string CompareShimHello(const ShimHello& hello, const ShimTruth& truth);

// Whether a stopped call (number `nr`, arguments `args`) is the handshake.
bool IsShimHello(long nr, const uint64_t args[6]);

// Answers the handshake of stopped tracee `tid`: reads its hello, compares
// it with `truth` (nullptr: the session has no shim, and every hello is
// refused), and sets `*regs` to skip the call with the answer. *why says
// what differed ("" when agreed). The caller writes the registers back.
void AnswerShimHello(pid_t tid, const uint64_t args[6], const ShimTruth* truth, SyscallRegs* regs,
                     std::string* why);

}  // namespace guard
