// A directory path resolved by the kernel in one call, instead of one lstat
// per component: openat2(O_PATH) of the path, and its canonical name.
//
// The kernel resolves it for guard: in guard's mount namespace, under
// guard's root, with guard's /proc/self. It stands for a tracee's own
// resolution only where those agree (View::IsGuards), and only when no
// /proc/self was on the way: magic links are refused (RESOLVE_NO_MAGICLINKS:
// /proc/self/cwd, /dev/fd/N), and a result under /proc (where /proc/self
// leads) is not taken. Wherever the walk does not apply or fails, the
// caller walks the path component by component, which also gives the error
// the kernel will give the tracee.
#pragma once

#include <string>

#include "common/unique_fd.h"

namespace guard {

// Opens absolute directory path `dir` (O_PATH) into *fd and sets
// *canonical to its name with every symlink resolved and no "." or "..".
// False when the walk does not apply (openat2 unsupported, a magic link on
// the way, a name under /proc) or fails: then *fd and *canonical are unset.
bool WalkDirectory(const std::string& dir, UniqueFd* fd, std::string* canonical);

// `path` (absolute) with "." and empty components dropped and ".." taking
// the previous one away ("/" stays "/"): the canonical name of a path that
// holds no symlink.
std::string LexicallyNormal(const std::string& path);

}  // namespace guard
