#include "supervisor/review/change_patch.h"

namespace guard {

Status ChangePatch::Prepare(const SessionChanges& changes, const BlobStore* store, const std::string& scratch,
                            const std::string& after_label, ChangePatch* out,
                            const std::function<void(size_t, size_t)>& progress) {
  ChangeTrees::Options options;
  options.progress = progress;
  options.before = true;
  options.skip_git_dirs = true;
  options.for_git = true;
  options.after_label = after_label;
  GUARD_RETURN_IF_ERROR(ChangeTrees::Build(changes, store, scratch + "/trees", options, &out->trees_));
  GUARD_RETURN_IF_ERROR(GitTreeDiff::Create(scratch, &out->git_));
  GUARD_RETURN_IF_ERROR(out->git_.AddTree(out->trees_.before_dir(), &out->before_tree_));
  return out->git_.AddTree(out->trees_.after_dir(), &out->after_tree_);
}

Status ChangePatch::Write(GitTreeDiff::Style style, int out_fd) {
  return git_.Diff(before_tree_, after_tree_, style, out_fd);
}

}  // namespace guard
