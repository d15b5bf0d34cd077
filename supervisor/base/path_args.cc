#include "supervisor/base/path_args.h"

#include <vector>

namespace guard {
namespace {

// Folds "", "." and ".." components of an absolute path.
std::string Normalize(const std::string& abs) {
  std::vector<std::string> parts;
  size_t start = 1;
  while (start <= abs.size()) {
    size_t slash = abs.find('/', start);
    if (slash == std::string::npos) slash = abs.size();
    std::string part = abs.substr(start, slash - start);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(std::move(part));
    }
    start = slash + 1;
  }
  std::string out;
  for (const std::string& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

}  // namespace

Status ToRootRelative(const std::string& root, const std::string& cwd, const std::string& arg,
                      std::string* rel) {
  if (arg.empty()) return Status::InvalidArgument("empty path");
  std::string abs = Normalize(arg[0] == '/' ? arg : cwd + "/" + arg);
  if (abs == root) {
    *rel = ".";
    return Status::Ok();
  }
  std::string prefix = root == "/" ? "/" : root + "/";
  if (abs.compare(0, prefix.size(), prefix) != 0) {
    return Status::InvalidArgument(arg + ": outside the root " + root);
  }
  *rel = abs.substr(prefix.size());
  return Status::Ok();
}

}  // namespace guard
