// Lexical path relations, one definition for every layer. Paths here are
// byte strings, compared component-wise: "a/bc" is not below "a/b". They
// are taken as they come (no "." or ".." folding, no trailing slash):
// absolute paths resolved by guard, or root-relative names as the journal
// holds them, where "." is the root.
#pragma once

#include <string>
#include <string_view>

namespace guard {

// Whether `path` is `dir` or lies below it. Both absolute ("/" is the
// parent of every absolute path) or both relative to the same directory
// ("." is the parent of every relative path).
bool PathIsUnder(std::string_view path, std::string_view dir);

// Whether `path` lies strictly below `dir` (is under it and is not it).
bool PathIsStrictlyUnder(std::string_view path, std::string_view dir);

// The name of `path` relative to `dir`, for a `path` that PathIsUnder(path,
// dir): "." for `dir` itself, "b/c" for "/a/b/c" under "/a" (or under "/"
// for "/b/c").
std::string PathRelativeTo(std::string_view path, std::string_view dir);

// The inverse: `rel` (relative, "." for `dir` itself) below `dir`.
std::string PathJoin(std::string_view dir, std::string_view rel);

// The directory that holds `path`, as std::filesystem::path::parent_path
// gives it ("/a" for "/a/b", "/" for "/a", "a/b" for "a/b/"), except "." for
// a bare name, so that the result can be opened.
std::string ParentDir(const std::string& path);

// Calls `visit` with each directory above `path`, deepest first, up to but
// not including the root: "a/b" then "a" for "a/b/c" (never "."), "/a/b"
// then "/a" for "/a/b/c" (never "/"); nothing for "a", "/a", "." or "/".
// `visit` returns true to stop the walk there; ForEachAncestor returns
// whether it was stopped.
template <typename Visit>
bool ForEachAncestor(const std::string& path, Visit&& visit) {
  for (size_t slash = path.rfind('/'); slash != std::string::npos && slash > 0;
       slash = path.rfind('/', slash - 1)) {
    if (visit(path.substr(0, slash))) return true;
  }
  return false;
}

}  // namespace guard
