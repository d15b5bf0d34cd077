// The commit HEAD names, read from the repository's files without libgit2,
// for the one question a session's start asks (SessionMeta::git_head):
// libgit2's first use in a process costs its global init (its TLS
// backend's, the system's CA certificates: about 5 ms of CPU at every
// session's start in a git work tree, measured with tools/bench's
// session_start.py). The common layout only: `.git` a directory owned by
// this user, HEAD a branch (`ref: refs/heads/...`) with its id in a loose
// ref file or in packed-refs, or a detached SHA-1 id. Anything else (a
// `.git` file of a linked work tree or submodule, reftable, SHA-256, a
// foreign owner, a bare repository) is left to libgit2: Read says it does
// not know.
#pragma once

#include <string>

namespace guard {

enum class HeadFile {
  kCommit,   // *hex holds the commit id
  kUnborn,   // HEAD names a branch that has no commit yet: no git_head
  kNone,     // no repository above `root` (before a filesystem boundary)
  kUnknown,  // not the common layout: ask libgit2
};

HeadFile ReadHeadFile(const std::string& root, std::string* hex);

}  // namespace guard
