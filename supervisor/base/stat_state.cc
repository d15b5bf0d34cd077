#include "supervisor/base/stat_state.h"

namespace guard {

FileType FileTypeOfMode(mode_t mode) {
  if (S_ISREG(mode)) return FileType::kRegular;
  if (S_ISDIR(mode)) return FileType::kDirectory;
  if (S_ISLNK(mode)) return FileType::kSymlink;
  return FileType::kOther;
}

FileState FileStateOfStat(const struct stat& st) {
  FileState s;
  s.type = FileTypeOfMode(st.st_mode);
  s.mode = st.st_mode & 07777;
  s.size = static_cast<uint64_t>(st.st_size);
  s.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return s;
}

}  // namespace guard
