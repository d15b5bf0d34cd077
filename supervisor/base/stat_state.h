// The journal's view of an lstat: FileState's type, mode, size and mtime,
// one mapping for capture and restore (symlink targets and content are the
// caller's: they need the file, not its stat).
#pragma once

#include <sys/stat.h>

#include <string>

#include "common/journal_record.h"

namespace guard {

// kRegular, kDirectory, kSymlink, else kOther (fifos, sockets, devices).
FileType FileTypeOfMode(mode_t mode);

// Sets out's type, mode (permission bits and setuid/setgid/sticky), size
// and mtime from `st`, leaving its other fields as they are.
void FillFromStat(const struct stat& st, FileState* out);

// FillFromStat of a default FileState.
FileState FileStateOfStat(const struct stat& st);

// The lstat of a path made once and handed on, so that whoever needs it
// next in the same stop need not make it again (the path resolver makes it
// for capture). Not made: the taker makes its own.
struct KnownLstat {
  bool made = false;
  int err = 0;         // the lstat's errno; 0: `st` holds its result
  struct stat st {};

  static KnownLstat Of(const std::string& path);
  bool exists() const { return made && err == 0; }
};

}  // namespace guard
