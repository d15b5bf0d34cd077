// The protected root: --root DIR, else the top of the git work tree that
// contains the current directory, else the current directory.
#pragma once

#include <string>

#include "common/status.h"

namespace guard {

// `explicit_root` may be empty. *out is absolute and canonical.
Status FindRoot(const std::string& explicit_root, std::string* out);

// The current directory, canonical. One that has been removed (`rm -rf`
// of the tree a shell stands in) still has the path it had, which
// /proc/self/cwd gives with " (deleted)" appended: *out is that path and
// *removed is set.
Status CurrentDirectory(std::string* out, bool* removed);

// --root DIR of a command that reads recorded sessions: canonical when DIR
// exists; when it does not (a session removed its own root), the lexical
// absolute form of DIR, which is how the sessions of that root recorded it
// if no symlink leads to it.
Status ResolveRecordedRoot(const std::string& dir, std::string* out);

}  // namespace guard
