#include "supervisor/git/index_oids.h"

#include <sys/stat.h>

namespace guard {
namespace {

int64_t Ns(const struct timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec; }

int64_t Ns(const git_index_time& t) { return static_cast<int64_t>(t.seconds) * 1000000000 + t.nanoseconds; }

bool SameStat(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size && Ns(a.st_mtim) == Ns(b.st_mtim) &&
         Ns(a.st_ctim) == Ns(b.st_ctim);
}

}  // namespace

IndexOids IndexOids::Load(const WorkTreeRepo& repo) {
  IndexOids out;
  git_index* index = nullptr;
  if (git_repository_index(&index, repo.get()) < 0) return out;
  GitIndex owned(index);
  const char* path = git_index_path(index);
  struct stat before, after;
  if (path == nullptr || ::stat(path, &before) != 0) return out;
  // Forced: the repository may have read it before the session changed it.
  if (git_index_read(index, 1) < 0) return out;
  if (::stat(path, &after) != 0 || !SameStat(before, after)) return out;  // rewritten meanwhile
  git_odb* odb = nullptr;
  if (git_repository_odb(&odb, repo.get()) < 0) return out;
  out.odb_.reset(odb);
  out.repo_ = repo.get();
  out.index_ = std::move(owned);
  out.stamp_ns_ = Ns(before.st_mtim);
  return out;
}

bool IndexOids::Find(const std::string& path, const FileState& st, git_oid* out) const {
  if (index_ == nullptr || st.type != FileType::kRegular || st.size == 0) return false;
  // Only a state read with its stat signature says which inode state it is.
  if (st.ino == 0 || st.ctime_ns == 0) return false;
  const git_index_entry* e = git_index_get_bypath(index_.get(), path.c_str(), 0);
  if (e == nullptr) return false;
  // Entries git itself would not trust: smudged (size 0: racily clean when
  // the index was written), assume-unchanged (git does not look at the file
  // at all), skip-worktree, intent-to-add (no blob yet).
  if (e->file_size == 0 || (e->flags & GIT_INDEX_ENTRY_VALID) != 0 ||
      (e->flags_extended & (GIT_INDEX_ENTRY_SKIP_WORKTREE | GIT_INDEX_ENTRY_INTENT_TO_ADD)) != 0) {
    return false;
  }
  // A regular file's mode, with the executable bit as git keeps it.
  const uint32_t mode = (st.mode & 0100) ? 0100755 : 0100644;
  if (e->mode != mode) return false;
  // git keeps the low 32 bits of size, inode and device.
  if (e->file_size != static_cast<uint32_t>(st.size) || e->ino != static_cast<uint32_t>(st.ino) ||
      e->dev != static_cast<uint32_t>(st.dev)) {
    return false;
  }
  const int64_t mtime = Ns(e->mtime), ctime = Ns(e->ctime);
  if (mtime != st.mtime_ns || ctime != st.ctime_ns) return false;
  // Racily clean: changed in the tick the index was written in, perhaps.
  if (mtime >= stamp_ns_ || ctime >= stamp_ns_) return false;
  // The blob is what git stored: the file's bytes only if no clean filter
  // changed them. Its size must be the file's (catches CRLF conversion,
  // LFS pointers, most `ident` expansions, and a blob the repository lacks),
  // and no filter may apply to the path: neither one libgit2 runs (crlf,
  // ident) nor a filter driver it does not know (lfs, crypt).
  size_t blob_size = 0;
  git_object_t type = GIT_OBJECT_INVALID;
  if (git_odb_read_header(&blob_size, &type, odb_.get(), &e->id) < 0 || type != GIT_OBJECT_BLOB ||
      blob_size != st.size) {
    return false;
  }
  if (no_filters_) {
    git_oid_cpy(out, &e->id);
    ++used_;
    return true;
  }
  git_filter_list* filters = nullptr;
  if (git_filter_list_load(&filters, repo_, nullptr, path.c_str(), GIT_FILTER_TO_ODB, GIT_FILTER_DEFAULT) < 0) {
    return false;
  }
  if (filters != nullptr) {
    git_filter_list_free(filters);
    return false;
  }
  const char* driver = nullptr;
  if (git_attr_get(&driver, repo_, 0, path.c_str(), "filter") < 0 ||
      git_attr_value(driver) != GIT_ATTR_VALUE_UNSPECIFIED) {
    return false;
  }
  git_oid_cpy(out, &e->id);
  ++used_;
  return true;
}

}  // namespace guard
