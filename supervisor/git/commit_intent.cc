#include "supervisor/git/commit_intent.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstdio>

#include "common/file_io.h"
#include "supervisor/git/git_handles.h"

namespace guard {
namespace {

constexpr const char* kFirstLine = "guard commit intent 1";
constexpr const char* kDir = "/git-commits";

// The inode of `path`, or 0 when there is none.
ino_t InodeOf(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

Status Unlink(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Status::FromErrno("unlink " + path, errno);
  return Status::Ok();
}

// Moves `ref` from `from` to `to` (both 40 hex digits) only if it still
// names `from`: false when it names something else.
Status MoveRef(git_repository* repo, const std::string& ref, const std::string& from, const std::string& to,
               const std::string& log) {
  git_oid f, t;
  if (git_oid_fromstr(&f, from.c_str()) != 0 || git_oid_fromstr(&t, to.c_str()) != 0) {
    return Status::Corruption("commit intent: not a commit id");
  }
  git_reference* moved = nullptr;
  int rc = git_reference_create_matching(&moved, repo, ref.c_str(), &t, 1, &f, log.c_str());
  if (rc < 0) return GitError(rc, ref);
  git_reference_free(moved);
  return Status::Ok();
}

}  // namespace

std::string CommitIntent::PathFor(const std::string& state_dir, const std::string& git_dir) {
  char name[32];
  std::snprintf(name, sizeof name, "/%016llx.intent",
                static_cast<unsigned long long>(XXH3_64bits(git_dir.data(), git_dir.size())));
  return state_dir + kDir + name;
}

Status CommitIntent::Record(const std::string& path, UniqueFd* held) const {
  std::string text = std::string(kFirstLine) + "\ngit_dir=" + git_dir + "\nref=" + ref + "\nold=" + old_commit +
                     "\nnew=" + new_commit + "\nindex_file=" + index_file +
                     "\nindex_ino=" + std::to_string(index_ino) + "\n";
  std::string dir = path.substr(0, path.rfind('/'));
  GUARD_RETURN_IF_ERROR(MakeDirs(dir, 0700));
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST) {
    return Status::InvalidArgument("another guard commit of this repository is in progress (" + path + ")");
  }
  if (fd < 0) return Status::FromErrno(path, errno);
  UniqueFd owned(fd);
  // Locked before its first byte: a Repair that opens it now skips it.
  if (::flock(fd, LOCK_EX) != 0) return Status::FromErrno("flock " + path, errno);
  GUARD_RETURN_IF_ERROR(WriteAll(fd, text.data(), text.size(), path));
  GUARD_RETURN_IF_ERROR(FsyncFd(fd, path));
  GUARD_RETURN_IF_ERROR(FsyncDir(dir));
  *held = std::move(owned);
  return Status::Ok();
}

Status CommitIntent::Remove(const std::string& path, UniqueFd* held) {
  Status s = Unlink(path);
  *held = UniqueFd();
  return s;
}

Status CommitIntent::Read(const std::string& path, CommitIntent* out) {
  std::string text;
  GUARD_RETURN_IF_ERROR(ReadFileToString(path, &text));
  *out = CommitIntent();
  size_t at = 0;
  bool first = true;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos) return Status::Corruption(path + ": torn");
    std::string line = text.substr(at, nl - at);
    at = nl + 1;
    if (first) {
      if (line != kFirstLine) return Status::Corruption(path + ": not a commit intent of version 1");
      first = false;
      continue;
    }
    size_t eq = line.find('=');
    if (eq == std::string::npos) return Status::Corruption(path + ": malformed line");
    std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "git_dir") out->git_dir = value;
    else if (key == "ref") out->ref = value;
    else if (key == "old") out->old_commit = value;
    else if (key == "new") out->new_commit = value;
    else if (key == "index_file") out->index_file = value;
    else if (key == "index_ino") out->index_ino = static_cast<ino_t>(std::strtoull(value.c_str(), nullptr, 10));
    // Unknown keys are a later version's additions: ignored.
  }
  if (out->git_dir.empty() || out->ref.empty() || out->new_commit.empty() || out->index_file.empty() ||
      out->index_ino == 0) {
    return Status::Corruption(path + ": incomplete commit intent");
  }
  return Status::Ok();
}

