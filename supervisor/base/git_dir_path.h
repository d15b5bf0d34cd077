// Where a root-relative path lies inside a repository's .git directory, and
// what git keeps there: undo and replay put each part back its own way
// (docs/restore.md, "git's own files"), and export tells the user's own
// files (hooks, config) from git's bookkeeping.
#pragma once

#include <string>

namespace guard {

enum class GitDirPart {
  kGitDir,    // the .git directory itself
  kObject,    // objects/...: content-addressed, written once
  kRef,       // HEAD, refs/...: moved by compare-and-swap
  kIndex,     // index: the staging area, entry by entry
  kRunsCode,  // hooks/..., config, config.worktree: git runs or obeys them
  kOther,     // the rest: packed-refs, logs/, ORIG_HEAD, rebase and merge state, *.lock...
};

struct GitDirPath {
  std::string git_dir;  // root-relative: ".git", "sub/.git"
  std::string inner;    // below it: "refs/heads/main" ("" for the directory itself)
  GitDirPart part = GitDirPart::kOther;
};

// False when `rel` has no component named exactly ".git" (the first one
// counts; a nested repository's .git below it is its own repository only
// when that first .git is not above it).
bool ParseGitDirPath(const std::string& rel, GitDirPath* out);

// Whether a change to it is the user's own (hooks, config, info/exclude,
// description) rather than git's bookkeeping of commits and staging.
bool GitDirPathIsUsers(const GitDirPath& p);

}  // namespace guard
