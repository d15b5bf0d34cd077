// Guard's hooks in Claude Code's settings (.claude/settings.json): adding
// them to, and removing them from, the settings text, as a pure text to
// text step that `guard hooks` (hooks_command.h) wraps with the file.
//
// The hooks (Claude Code's format: hooks.EVENT is an array of matcher
// groups, each {"matcher"?, "hooks": [{"type": "command", "command"}]}):
//   UserPromptSubmit: {"hooks": [{"type": "command", "command": CMD}]}
//   PreToolUse:       {"matcher": "*", "hooks": [{"type": "command", "command": CMD}]}
//   PostToolUse:      {"matcher": "*", "hooks": [{"type": "command", "command": CMD}]}
// where CMD is `<guard> mark --hook claude`. Guard's entries are told from
// the user's by their command alone (IsGuardHookCommand), so that an
// uninstall removes exactly them whatever was edited around them.
//
// Merging keeps every other key, value and array element, in their order;
// guard's groups go at the end of their event's array. The text is written
// back with the indentation the original used (2 spaces if none), and a
// final newline if it had one: settings in the form Claude Code writes
// them come back byte for byte from an install followed by an uninstall.
#pragma once

#include <string>

#include "common/status.h"

namespace guard {

// The command guard's hooks run, for the guard program `guard_program`
// (a name found on PATH, or an absolute path; quoted for the shell if it
// needs to be).
std::string ClaudeHookCommand(const std::string& guard_program);
// Whether `command` is one ClaudeHookCommand makes, for any program whose
// name is `guard`.
bool IsGuardHookCommand(const std::string& command);

// Adds guard's hooks to `settings` (the file's text; empty: no file yet).
// An event that already has a guard hook keeps it as it is (installing
// twice changes nothing). *changed tells whether *out differs from the
// input. kInvalidArgument when the text is not a JSON object, or `hooks`
// or an event's value does not have the shape Claude Code gives it.
Status InstallClaudeHooks(const std::string& settings, const std::string& command, std::string* out,
                          bool* changed);
// Removes every hook whose command IsGuardHookCommand, then the matcher
// groups, event arrays and the `hooks` object that this left empty.
// *now_empty: nothing is left but `{}` and guard's removal emptied it (the
// file was guard's own: the caller may remove it).
Status UninstallClaudeHooks(const std::string& settings, std::string* out, bool* changed, bool* now_empty);

}  // namespace guard
