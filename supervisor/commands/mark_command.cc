#include "supervisor/commands/mark_command.h"

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "common/shim_interface.h"
#include "supervisor/base/mark_label.h"
#include "supervisor/base/path_escape.h"
#include "supervisor/commands/session_launcher.h"
#include "supervisor/commands/subcommand.h"

namespace guard {

const char* const MarkCommand::kSummary =
    "Record a labelled point (a mark) in the timeline of the session this runs in";

const char* const MarkCommand::kHelp =
    "Run by a process inside a guard session (an agent's hook, a script, a shell started under\n"
    "guard): the session's supervisor records the mark in the journal, in order with every change\n"
    "made before it. `guard show` groups operations under their marks and numbers them @1, @2, ...;\n"
    "`guard undo --to MARK` and `guard replay --to MARK` take a mark's number (@N) or its label;\n"
    "a turn is what happened from one mark to the next, and `guard undo --turns N` undoes the last N.\n"
    "--step: a point inside a turn (after a tool call): shown and usable with --to, but it starts no\n"
    "turn of its own. Outside a session: prints so and exits 1, marking nothing.\n"
    "--hook claude: the form `guard hooks install claude` puts in Claude Code's settings: reads the\n"
    "hook's JSON on stdin (UserPromptSubmit: a mark labelled with the prompt's first words;\n"
    "PreToolUse: a step labelled `before TOOL`; PostToolUse: a step labelled with the tool's name),\n"
    "prints nothing and always exits 0, so that\n"
    "Claude Code run without guard shows no hook errors.";

namespace {

// The first words of a prompt, at most about 60 bytes, on one line.
std::string FirstWords(const std::string& text) {
  constexpr size_t kMaxBytes = 60;
  std::string out;
  bool space = false;
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) {
      if (out.size() >= kMaxBytes) return out + "...";
      out.push_back(' ');
      space = false;
    }
    // Not inside a UTF-8 character: cut only at a character's first byte.
    if (out.size() >= kMaxBytes + 16 && (c & 0xC0) != 0x80) return out + "...";
    out.push_back(static_cast<char>(c));
  }
  return out;
}

}  // namespace

bool ClaudeHookMark(const std::string& input, std::string* label, bool* step) {
  nlohmann::json j = nlohmann::json::parse(input, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return false;
  auto text = [&](const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  std::string event = text("hook_event_name");
  if (event == "UserPromptSubmit") {
    *label = "prompt: " + FirstWords(text("prompt"));
    *step = false;
    return true;
  }
  if (event == "PostToolUse" || event == "PreToolUse") {
    // The step before a tool call closes what happened since the last one
    // (a background process's writes), apart from what the call does.
    std::string tool = text("tool_name");
    *label = (event == "PreToolUse" ? "before " : "") + (tool.empty() ? std::string("tool") : tool);
    *step = true;
    return true;
  }
  return false;
}

int MarkCommand::Run() {
  if (!options_.hook.empty()) {
    // Whatever happens, exit 0: a hook's failure would be Claude Code's to
    // report, for something that is not the user's concern.
    std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    std::string label;
    bool step = false;
    if (ClaudeHookMark(input, &label, &step)) (void)RequestMark(label, step);
    return 0;
  }
  std::string label;
  for (const std::string& w : options_.label) label += (label.empty() ? "" : " ") + w;
  long rc = RequestMark(label, options_.step);
  if (rc > 0) {
    const char* id = std::getenv(GUARD_ENV_SESSION);
    std::fprintf(stderr, "guard: mark @%ld%s%s%s%s\n", rc, label.empty() ? "" : " \"",
                 EscapeForTerminal(std::string(CutMarkLabel(label))).c_str(), label.empty() ? "" : "\"",
                 id != nullptr && *id != '\0' ? (std::string(" in session ") + id).c_str() : "");
    return 0;
  }
  if (rc == -ESRCH) {
    std::fprintf(stderr, "guard: mark: not inside a guard session; nothing marked\n");
    return 1;
  }
  if (rc == -EPERM) {
    std::fprintf(stderr, "guard: mark: refused: this process is not one of the session's; nothing marked\n");
    return 1;
  }
  std::fprintf(stderr, "guard: mark: the session's guard could not record it: %s\n", std::strerror(static_cast<int>(-rc)));
  return 1;
}

// The command line of `guard mark` (subcommand.h).
namespace {

class MarkSubcommand final : public Subcommand {
 public:
  void Declare(CLI::App* cmd, SharedOptions*) override {
    cmd->description(MarkCommand::kSummary)->footer(MarkCommand::kHelp);
    cmd->add_flag("--step", options_.step, "A point inside a turn: it starts no turn of its own");
    cmd->add_option("--hook", options_.hook, "Run as an agent's hook: claude (reads the hook's JSON on stdin)")
        ->check(CLI::IsMember({"claude"}))
        ->type_name("AGENT");
    cmd->add_option("label", options_.label, "The mark's label (the words are joined by spaces)");
  }
  int Run(const Invocation&) override { return MarkCommand(options_).Run(); }

 private:
  MarkCommand::Options options_;
};

}  // namespace

std::unique_ptr<Subcommand> MakeMarkSubcommand() { return std::make_unique<MarkSubcommand>(); }

}  // namespace guard
