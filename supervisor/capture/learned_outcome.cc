#include "supervisor/capture/learned_outcome.h"

namespace guard {

using Action = MutationRequest::Action;

bool LearnableFromTree(const Record& r, Action action, bool inside, bool inside2) {
  if (!inside || (r.flags & kNotCaptured)) return false;
  switch (r.kind) {
    case OpKind::kCreate:  // an open with O_CREAT of an absent name, or mknod of a file
    case OpKind::kDelete:
    case OpKind::kMkdir:
    case OpKind::kSymlink:
    case OpKind::kMknod:
      return true;
    case OpKind::kLink:
      return inside2;
    case OpKind::kRename:
      // A directory's rename moves what is below it: its outcome says where
      // that went (Recorder::NoteMovedDirectory), so it keeps its exit stop.
      // One whose source was absent (recorded in case another process
      // makes it meanwhile) would show the same done or failed.
      return inside2 && r.before.type != FileType::kDirectory && r.before2.type != FileType::kDirectory &&
             r.before.type != FileType::kAbsent;
    case OpKind::kChmod:
      // A chmod to the mode the file has looks the same done or not.
      return (action == Action::kChmod || action == Action::kFchmod) && r.new_mode != r.before.mode;
    case OpKind::kRmdir:
      // Fails often, and tellingly (ENOTEMPTY: git, rm -d, scripts), while
      // directories are few next to files: it keeps its exit stop, so that
      // its errno is on record (`guard show`: "[failed: ENOTEMPTY]").
      return false;
    default:  // modify (an open for writing shows nowhere whether it succeeded), exchange
      return false;
  }
}

Learned LearnFromTree(const OneStopCall& c, const struct stat* now, const struct stat* now2) {
  // Every rule below reads "the call's effect is there". Since the path held
  // the opposite before the call (capture checked), and nothing else of the
  // session ran on it meanwhile, only the call can have put it there.
  bool shows = false;
  switch (c.kind) {
    case OpKind::kCreate:
      shows = now != nullptr && S_ISREG(now->st_mode);
      break;
    case OpKind::kDelete:
    case OpKind::kRmdir:
      shows = now == nullptr;
      break;
    case OpKind::kMkdir:
      shows = now != nullptr && S_ISDIR(now->st_mode);
      break;
    case OpKind::kSymlink:
      shows = now != nullptr && S_ISLNK(now->st_mode);
      break;
    case OpKind::kMknod:
      shows = now != nullptr;
      break;
    case OpKind::kLink:
      shows = now2 != nullptr;
      break;
    case OpKind::kRename:
      // A rename between two names of one inode succeeds and changes
      // nothing: the source is still there, and that is no evidence.
      shows = now == nullptr && now2 != nullptr;
      break;
    case OpKind::kChmod:
      shows = now != nullptr && (now->st_mode & 07777) == c.new_mode && c.new_mode != c.before_mode;
      break;
    default:
      break;
  }
  return shows ? Learned::kHappened : Learned::kUnknown;
}

}  // namespace guard
