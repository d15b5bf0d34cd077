// `guard forget SESSION...`: removes the chosen sessions (ids, unique
// prefixes, last, last~N of the current root) and then the blobs no
// remaining session names, as gc does. Refuses a running session and one
// that needs recovery (recovery runs first, as for every command). Lists
// them and asks first, as undo does; then says in one line what it removed.
#pragma once

#include <string>
#include <vector>

namespace guard {

class ForgetCommand {
 public:
  struct Options {
    std::vector<std::string> sessions;
    bool dry_run = false;
    bool yes = false;  // -y, --yes: do not ask (required without a terminal)
  };
  static const char* const kSummary;
  explicit ForgetCommand(Options options) : options_(std::move(options)) {}
  int Run();

 private:
  Options options_;
};

}  // namespace guard