Status RepairCommit(const CommitIntent& intent, const std::string& path, std::string* done) {
  done->clear();
  const std::string index = intent.git_dir + "index";
  const std::string lock = index + ".lock";
  struct stat st;
  if (::stat(intent.git_dir.c_str(), &st) != 0) {
    // The repository is gone: nothing to mend.
    return Unlink(path);
  }
  InitGitLibrary();
  git_repository* r = nullptr;
  int rc = git_repository_open_ext(&r, intent.git_dir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr);
  if (rc < 0) return GitError(rc, intent.git_dir);
  GitRepository repo(r);
  git_oid cur;
  std::string current;
  if (git_reference_name_to_id(&cur, r, intent.ref.c_str()) == 0) current = OidHex(cur);
  const bool lock_ours = InodeOf(lock) == intent.index_ino;
  const bool index_ours = InodeOf(index) == intent.index_ino;
  std::string name = intent.ref.rfind("refs/heads/", 0) == 0 ? intent.ref.substr(11) : intent.ref;
  std::string commit = intent.new_commit.substr(0, 12);
  if (index_ours) {
    *done = "the commit " + commit + " on " + name + " was complete";
  } else if (current == intent.new_commit && lock_ours) {
    if (::rename(lock.c_str(), index.c_str()) != 0) return Status::FromErrno("rename " + lock, errno);
    GUARD_RETURN_IF_ERROR(FsyncDir(intent.git_dir));
    *done = "finished the interrupted commit " + commit + " on " + name + " (its index)";
  } else if (current == intent.new_commit && !intent.old_commit.empty()) {
    GUARD_RETURN_IF_ERROR(MoveRef(r, intent.ref, intent.new_commit, intent.old_commit,
                                  "guard commit: rolled back (its index was never written)"));
    *done = "rolled back the interrupted commit " + commit + " on " + name + ": run guard commit again";
  } else if (current == intent.new_commit) {
    // Onto an unborn branch: the branch goes back to unborn.
    rc = git_reference_remove(r, intent.ref.c_str());
    if (rc < 0) return GitError(rc, intent.ref);
    *done = "rolled back the interrupted commit " + commit + " on " + name + ": run guard commit again";
  } else {
    if (lock_ours) GUARD_RETURN_IF_ERROR(Unlink(lock));
    *done = "the interrupted commit " + commit + " on " + name + " had not moved the branch: nothing committed";
  }
  if (InodeOf(intent.index_file) == intent.index_ino) GUARD_RETURN_IF_ERROR(Unlink(intent.index_file));
  return Unlink(path);
}

Status RepairCommits(const std::string& state_dir, std::vector<std::string>* done) {
  std::string dir = state_dir + kDir;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return errno == ENOENT ? Status::Ok() : Status::FromErrno(dir, errno);
  std::vector<std::string> names;
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 7 && n.compare(n.size() - 7, 7, ".intent") == 0) names.push_back(n);
  }
  ::closedir(d);
  for (const std::string& n : names) {
    std::string path = dir + "/" + n;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;  // removed meanwhile
    UniqueFd held(fd);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) continue;  // a commit in progress
    struct stat st;
    if (::fstat(fd, &st) != 0 || st.st_nlink == 0) continue;  // removed meanwhile
    CommitIntent intent;
    if (st.st_size == 0) {
      // Its writer died between creating it and its first byte.
      GUARD_RETURN_IF_ERROR(Unlink(path));
      continue;
    }
    if (Status s = CommitIntent::Read(path, &intent); !s.ok()) {
      // Torn while it was written: index.lock is taken only after the
      // intent is durable, so nothing was done yet.
      if (s.code() != Status::Code::kCorruption) return s;
      GUARD_RETURN_IF_ERROR(Unlink(path));
      continue;
    }
    std::string line;
    GUARD_RETURN_IF_ERROR(RepairCommit(intent, path, &line));
    done->push_back(line);
  }
  return Status::Ok();
}

}  // namespace guard
