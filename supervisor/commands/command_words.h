// The words of guard's command line that are not guard's: a command typed
// without `--` (`guard ls`) or a misspelt subcommand (`guard dif`). Each is
// a usage error with a suggestion, found before anything runs, as git's
// help.c does with its "did you mean" (the same weighted edit distance).
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace guard {

// The first word of argv that is neither an option of `app` (guard's own),
// nor an option's value, nor after `--`; "" when there is none.
std::string FirstWord(const CLI::App& app, int argc, const char* const* argv);

// The subcommands of `app` a user may type (the hidden `__*` ones left out).
std::vector<std::string> CommandNames(const CLI::App& app);

// The names of `names` closest to `word` by git's weighted Levenshtein
// distance (swap 0, substitution 2, insertion 1, deletion 3; a prefix: 0),
// all those at the best distance, none when it is over git's floor.
std::vector<std::string> SimilarCommands(const std::string& word, const std::vector<std::string>& names);

// The one line (without "guard: ") saying `word` is not a guard command,
// with what the user may have meant: `guard -- WORD` for a program on the
// PATH or a path, else the closest subcommands, else `guard help`.
std::string NotACommand(const std::string& word, const std::vector<std::string>& names);

}  // namespace guard
