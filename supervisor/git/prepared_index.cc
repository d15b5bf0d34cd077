#include "supervisor/git/prepared_index.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>

#include "common/file_io.h"
#include "common/unique_fd.h"

namespace guard {
namespace {

bool SameFile(const struct stat& a, const struct stat& b) {
  return a.st_ino == b.st_ino && a.st_dev == b.st_dev && a.st_size == b.st_size &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec &&
         a.st_ctim.tv_sec == b.st_ctim.tv_sec && a.st_ctim.tv_nsec == b.st_ctim.tv_nsec;
}

// Copies `from` into the open file `to_fd`.
Status CopyInto(const std::string& from, int to_fd, const std::string& to) {
  UniqueFd in;
  GUARD_RETURN_IF_ERROR(OpenFile(from, O_RDONLY | O_CLOEXEC, 0, &in));
  char buf[64 << 10];
  for (;;) {
    size_t got = 0;
    GUARD_RETURN_IF_ERROR(ReadFull(in.get(), buf, sizeof buf, &got, from));
    if (got == 0) return Status::Ok();
    GUARD_RETURN_IF_ERROR(WriteAll(to_fd, buf, got, to));
    if (got < sizeof buf) return Status::Ok();
  }
}

// The entry for committed path `path`, whose tree entry is `e`.
Status EntryFor(const std::string& work_tree, const std::string& path, const git_tree_entry* e,
                git_index_entry* out) {
  *out = git_index_entry{};
  out->mode = git_tree_entry_filemode(e);
  git_oid_cpy(&out->id, git_tree_entry_id(e));
  if (out->mode != GIT_FILEMODE_COMMIT) {
    // The plan proved the file holds this content: its stat data lets git
    // trust the entry as `git add` would have left it.
    std::string abs = work_tree + "/" + path;
    struct stat st;
    if (::lstat(abs.c_str(), &st) != 0) return Status::FromErrno(abs, errno);
    out->ctime.seconds = static_cast<int32_t>(st.st_ctim.tv_sec);
    out->ctime.nanoseconds = static_cast<uint32_t>(st.st_ctim.tv_nsec);
    out->mtime.seconds = static_cast<int32_t>(st.st_mtim.tv_sec);
    out->mtime.nanoseconds = static_cast<uint32_t>(st.st_mtim.tv_nsec);
    out->dev = static_cast<uint32_t>(st.st_dev);
    out->ino = static_cast<uint32_t>(st.st_ino);
    out->uid = st.st_uid;
    out->gid = st.st_gid;
    out->file_size = static_cast<uint32_t>(st.st_size);
  }
  return Status::Ok();
}

}  // namespace

PreparedIndex::~PreparedIndex() {
  if (!path_.empty()) ::unlink(path_.c_str());
}

bool PreparedIndex::IndexUnchanged() const {
  struct stat now;
  if (::stat(index_path_.c_str(), &now) != 0) return !had_index_ && errno == ENOENT;
  return had_index_ && SameFile(now, index_st_);
}

Status PreparedIndex::Prepare(git_repository* repo, const std::string& work_tree, const git_tree* tree,
                              const std::vector<TreeChange>& changes, PreparedIndex* out) {
  std::string git_dir = git_repository_path(repo);
  if (git_dir.empty() || git_dir.back() != '/') git_dir += '/';
  out->index_path_ = git_dir + "index";
  struct stat st;
  if (::lstat((out->index_path_ + ".lock").c_str(), &st) == 0) {
    return Status::InvalidArgument(out->index_path_ +
                                   ".lock exists: another git process is running (if none is, remove the file)");
  }
  out->had_index_ = ::stat(out->index_path_.c_str(), &out->index_st_) == 0;
  if (!out->had_index_ && errno != ENOENT) return Status::FromErrno(out->index_path_, errno);

  std::string tmp = git_dir + "guard-index-XXXXXX";
  int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(tmp, errno);
  out->path_ = tmp;
  UniqueFd owned(fd);
  if (out->had_index_) GUARD_RETURN_IF_ERROR(CopyInto(out->index_path_, fd, tmp));
  owned = UniqueFd();
  if (!out->IndexUnchanged()) return Status::InvalidArgument("the index changed while guard read it: try again");
  if (!out->had_index_) ::unlink(tmp.c_str());  // libgit2 starts an empty index where none is

  git_index* idx = nullptr;
  int rc = git_index_open(&idx, tmp.c_str());
  if (rc < 0) {
    Status s = GitError(rc, "reading the index");
    if (s.message().find("extension") != std::string::npos) {
      return Status::InvalidArgument(s.message() +
                                     " (a split or sparse index: run `git update-index --no-split-index` "
                                     "or `git sparse-checkout disable`, then guard commit again)");
    }
    return s;
  }
  GitIndex index(idx);
  for (const TreeChange& c : changes) {
    if (c.kind == 'D') {
      rc = c.was_tree ? git_index_remove_directory(idx, c.path.c_str(), 0) : git_index_remove_bypath(idx, c.path.c_str());
      if (rc < 0) return GitError(rc, "index entry " + c.path);
      continue;
    }
    git_tree_entry* e = nullptr;
    rc = git_tree_entry_bypath(&e, tree, c.path.c_str());
    if (rc < 0) return GitError(rc, "the commit's entry " + c.path);
    GitTreeEntry owned_entry(e);
    git_index_entry entry;
    GUARD_RETURN_IF_ERROR(EntryFor(work_tree, c.path, e, &entry));
    entry.path = c.path.c_str();
    git_index_conflict_remove(idx, c.path.c_str());  // none is not an error worth reporting
    rc = git_index_add(idx, &entry);
    if (rc < 0) return GitError(rc, "index entry " + c.path);
  }
  rc = git_index_write(idx);
  if (rc < 0) return GitError(rc, "writing the new index");
  // git_index_write renamed a new file over `tmp`: its inode is the one a
  // commit intent names.
  if (::lstat(tmp.c_str(), &st) != 0) return Status::FromErrno(tmp, errno);
  out->ino_ = st.st_ino;
  UniqueFd sync;
  GUARD_RETURN_IF_ERROR(OpenFile(tmp, O_RDONLY | O_CLOEXEC, 0, &sync));
  return FsyncFd(sync.get(), tmp);
}

}  // namespace guard
