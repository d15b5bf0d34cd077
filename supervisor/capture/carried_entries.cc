#include "supervisor/capture/carried_entries.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/file_io.h"
#include "common/os_calls.h"
#include "common/unique_fd.h"
#include "supervisor/base/stat_state.h"
#include "supervisor/base/tree_walk.h"
#include "supervisor/capture/file_state.h"

namespace guard {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

// The content of regular file `name` in `dir_fd`, copied into the store.
Status CopyContent(const TreeEntry& e, BlobStore* store, FileState* state) {
  UniqueFd fd;
  Status opened = OpenFileAt(e.dir_fd, e.name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0, &fd);
  if (!opened.ok()) return Status::FromErrno(e.rel, opened.err());
  return StoreContent(fd.get(), store, state);
}

}  // namespace

Status DescribeLeavingEntries(const std::string& root, const std::string& rel_dir, BlobStore* store,
                              std::vector<Record>* out) {
  Status first_error;
  auto keep = [&](const Status& s, Record* r) {
    if (s.ok()) return;
    r->flags |= kNotCaptured;
    if (first_error.ok()) first_error = s;
  };
  UniqueFd root_fd, dir;
  GUARD_RETURN_IF_ERROR(OpenFile(root, O_PATH | O_DIRECTORY, 0, &root_fd));
  GUARD_RETURN_IF_ERROR(OpenDirBeneath(root_fd.get(), rel_dir, O_RDONLY, &dir));
  Status listed = WalkTree(dir.get(), rel_dir, {}, [&](const TreeEntry& e) {
    Record r;
    r.path = e.rel;
    r.flags = kCarried;
    r.before = FileStateOfStat(e.st);
    switch (r.before.type) {
      case FileType::kDirectory:
        r.kind = OpKind::kRmdir;
        keep(e.listed, &r);  // what was below it is not recorded
        break;
      case FileType::kSymlink:
        r.kind = OpKind::kDelete;
        keep(ReadLinkAt(e.dir_fd, e.name, e.rel, &r.before.symlink_target), &r);
        break;
      case FileType::kRegular:
        r.kind = OpKind::kDelete;
        keep(CopyContent(e, store, &r.before), &r);
        break;
      default:
        r.kind = OpKind::kDelete;
        break;
    }
    out->push_back(std::move(r));
  });
  return listed.ok() ? first_error : listed;
}

Status DescribeArrivingEntries(const std::string& abs_src, const std::string& rel_dest,
                               std::vector<Record>* out) {
  UniqueFd dir;
  GUARD_RETURN_IF_ERROR(OpenFile(abs_src, kDirFlags, 0, &dir));
  size_t first = out->size();
  Status listed = WalkTree(dir.get(), abs_src, {}, [&](const TreeEntry& e) {
    Record r;
    r.path = rel_dest + e.rel.substr(abs_src.size());
    r.flags = kCarried;
    r.new_mode = e.st.st_mode & 07777;
    switch (FileTypeOfMode(e.st.st_mode)) {
      case FileType::kDirectory:
        r.kind = OpKind::kMkdir;
        break;
      case FileType::kRegular:
        r.kind = OpKind::kCreate;
        break;
      case FileType::kSymlink:
        r.kind = OpKind::kSymlink;
        r.new_mode = 0;
        (void)ReadLinkAt(e.dir_fd, e.name, e.rel, &r.target);  // unreadable: the link is recorded all the same
        break;
      default:
        r.kind = OpKind::kMknod;
        break;
    }
    out->push_back(std::move(r));
  });
  // Deepest first is the walk's order; reversed, every directory comes
  // before what it holds.
  std::reverse(out->begin() + static_cast<std::ptrdiff_t>(first), out->end());
  return listed;
}

}  // namespace guard
