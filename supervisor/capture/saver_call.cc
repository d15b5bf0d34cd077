#include "supervisor/capture/saver_call.h"

namespace guard {

ChangedPaths CallOf(const Record& r, bool inside, bool inside2, bool dir_arrives,
                       const std::vector<Record>& same) {
  ChangedPaths c;
  const bool dir1 = r.before.type == FileType::kDirectory, dir2 = r.before2.type == FileType::kDirectory;
  switch (r.kind) {
    case OpKind::kDelete:
    case OpKind::kRmdir:
      if (inside) c.removed.push_back(r.path);
      break;
    case OpKind::kRename:
      if (inside) c.removed.push_back(r.path);
      if (inside && dir1) c.left.push_back(r.path);
      if (inside2) c.changed.push_back(r.path2);
      if (inside2 && (dir1 || dir2 || dir_arrives)) c.arrived.push_back(r.path2);
      break;
    case OpKind::kExchange:
      // Each side gets what the other held.
      if (inside) {
        c.changed.push_back(r.path);
        if (dir1) c.left.push_back(r.path);
        if (dir2 || (dir_arrives && !inside2)) c.arrived.push_back(r.path);
      }
      if (inside2) {
        c.changed.push_back(r.path2);
        if (dir2) c.left.push_back(r.path2);
        if (dir1 || (dir_arrives && !inside)) c.arrived.push_back(r.path2);
      }
      break;
    case OpKind::kLink:
      if (inside2) c.changed.push_back(r.path2);
      break;
    default:  // create, modify, mkdir, symlink, chmod, mknod
      if (inside) c.changed.push_back(r.path);
      break;
  }
  for (const Record& o : same) {
    if (o.flags & kSameInode) c.changed.push_back(o.path);
  }
  return c;
}

}  // namespace guard
