#include "supervisor/base/path_args.h"

#include <filesystem>

#include "common/path_util.h"

namespace guard {

Status ToRootRelative(const std::string& root, const std::string& cwd, const std::string& arg,
                      std::string* rel) {
  if (arg.empty()) return Status::InvalidArgument("empty path");
  // Lexical normalisation folds "", "." and ".." components but keeps a
  // trailing slash ("/a/b/.." gives "/a/"): the name is the same without it.
  std::string abs = std::filesystem::path(arg[0] == '/' ? arg : cwd + "/" + arg).lexically_normal().string();
  while (abs.size() > 1 && abs.back() == '/') abs.pop_back();
  if (!PathIsUnder(abs, root)) return Status::InvalidArgument(arg + ": outside the root " + root);
  *rel = PathRelativeTo(abs, root);
  return Status::Ok();
}

}  // namespace guard
