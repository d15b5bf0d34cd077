#include "common/path_util.h"

namespace guard {

bool PathIsUnder(std::string_view path, std::string_view dir) {
  if (dir == "/") return !path.empty() && path[0] == '/';
  if (dir == ".") return !path.empty() && path[0] != '/';
  return path.size() >= dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         (path.size() == dir.size() || path[dir.size()] == '/');
}

bool PathIsStrictlyUnder(std::string_view path, std::string_view dir) {
  return path != dir && PathIsUnder(path, dir);
}

}  // namespace guard
