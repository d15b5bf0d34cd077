// The yes/no question a command asks before it changes the tree or the
// repository (undo, replay, commit).
#pragma once

#include <cstdio>
#include <iostream>
#include <string>

namespace guard {

// Prints `question` and " [y/N] " to `out` and reads one line from `in`:
// only "y", "Y" or "yes" is a yes; anything else, or no line at all (end of
// input), is a no.
bool Confirm(const std::string& question, std::istream& in = std::cin, std::FILE* out = stderr);

}  // namespace guard
