#include "supervisor/git/session_commit.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <map>

#include "common/file_io.h"
#include "supervisor/git/commit_signature.h"
#include "supervisor/review/session_changes.h"

namespace guard {
namespace {

// The git blob id `data` has.
git_oid BlobId(const std::string& data) {
  git_oid id;
  git_odb_hash(&id, data.data(), data.size(), GIT_OBJECT_BLOB);
  return id;
}

}  // namespace

Status SessionCommit::Plan(const SessionHistory& history, const BlobStore& store, const std::string& state_dir,
                           const std::vector<std::string>& only, SessionCommit* out) {
  out->store_ = &store;
  out->root_ = history.meta().root;
  out->state_dir_ = state_dir;
  GUARD_RETURN_IF_ERROR(WorkTreeRepo::Open(out->root_, state_dir, &out->repo_));
  git_repository* r = out->repo_.get();

  git_reference* head = nullptr;
  int rc = git_reference_lookup(&head, r, "HEAD");
  if (rc < 0) return GitError(rc, "HEAD");
  GitReference owned_head(head);
  out->target_ = git_reference_type(head) == GIT_REFERENCE_SYMBOLIC ? git_reference_symbolic_target(head) : "HEAD";
  GitTree base;
  if (out->repo_.HeadCommit(&out->head_).ok()) {
    out->has_head_ = true;
    git_commit* c = nullptr;
    rc = git_commit_lookup(&c, r, &out->head_);
    if (rc < 0) return GitError(rc, "HEAD's commit");
    GitCommit commit(c);
    git_tree* t = nullptr;
    rc = git_commit_tree(&t, c);
    if (rc < 0) return GitError(rc, "HEAD's tree");
    base.reset(t);
  }
  GUARD_RETURN_IF_ERROR(out->pack_.Attach(r));
  SessionChanges changes = SessionChanges::Collect(history, kSessionEnd, only);
  GUARD_RETURN_IF_ERROR(SessionTree::Build(out->repo_, base.get(), changes, store, &out->tree_));

  std::map<std::string, const PathChange*> by_repo_path;
  for (const PathChange& c : changes.paths()) {
    std::string p;
    if (out->repo_.RepoPath(c.path, &p)) by_repo_path[p] = &c;
  }
  for (const TreeChange& t : out->tree_.changes) {
    auto it = by_repo_path.find(t.path);
    if (it != by_repo_path.end()) GUARD_RETURN_IF_ERROR(out->CheckWorkTree(t.path, it->second->after));
  }
  return Status::Ok();
}

Status SessionCommit::CheckWorkTree(const std::string& path, const FileState& end) {
  std::string abs = repo_.work_tree() + "/" + path;
  struct stat st;
  bool exists = ::lstat(abs.c_str(), &st) == 0;
  if (!exists && errno != ENOENT) return Status::FromErrno(abs, errno);
  auto conflict = [&](const std::string& why) { conflicts_.push_back(path + ": " + why); };
  switch (end.type) {
    case FileType::kRegular: {
      if (!exists || !S_ISREG(st.st_mode)) return conflict("not the file the session left"), Status::Ok();
      if (((st.st_mode & S_IXUSR) != 0) != ((end.mode & S_IXUSR) != 0)) {
        return conflict("its execute bit changed since the session"), Status::Ok();
      }
      std::string now, then;
      GUARD_RETURN_IF_ERROR(ReadFileToString(abs, &now));
      GUARD_RETURN_IF_ERROR(store_->ReadToString(end.blob, &then));
      git_oid a = BlobId(now), b = BlobId(then);
      if (!git_oid_equal(&a, &b)) conflict("changed since the session");
      return Status::Ok();
    }
    case FileType::kSymlink: {
      std::string target;
      if (!exists || !S_ISLNK(st.st_mode) || !ReadLinkAt(AT_FDCWD, abs, abs, &target).ok() ||
          target != end.symlink_target) {
        conflict("not the symlink the session left");
      }
      return Status::Ok();
    }
    case FileType::kDirectory:
      if (!exists || !S_ISDIR(st.st_mode)) conflict("not the directory the session left");
      return Status::Ok();
    default:
      if (exists) conflict("exists again since the session removed it");
      return Status::Ok();
  }
}

Status SessionCommit::Apply(const std::string& message, std::string* commit_hex) {
  if (!conflicts_.empty()) return Status::InvalidArgument("paths changed since the session");
  git_repository* r = repo_.get();
  git_tree* t = nullptr;
  int rc = git_tree_lookup(&t, r, &tree_.tree);
  if (rc < 0) return GitError(rc, "the commit's tree");
  GitTree tree(t);
  GitCommit parent;
  if (has_head_) {
    git_commit* c = nullptr;
    rc = git_commit_lookup(&c, r, &head_);
    if (rc < 0) return GitError(rc, "HEAD's commit");
    parent.reset(c);
  }
  GitSignature sig;
  GUARD_RETURN_IF_ERROR(CommitSignature(r, &sig));
  std::string msg = message;
  if (msg.empty() || msg.back() != '\n') msg += '\n';
  const git_commit* parents[1] = {parent.get()};
  git_oid id;
  rc = git_commit_create(&id, r, nullptr, sig.get(), sig.get(), nullptr, msg.c_str(), tree.get(), has_head_ ? 1 : 0,
                         parents);
  if (rc < 0) return GitError(rc, "the commit");
  std::vector<git_oid> objects = tree_.new_objects;
  objects.insert(objects.begin(), id);
  // The objects are durable in their pack before any ref names them.
  GUARD_RETURN_IF_ERROR(pack_.Write(objects));

  std::string first_line = msg.substr(0, msg.find('\n'));
  std::string log = std::string(has_head_ ? "commit: " : "commit (initial): ") + first_line;
  git_reference* moved = nullptr;
  rc = git_reference_create_matching(&moved, r, target_.c_str(), &id, 1, has_head_ ? &head_ : nullptr, log.c_str());
  if (rc < 0) return GitError(rc, target_ + " (moved since the plan?)");
  git_reference_free(moved);
  *commit_hex = OidHex(id);

  // The index, through a repository of its own: blobs git_index_add_bypath
  // writes must reach the disk, not the memory of pack_.
  WorkTreeRepo fresh;
  GUARD_RETURN_IF_ERROR(WorkTreeRepo::Open(root_, state_dir_, &fresh));
  git_index* idx = nullptr;
  rc = git_repository_index(&idx, fresh.get());
  if (rc < 0) return GitError(rc, "the index");
  GitIndex index(idx);
  rc = git_index_read(idx, 0);
  if (rc < 0) return GitError(rc, "reading the index");
  for (const TreeChange& c : tree_.changes) {
    if (c.kind == 'D') {
      rc = c.was_tree ? git_index_remove_directory(idx, c.path.c_str(), 0) : git_index_remove_bypath(idx, c.path.c_str());
    } else {
      rc = git_index_add_bypath(idx, c.path.c_str());
    }
    if (rc < 0) return GitError(rc, "index entry " + c.path + " (the commit " + *commit_hex + " is made)");
  }
  rc = git_index_write(idx);
  if (rc < 0) return GitError(rc, "writing the index (the commit " + *commit_hex + " is made)");
  return Status::Ok();
}

}  // namespace guard
