#include "supervisor/base/stat_state.h"

#include <cerrno>

namespace guard {

FileType FileTypeOfMode(mode_t mode) {
  if (S_ISREG(mode)) return FileType::kRegular;
  if (S_ISDIR(mode)) return FileType::kDirectory;
  if (S_ISLNK(mode)) return FileType::kSymlink;
  return FileType::kOther;
}

void FillFromStat(const struct stat& st, FileState* out) {
  out->type = FileTypeOfMode(st.st_mode);
  out->mode = st.st_mode & 07777;
  out->size = static_cast<uint64_t>(st.st_size);
  out->mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

FileState FileStateOfStat(const struct stat& st) {
  FileState s;
  FillFromStat(st, &s);
  return s;
}

KnownLstat KnownLstat::Of(const std::string& path) {
  KnownLstat k;
  k.made = true;
  if (lstat(path.c_str(), &k.st) != 0) k.err = errno;
  return k;
}

}  // namespace guard
