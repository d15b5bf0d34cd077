// `guard export [--format patch|tar] [--to SEQ] [--session ID]`: what the
// session changed, written to stdout as a patch `git apply` accepts against
// the tree as it was before the session, or as a tar archive of the touched
// paths as they were at the end (or just after operation SEQ).
#pragma once

#include <cstdint>
#include <string>

namespace guard {

class ExportCommand {
 public:
  struct Options {
    std::string session;           // "" = last session of the root
    std::string root;              // --root; "": the one around the current directory
    std::string format = "patch";  // "patch" or "tar"
    uint64_t to_seq = UINT64_MAX;  // just after this operation; UINT64_MAX: the end
  };
  // One line for guard --help; the rest for guard export --help.
  static const char* const kSummary;
  static const char* const kHelp;

  explicit ExportCommand(Options options) : options_(std::move(options)) {}
  int Run();

 private:
  int WritePatch();
  int WriteTar();

  Options options_;
};

}  // namespace guard
