#include "common/path_util.h"

#include <filesystem>

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

std::string PathRelativeTo(std::string_view path, std::string_view dir) {
  if (path == dir) return ".";
  if (dir == ".") return std::string(path);
  return std::string(path.substr(dir == "/" ? 1 : dir.size() + 1));
}

std::string PathJoin(std::string_view dir, std::string_view rel) {
  if (rel == ".") return std::string(dir);
  if (dir == ".") return std::string(rel);
  std::string out(dir);
  if (out != "/") out += '/';
  out += rel;
  return out;
}

std::string ParentDir(const std::string& path) {
  std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

}  // namespace guard
