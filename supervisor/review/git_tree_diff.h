// GitTreeDiff: a throwaway bare git repository that compares two
// materialized trees. git gives the exact headers `git apply` expects,
// rename detection, mode changes, symlinks, binary detection and patches,
// and quoting of any path.
//
// git runs with a controlled environment: no system or global config, HOME
// inside the scratch directory, no hooks, no excludes, C locale, and
// core.quotepath=on. Attributes a materialized tree carries (.gitattributes
// naming eol conversion, filters or diff drivers) are overridden from
// info/attributes, and ignore files are bypassed with `add -f`, so the
// trees are compared byte for byte as they are.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace guard {

class GitTreeDiff {
 public:
  // Creates the repository in `scratch`/git; the caller owns `scratch`.
  static Status Create(const std::string& scratch, GitTreeDiff* out);

  // Records everything under `work_tree` and returns the id of its tree object.
  Status AddTree(const std::string& work_tree, std::string* tree_id);

  struct Style {
    bool color = false;
    bool binary = false;  // full binary patches (`git apply` can apply them) instead of a mention
    // What git prints: the patch, `--stat` or `--name-only`, as git diff does.
    enum class Format { kPatch, kStat, kNameOnly } format = Format::kPatch;
  };
  // Writes `git diff -M` from tree `from` to tree `to` to `out_fd`.
  Status Diff(const std::string& from, const std::string& to, Style style, int out_fd);

 private:
  std::vector<std::string> Env(const std::string& index, const std::string& work_tree) const;
  std::vector<std::string> Argv(std::vector<std::string> args) const;

  std::string scratch_;
  std::string git_dir_;
  int trees_ = 0;
};

// Whether a path has a component git refuses to track (".git" in any case).
bool PathHasGitDir(const std::string& path);

}  // namespace guard
