// Owners for libgit2 objects, and libgit2's errors as a Status. Every
// libgit2 object guard holds is one of these unique_ptrs, so that an early
// return frees it; get() is how a raw pointer is handed to libgit2.
#pragma once

#include <git2.h>

#include <memory>
#include <string>

#include "common/status.h"

namespace guard {

template <class T, void (*Free)(T*)>
struct GitDeleter {
  void operator()(T* p) const {
    if (p != nullptr) Free(p);
  }
};

using GitRepository = std::unique_ptr<git_repository, GitDeleter<git_repository, git_repository_free>>;
using GitTree = std::unique_ptr<git_tree, GitDeleter<git_tree, git_tree_free>>;
using GitTreeEntry = std::unique_ptr<git_tree_entry, GitDeleter<git_tree_entry, git_tree_entry_free>>;
using GitCommit = std::unique_ptr<git_commit, GitDeleter<git_commit, git_commit_free>>;
using GitReference = std::unique_ptr<git_reference, GitDeleter<git_reference, git_reference_free>>;
using GitSignature = std::unique_ptr<git_signature, GitDeleter<git_signature, git_signature_free>>;
using GitIndex = std::unique_ptr<git_index, GitDeleter<git_index, git_index_free>>;
using GitOdb = std::unique_ptr<git_odb, GitDeleter<git_odb, git_odb_free>>;

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
