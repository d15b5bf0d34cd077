// `guard export [--format patch|tar] [--to SEQ|MARK] [--session ID]`: what
// the session changed, written to stdout as a patch `git apply` accepts
// against the tree as it was before the session, or as a tar archive of the
// touched paths as they were at the end (or just after operation SEQ, or at
// mark MARK). `guard export --pending KEY [--session ID]`: the bytes of one
// pre-image the session kept without a record (guard show lists them).
#pragma once

#include <cstdint>
#include <string>

#include "common/session_history.h"

namespace guard {

class ExportCommand {
 public:
  struct Options {
    std::string session;           // "" = last session of the root
    std::string root;              // --root; "": the one around the current directory
    std::string format = "patch";  // "patch" or "tar"
    std::string to;                // --to: SEQ or MARK (ResolveReviewTo); "": the end
    std::string pending;           // --pending KEY: the bytes of a pre-image kept without a record
  };
  // One line for guard --help; the rest for guard export --help.
  static const char* const kSummary;
  static const char* const kHelp;

  explicit ExportCommand(Options options) : options_(std::move(options)) {}
  int Run();

 private:
  // --to as a sequence number and words for it; non-zero: the exit status.
  int ResolveTo(const SessionHistory& history, uint64_t* to_seq, std::string* label) const;
  int WritePatch();
  int WriteTar();
  int WritePending();

  Options options_;
};

}  // namespace guard
