#include "supervisor/git/session_commit.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>

#include "common/file_io.h"
#include "supervisor/git/commit_intent.h"
#include "supervisor/git/commit_signature.h"
#include "supervisor/git/git_test_pause.h"
#include "supervisor/git/prepared_index.h"
#include "supervisor/review/session_changes.h"

namespace guard {

Status SessionCommit::Plan(const SessionHistory& history, const BlobStore& store, const std::string& state_dir,
                           const std::vector<std::string>& only, bool include_ignored, SessionCommit* out) {
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
  TreeOptions options;
  options.leave_out_ignored = !include_ignored;
  GUARD_RETURN_IF_ERROR(SessionTree::Build(out->repo_, base.get(), changes, store, &out->tree_, options));

  std::map<std::string, const PathChange*> by_repo_path;
  for (const PathChange& c : changes.paths()) {
    std::string p;
    if (out->repo_.RepoPath(c.path, &p)) by_repo_path[p] = &c;
  }
  git_tree* t = nullptr;
  rc = git_tree_lookup(&t, r, &out->tree_.tree);
  if (rc < 0) return GitError(rc, "the commit's tree");
  GitTree tree(t);
  for (const TreeChange& c : out->tree_.changes) {
    auto it = by_repo_path.find(c.path);
    if (it != by_repo_path.end()) GUARD_RETURN_IF_ERROR(out->CheckWorkTree(c.path, it->second->after, tree.get()));
  }
  return Status::Ok();
}

Status SessionCommit::CheckWorkTree(const std::string& path, const FileState& end, const git_tree* tree) {
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
      // Both ids without holding either content whole: the file's hashed
      // by libgit2 in pieces (as it is, no filters: the commit's blob is
      // the session's bytes), the end state's the tree's.
      git_oid now;
      int rc = git_odb_hashfile(&now, abs.c_str(), GIT_OBJECT_BLOB);
      if (rc < 0) return GitError(rc, abs);
      git_tree_entry* e = nullptr;
      rc = git_tree_entry_bypath(&e, tree, path.c_str());
      if (rc < 0) return GitError(rc, "the commit's entry " + path);
      GitTreeEntry owned(e);
      if (!git_oid_equal(&now, git_tree_entry_id(e))) conflict("changed since the session");
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
  // Everything the index needs is checked and written before anything
  // else: an index guard cannot write is refused with nothing done. The
  // order after it and its repair are commit_intent.h's.
  PreparedIndex prepared;
  GUARD_RETURN_IF_ERROR(PreparedIndex::Prepare(r, repo_.work_tree(), tree.get(), tree_.changes, &prepared));
  GUARD_RETURN_IF_ERROR(pack_.Write(objects, tree_.stored, store_));
  CommitIntent intent;
  intent.git_dir = git_repository_path(r);
  if (intent.git_dir.back() != '/') intent.git_dir += '/';
  intent.ref = target_;
  intent.old_commit = has_head_ ? OidHex(head_) : "";
  intent.new_commit = OidHex(id);
  intent.index_file = prepared.path();
  intent.index_ino = prepared.ino();
  const std::string intent_path = CommitIntent::PathFor(state_dir_, intent.git_dir);
  UniqueFd held;
  GUARD_RETURN_IF_ERROR(intent.Record(intent_path, &held));
  prepared.Release();  // the intent names it now: RepairCommit removes it
  // Any failure from here on leaves the branch and the index as they were.
  auto undo = [&](Status why) {
    std::string line;
    Status repaired = RepairCommit(intent, intent_path, &line);
    if (!repaired.ok()) return Status::IOError(why.ToString() + "; and mending: " + repaired.ToString());
    return why;
  };
  GitTestPause("commit-intent");

  const std::string index = prepared.index_path(), lock = index + ".lock";
  if (::link(intent.index_file.c_str(), lock.c_str()) != 0) {
    int err = errno;
    if (err == EEXIST) {
      return undo(Status::InvalidArgument(lock + " exists: another git process is running (if none is, remove the file)"));
    }
    return undo(Status::FromErrno("link " + lock, err));
  }
  GitTestPause("commit-locked");
  if (!prepared.IndexUnchanged()) {
    return undo(Status::InvalidArgument("the index changed while guard prepared its own: run guard commit again"));
  }

  std::string first_line = msg.substr(0, msg.find('\n'));
  std::string log = std::string(has_head_ ? "commit: " : "commit (initial): ") + first_line;
  git_reference* moved = nullptr;
  rc = git_reference_create_matching(&moved, r, target_.c_str(), &id, 1, has_head_ ? &head_ : nullptr, log.c_str());
  if (rc < 0) return undo(GitError(rc, target_ + " (moved since the plan?)"));
  git_reference_free(moved);
  GitTestPause("commit-ref");

  if (::rename(lock.c_str(), index.c_str()) != 0) {
    Status why = Status::FromErrno("rename " + lock + " onto the index", errno);
    // The branch goes back first: RepairCommit would otherwise finish.
    if (has_head_) {
      rc = git_reference_create_matching(&moved, r, target_.c_str(), &head_, 1, &id, "guard commit: rolled back");
      if (rc == 0) git_reference_free(moved);
    } else {
      rc = git_reference_remove(r, target_.c_str());
    }
    if (rc < 0) return Status::IOError(why.ToString() + "; and moving " + target_ + " back: " + GitError(rc, "").ToString());
    return undo(why);
  }
  GUARD_RETURN_IF_ERROR(FsyncDir(intent.git_dir));
  *commit_hex = OidHex(id);
  GitTestPause("commit-done");
  std::string line;
  return RepairCommit(intent, intent_path, &line);  // removes the prepared name and the intent
}

}  // namespace guard
