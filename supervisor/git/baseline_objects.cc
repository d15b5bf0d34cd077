#include "supervisor/git/baseline_objects.h"

#include <sys/stat.h>

#include <cstdlib>
#include <vector>

#include "supervisor/git/commit_signature.h"

namespace guard {

std::string BaselineRef(const std::string& session_id) { return "refs/guard-baseline/" + session_id; }

Status BaselineObjects::Open(const std::string& root, const std::string& state_dir, const std::string& session_id,
                             std::unique_ptr<BaselineObjects>* out) {
  InitGitLibrary();
  std::unique_ptr<BaselineObjects> b(new BaselineObjects());
  GUARD_RETURN_IF_ERROR(WorkTreeRepo::Open(root, state_dir, &b->repo_));
  b->index_ = IndexOids::Load(b->repo_);
  b->ref_ = BaselineRef(session_id);
  *out = std::move(b);
  return Status::Ok();
}

namespace {

GUARD_GIT_DELETER(GitBlobFree, git_blob, git_blob_free);
GUARD_GIT_DELETER(GitTreebuilderFree, git_treebuilder, git_treebuilder_free);

bool Exists(const std::string& path) {
  struct stat st;
  return !path.empty() && ::lstat(path.c_str(), &st) == 0;
}

// A configuration value set at all (any level), or false.
bool ConfigSet(git_repository* repo, const char* name) {
  git_config* cfg = nullptr;
  if (git_repository_config_snapshot(&cfg, repo) < 0) return true;  // cannot tell: assume set
  git_config_entry* e = nullptr;
  const int rc = git_config_get_entry(&e, cfg, name);
  git_config_entry_free(e);
  git_config_free(cfg);
  return rc != GIT_ENOTFOUND;
}

}  // namespace

void BaselineObjects::AttributeFilesUnderRoot(bool any) {
  if (any) return;
  git_repository* r = repo_.get();
  // Between the work tree's top and the root (the walk saw the root's).
  std::string probe;
  if (!repo_.RepoPath("x", &probe)) return;
  const std::string prefix = probe.substr(0, probe.size() - 1);  // "" or "sub/dir/"
  if (Exists(repo_.work_tree() + "/.gitattributes")) return;
  for (size_t at = prefix.find('/'); at != std::string::npos; at = prefix.find('/', at + 1)) {
    if (Exists(repo_.work_tree() + "/" + prefix.substr(0, at) + "/.gitattributes")) return;
  }
  const char* gitdir = git_repository_path(r);  // with a trailing slash
  if (gitdir == nullptr || Exists(std::string(gitdir) + "info/attributes")) return;
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  const std::string user = xdg != nullptr && *xdg != '\0' ? std::string(xdg) + "/git/attributes"
                           : home != nullptr             ? std::string(home) + "/.config/git/attributes"
                                                         : std::string();
  if (Exists(user) || Exists("/etc/gitattributes") || Exists("/usr/etc/gitattributes")) return;
  for (const char* name : {"core.attributesFile", "core.autocrlf", "core.eol"}) {
    if (ConfigSet(r, name)) return;
  }
  index_.AssumeNoFilters();
}

bool BaselineObjects::Find(const std::string& rel, const FileState& st, std::string* id) {
  std::string path;
  if (!repo_.RepoPath(rel, &path)) return false;
  git_oid oid;
  if (!index_.Find(path, st, &oid)) return false;
  *id = OidHex(oid);
  used_.insert(*id);
  return true;
}

Status BaselineObjects::Fetch(const std::string& id, BlobStore* store, BlobKey* key, uint64_t* size) {
  git_oid oid;
  if (git_oid_fromstr(&oid, id.c_str()) < 0) return Status::InvalidArgument("not a git object id: " + id);
  git_blob* blob = nullptr;
  int rc = git_blob_lookup(&blob, repo_.get(), &oid);
  if (rc < 0) return GitError(rc, "baseline blob " + id);
  std::unique_ptr<git_blob, GitBlobFree> owned(blob);
  const auto n = static_cast<size_t>(git_blob_rawsize(blob));
  const char* data = static_cast<const char*>(git_blob_rawcontent(blob));
  // libgit2 is told not to verify what it reads (git_handles.cc): a blob
  // rewritten in .git/objects since the baseline must not pass for it.
  git_oid check;
  if (git_odb_hash(&check, data, n, GIT_OBJECT_BLOB) < 0 || !git_oid_equal(&check, &oid)) {
    return Status::Corruption("baseline blob " + id + " does not hash to its id");
  }
  GUARD_RETURN_IF_ERROR(store->PutBytes(std::string_view(data, n), key));
  *size = n;
  return Status::Ok();
}

Status BaselineObjects::Pin() {
  if (used_.empty()) return Status::Ok();
  git_repository* r = repo_.get();
  git_treebuilder* tb = nullptr;
  int rc = git_treebuilder_new(&tb, r, nullptr);
  if (rc < 0) return GitError(rc, "the baseline's tree");
  std::unique_ptr<git_treebuilder, GitTreebuilderFree> builder(tb);
  for (const std::string& id : used_) {
    git_oid oid;
    if (git_oid_fromstr(&oid, id.c_str()) < 0) continue;
    rc = git_treebuilder_insert(nullptr, tb, id.c_str(), &oid, GIT_FILEMODE_BLOB);
    if (rc < 0) return GitError(rc, "the baseline's tree");
  }
  git_oid tree_id;
  rc = git_treebuilder_write(&tree_id, tb);
  if (rc < 0) return GitError(rc, "the baseline's tree");
  git_tree* t = nullptr;
  rc = git_tree_lookup(&t, r, &tree_id);
  if (rc < 0) return GitError(rc, "the baseline's tree");
  GitTree tree(t);
  GitSignature sig;
  GUARD_RETURN_IF_ERROR(CommitSignature(r, &sig));
  const std::string message = "guard: watch mode's baseline (" + std::to_string(used_.size()) +
                              " blobs kept from git gc while the session runs)\n";
  git_oid commit_id;
  rc = git_commit_create(&commit_id, r, nullptr, sig.get(), sig.get(), nullptr, message.c_str(), tree.get(), 0,
                         nullptr);
  if (rc < 0) return GitError(rc, "the baseline's commit");
  git_reference* ref = nullptr;
  rc = git_reference_create(&ref, r, ref_.c_str(), &commit_id, 1, "guard: watch baseline");
  if (rc < 0) return GitError(rc, ref_);
  git_reference_free(ref);
  pinned_ = true;
  return Status::Ok();
}

Status BaselineObjects::Unpin() {
  if (!pinned_) return Status::Ok();
  git_reference* ref = nullptr;
  int rc = git_reference_lookup(&ref, repo_.get(), ref_.c_str());
  if (rc == GIT_ENOTFOUND) return Status::Ok();
  if (rc < 0) return GitError(rc, ref_);
  rc = git_reference_delete(ref);
  git_reference_free(ref);
  if (rc < 0) return GitError(rc, ref_);
  pinned_ = false;
  return Status::Ok();
}

}  // namespace guard
