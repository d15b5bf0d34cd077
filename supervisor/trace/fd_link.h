// The file behind a /proc magic link (/proc/PID/fd/N, /proc/PID/task/TID/fd/N).
//
// The kernel does not resolve such a link by its text: it jumps to the open
// file itself. The text (d_path, in guard's view) names that file only while
// the name still holds the same inode. A deleted file's text ends in
// " (deleted)", but a real name may end that way too, and an O_TMPFILE file
// never had a name: so whether the file has a name is decided from the
// inode (stat through the link, lstat of the text), never from the text.
#pragma once

#include <sys/stat.h>

#include <string>

#include "common/status.h"

namespace guard {

struct FdLinkTarget {
  std::string path;    // the file's name, when that name holds its inode; else ""
  struct stat st {};   // the open file's inode, as stat(2) through the link gives it
  struct stat named {};  // the lstat of `path`, when it is not ""
};

// Whether absolute `path` is /proc/N/fd/M or /proc/N/task/T/fd/M.
bool IsProcFdLink(const std::string& path);

// Follows magic link `link` as the kernel would. Fails with the errno of the
// stat through it (ENOENT: no such fd).
Status FollowFdLink(const std::string& link, FdLinkTarget* out);

}  // namespace guard
