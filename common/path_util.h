// Lexical path relations, one definition for every layer. Paths here are
// byte strings, compared component-wise: "a/bc" is not below "a/b".
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

}  // namespace guard
