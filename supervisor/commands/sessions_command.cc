#include "supervisor/base/json_schema.h"
#include "supervisor/base/time_format.h"
#include "supervisor/commands/sessions_command.h"

#include <CLI/CLI.hpp>
#include <unistd.h>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/session_meta.h"
#include "common/state_dir.h"
#include "supervisor/session/recovery.h"
#include "supervisor/base/session_selector.h"
#include "supervisor/base/root_finder.h"
#include "supervisor/base/units.h"
#include "supervisor/base/color.h"
#include "supervisor/review/review_options.h"
#include "supervisor/session/garbage_collector.h"
#include "supervisor/commands/subcommand.h"
#include "supervisor/restore/restore_chain.h"

namespace guard {
namespace {

std::string CommandLine(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    out += a;
  }
  return out;
}

// What a session ran, as the list shows it: the command, or for guard's
// own restores what they restored ("undo of ID", "(interrupted)" while the
// same command typed again has more to do, "finished by ID" once it did:
// `finished_by`, "" if not).
std::string WhatItRan(const SessionMeta& m, const std::string& finished_by) {
  if (!IsRestoreSession(m)) return CommandLine(m.argv);
  RestoreOf r = RestoreOfSession(m);
  std::string what = r.verb + " of " + (r.of.empty() ? "?" : r.of);
  if (!r.interrupted) return what;
  return what + (finished_by.empty() ? " (interrupted)" : ", finished by " + finished_by);
}

// A state's colour: ended as asked green, ended otherwise red, still going
// (or needing recovery) yellow.
Hue StateHue(SessionState state, bool orphaned) {
  if (orphaned) return Hue::kRed;
  switch (state) {
    case SessionState::kFinished:
      return Hue::kGreen;
    case SessionState::kRunning:
      return Hue::kYellow;
    default:
      return Hue::kRed;
  }
}

}  // namespace

