#include "supervisor/commands/work_in_tree.h"

#include "supervisor/capture/file_state.h"
#include "supervisor/restore/safe_tree.h"

namespace guard {
namespace {

bool TreeHolds(const SafeTree& tree, const std::string& rel, const FileState& end) {
  FileState cur;
  struct stat st;
  if (!tree.Stat(rel, &cur, &st).ok()) return false;  // below a symlink now, or unreadable
  if (cur.type != end.type) return false;
  switch (end.type) {
    case FileType::kAbsent: return true;
    case FileType::kSymlink: return cur.symlink_target == end.symlink_target;
    case FileType::kRegular: {
      if (cur.mode != end.mode || cur.size != end.size) return false;
      if (StillHolds(end, st)) return true;
      if (end.blob.kind != BlobRef::Kind::kKey) return true;  // content not comparable: size and mode agree
      BlobKey key;
      return tree.HashFile(rel, &key).ok() && key == end.blob.key;
    }
    default: return cur.mode == end.mode;
  }
}

}  // namespace

WorkInTree CompareTreeWithEnd(const SessionHistory& history, const std::vector<std::string>& paths) {
  WorkInTree out;
  SafeTree tree;
  if (!SafeTree::Open(history.meta().root, &tree).ok()) return out;
  for (const std::string& p : paths) {
    auto end = history.finals().find(p);
    if (end == history.finals().end() || end->second.type == FileType::kUnknown) continue;
    ++out.compared;
    if (!TreeHolds(tree, p, end->second)) out.differ.push_back(p);
  }
  return out;
}

}  // namespace guard
