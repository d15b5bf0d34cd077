// ScratchDir: a private temporary directory (mode 0700, under $TMPDIR or
// /tmp) that is removed with everything in it when the object goes away.
// The review commands write copies of the user's files there.
#pragma once

#include <string>

#include "common/status.h"

namespace guard {

class ScratchDir {
 public:
  ScratchDir() = default;
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir();

  // `prefix` names the directory ("guard-diff" gives /tmp/guard-diff-XXXXXX).
  Status Create(const std::string& prefix);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace guard
