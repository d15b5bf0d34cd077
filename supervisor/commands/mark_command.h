// `guard mark [--step] [LABEL...]`: a labelled point in the timeline of the
// session the calling process runs in, recorded by that session's
// supervisor (supervisor/trace/mark_call.h), never written by the caller.
// Outside a session it says so and exits 1.
//
// `guard mark --hook claude` is the form Claude Code's hooks run
// (hooks_command.h): it reads the hook's JSON on stdin, makes the label
// from it (the prompt's first words for UserPromptSubmit; for PreToolUse
// `before` and the tool's name, for PostToolUse the tool's name, both
// steps), prints nothing, and exits 0 whatever happens, inside a session or
// not, so that Claude Code never reports a hook error for a session run
// without guard.
#pragma once

#include <string>
#include <vector>

namespace guard {

class MarkCommand {
 public:
  struct Options {
    std::vector<std::string> label;  // words, joined by spaces
    bool step = false;
    std::string hook;  // "claude": the hook form
  };
  static const char* const kSummary;
  static const char* const kHelp;
  explicit MarkCommand(Options options) : options_(std::move(options)) {}
  int Run();

 private:
  Options options_;
};

// The label and kind of mark a Claude Code hook's input (its JSON, as read
// from stdin) asks for: false when the event is not one guard marks or the
// input is not JSON. Exposed for tests.
bool ClaudeHookMark(const std::string& input, std::string* label, bool* step);

}  // namespace guard
