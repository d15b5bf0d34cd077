// Owners for libgit2 objects, and libgit2's errors as a Status. Every
// libgit2 object guard holds is one of these unique_ptrs, so that an early
// return frees it; get() is how a raw pointer is handed to libgit2.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "supervisor/git/git2_api.h"

namespace guard {

// A deleter calling libgit2's `free` (a function, or the lazy pointer of
// git2_api.h) on a non-null pointer.
#define GUARD_GIT_DELETER(Name, T, free)   \
  struct Name {                            \
    void operator()(T* p) const {          \
      if (p != nullptr) free(p);           \
    }                                      \
  }

GUARD_GIT_DELETER(GitRepositoryFree, git_repository, git_repository_free);
GUARD_GIT_DELETER(GitTreeFree, git_tree, git_tree_free);
GUARD_GIT_DELETER(GitTreeEntryFree, git_tree_entry, git_tree_entry_free);
GUARD_GIT_DELETER(GitCommitFree, git_commit, git_commit_free);
GUARD_GIT_DELETER(GitReferenceFree, git_reference, git_reference_free);
GUARD_GIT_DELETER(GitSignatureFree, git_signature, git_signature_free);
GUARD_GIT_DELETER(GitIndexFree, git_index, git_index_free);
GUARD_GIT_DELETER(GitOdbFree, git_odb, git_odb_free);

using GitRepository = std::unique_ptr<git_repository, GitRepositoryFree>;
using GitTree = std::unique_ptr<git_tree, GitTreeFree>;
using GitTreeEntry = std::unique_ptr<git_tree_entry, GitTreeEntryFree>;
using GitCommit = std::unique_ptr<git_commit, GitCommitFree>;
using GitReference = std::unique_ptr<git_reference, GitReferenceFree>;
using GitSignature = std::unique_ptr<git_signature, GitSignatureFree>;
using GitIndex = std::unique_ptr<git_index, GitIndexFree>;
using GitOdb = std::unique_ptr<git_odb, GitOdbFree>;

// Initialises libgit2 once per process (it is reference counted; guard
// never shuts it down: the process ends first).
void InitGitLibrary();

// The status for libgit2 return code `rc` (< 0), with libgit2's own message
// for the last error of this thread: "<what>: <message>". GIT_ENOTFOUND
// maps to kNotFound, anything else to kIOError.
Status GitError(int rc, const std::string& what);

// 40 hex digits.
std::string OidHex(const git_oid& oid);

}  // namespace guard
