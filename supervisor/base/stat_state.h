// The journal's view of an lstat: FileState's type, mode, size and mtime,
// one mapping for capture and restore (symlink targets and content are the
// caller's: they need the file, not its stat).
#pragma once

#include <sys/stat.h>

#include "common/journal_record.h"

namespace guard {

// kRegular, kDirectory, kSymlink, else kOther (fifos, sockets, devices).
FileType FileTypeOfMode(mode_t mode);

// type, mode (permission bits and setuid/setgid/sticky), size and mtime
// from `st`; everything else left at its default.
FileState FileStateOfStat(const struct stat& st);

}  // namespace guard
