#include "supervisor/git/commit_signature.h"

namespace guard {

Status CommitSignature(git_repository* repo, GitSignature* out) {
  git_signature* sig = nullptr;
  int rc = git_signature_default(&sig, repo);
  if (rc < 0) rc = git_signature_now(&sig, "guard", "guard@localhost");
  if (rc < 0) return GitError(rc, "commit signature");
  out->reset(sig);
  return Status::Ok();
}

}  // namespace guard