int SessionsCommand::Run() {
  ColorWhen when = ColorWhen::kAuto;
  if (!ParseColorWhen(options_.color, &when)) {
    std::fprintf(stderr, "guard: --color must be auto, always or never\n");
    return 2;
  }
  const bool color = UseColor(when, STDOUT_FILENO);
  StateDir state;
  Status s = StateDir::Open(&state);
  if (!s.ok()) {
    std::fprintf(stderr, "guard: state directory: %s\n", s.ToString().c_str());
    return 1;
  }
  std::string root;
  if (!options_.all) {
    s = FindSessionRoot(state, options_.root, &root);
    if (!s.ok()) {
      std::fprintf(stderr, "guard: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  RecoverBeforeCommand(root, false);  // root is "" with --all: every root
  std::vector<std::string> ids;
  s = state.ListSessions(&ids);
  if (!s.ok()) {
    std::fprintf(stderr, "guard: %s\n", s.ToString().c_str());
    return 1;
  }
  // What each session holds: it alone, and shared with other sessions
  // (every root's sessions count, since the store is one).
  StoreInventory inventory;
  StoreUsage usage;
  int64_t cut = 0;
  std::map<std::string, const SessionUsage*> size_of;
  if (MeasureStore(state, &inventory, &usage, &cut).ok()) {
    for (const SessionUsage& u : usage.sessions) size_of[u.id] = &u;
  }
  nlohmann::json array = nlohmann::json::array();
  size_t listed = 0;
  std::vector<SessionMeta> metas;
  for (const std::string& id : ids) {
    SessionMeta m;
    s = LoadSessionMeta(state.session_dir(id) + "/meta.json", &m);
    if (!s.ok()) {
      std::fprintf(stderr, "guard: session %s: %s\n", id.c_str(), s.ToString().c_str());
      continue;
    }
    if (!options_.all && m.root != root) continue;
    metas.push_back(std::move(m));
  }
  // Interrupted restores the same command typed again has finished since.
  const std::map<std::string, std::string> finished = FinishedRestores(metas);
  for (const SessionMeta& m : metas) {
    const std::string& id = m.id;
    auto done = finished.find(id);
    const std::string finished_by = done != finished.end() ? done->second : "";
    bool orphaned = m.state == SessionState::kRunning && !SupervisorAlive(m);
    ++listed;
    if (options_.json) {
      nlohmann::json j;
      j["id"] = m.id;
      j["schema"] = kJsonSchemaVersion;
      j["root"] = m.root;
      j["command"] = m.argv;
      j["started"] = FormatIso8601(m.started_ns);
      j["ended"] = m.ended_ns ? nlohmann::json(FormatIso8601(m.ended_ns)) : nlohmann::json(nullptr);
      j["state"] = SessionStateName(m.state);
      j["needs_recovery"] = orphaned;
      j["exit_code"] = m.exit_code >= 0 ? nlohmann::json(m.exit_code) : nlohmann::json(nullptr);
      j["signal"] = m.signal ? nlohmann::json(m.signal) : nlohmann::json(nullptr);
      j["ops"] = m.ops;
      j["files"] = m.files;
      auto size = size_of.find(id);
      j["own_bytes"] = size != size_of.end() ? nlohmann::json(size->second->own_bytes) : nlohmann::json(nullptr);
      j["shared_bytes"] = size != size_of.end() ? nlohmann::json(size->second->shared_bytes) : nlohmann::json(nullptr);
      j["log_incomplete"] = m.incomplete_ns != 0 ? nlohmann::json({{"from", FormatIso8601(m.incomplete_ns)},
                                                                   {"what", m.incomplete_what}})
                                                 : nlohmann::json(nullptr);
      if (IsRestoreSession(m)) {
        RestoreOf r = RestoreOfSession(m);
        j["restore"] = {{"verb", r.verb},
                        {"of", r.of},
                        {"interrupted", r.interrupted},
                        {"finished_by", finished_by.empty() ? nlohmann::json(nullptr) : nlohmann::json(finished_by)}};
      }
      array.push_back(j);
    } else {
      std::string st = SessionStateName(m.state);
      if (orphaned) st += "(supervisor gone)";
      std::string exit = m.exit_code >= 0 ? std::to_string(m.exit_code) : "-";
      auto size = size_of.find(id);
      std::string sizes = size == size_of.end() ? "size ?"
                                                : FormatSize(size->second->own_bytes) + " own, " +
                                                      FormatSize(size->second->shared_bytes) + " shared";
      char state_field[64];
      std::snprintf(state_field, sizeof state_field, "%-10s", st.c_str());
      std::printf("%s  %s %s  exit %-4s %6llu ops %5llu files  %-28s %s%s%s\n",
                  Paint(color, Hue::kYellow, m.id).c_str(), Paint(color, StateHue(m.state, orphaned), state_field).c_str(),
                  ShownTime(m.started_ns).c_str(), exit.c_str(),
                  static_cast<unsigned long long>(m.ops), static_cast<unsigned long long>(m.files), sizes.c_str(),
                  WhatItRan(m, finished_by).c_str(), options_.all ? "  in " : "",
                  options_.all ? m.root.c_str() : "");
      // Evidence of forgery (docs/security.md): one line under the session's.
      if (const std::string line = LogIncompleteLine(m); !line.empty()) {
        std::printf("  %s\n", Paint(color, Hue::kRed, line).c_str());
      }
    }
  }
  if (options_.json) {
    std::printf("%s\n", array.dump(2).c_str());
  } else if (listed == 0) {
    // Said on stderr: stdout stays a list (empty) for scripts.
    if (options_.all) {
      std::fprintf(stderr, "guard: no sessions yet (`guard -- CMD` records one)\n");
    } else {
      std::fprintf(stderr, "guard: no sessions in %s (`guard -- CMD` records one; --all lists every root's)\n",
                   root.c_str());
    }
  }
  return 0;
}

// The command line of `guard sessions` (subcommand.h).
namespace {

class SessionsSubcommand final : public CommandSubcommand<SessionsCommand> {
 public:
  void Declare(CLI::App* cmd, SharedOptions* line) override {
    cmd->description("List the sessions of this root");
    cmd->add_flag("--json", options_.json, "Print a JSON array");
    cmd->add_flag("--all", options_.all, "Sessions of every root");
    cmd->add_option("--color", options_.color, "auto (default: colour when stdout is a terminal and NO_COLOR is unset), "
                                               "always, never");
    line->AddRoot(cmd);
  }
  std::string CheckRoot(const std::string& root) const override {
    return !root.empty() && options_.all ? "--root and --all exclude each other" : "";
  }
};

}  // namespace

std::unique_ptr<Subcommand> MakeSessionsSubcommand() { return std::make_unique<SessionsSubcommand>(); }

}  // namespace guard
