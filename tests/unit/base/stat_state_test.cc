// supervisor/base/stat_state.h: what the journal keeps of an lstat.
#define BOOST_TEST_MODULE stat_state
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>

#include "supervisor/base/stat_state.h"

namespace guard {
namespace {

BOOST_AUTO_TEST_CASE(TypesOtherThanFileDirectoryAndSymlinkAreOther) {
  BOOST_TEST((FileTypeOfMode(S_IFREG | 0644) == FileType::kRegular));
  BOOST_TEST((FileTypeOfMode(S_IFDIR | 0755) == FileType::kDirectory));
  BOOST_TEST((FileTypeOfMode(S_IFLNK | 0777) == FileType::kSymlink));
  for (mode_t m : {S_IFIFO, S_IFSOCK, S_IFCHR, S_IFBLK}) BOOST_TEST((FileTypeOfMode(m) == FileType::kOther));
}

BOOST_AUTO_TEST_CASE(StateKeepsModeBitsSizeAndMtimeInNanoseconds) {
  struct stat st = {};
  st.st_mode = S_IFREG | 04751;
  st.st_size = 1234567;
  st.st_mtim.tv_sec = 1700000000;
  st.st_mtim.tv_nsec = 123456789;
  const FileState s = FileStateOfStat(st);
  BOOST_TEST((s.type == FileType::kRegular));
  BOOST_TEST(s.mode == 04751u);
  BOOST_TEST(s.size == 1234567u);
  BOOST_TEST(s.mtime_ns == 1700000000123456789);
  BOOST_TEST(s.symlink_target.empty());
  BOOST_TEST((s.blob.kind == BlobRef::Kind::kNone));
  st.st_mtim.tv_sec = -1;  // before 1970
  st.st_mtim.tv_nsec = 500000000;
  BOOST_TEST(FileStateOfStat(st).mtime_ns == -500000000);
}

}  // namespace
}  // namespace guard
