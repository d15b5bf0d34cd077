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

}  // namespace guard
