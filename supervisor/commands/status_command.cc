#include "supervisor/base/json_schema.h"
#include "common/os_calls.h"
#include "supervisor/base/time_format.h"
#include "supervisor/commands/status_command.h"

#include <CLI/CLI.hpp>
#include <string.h>
#include <unistd.h>

#include <cstdio>

#include "common/clock.h"
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/session_meta.h"
#include "common/state_dir.h"
#include "supervisor/base/path_escape.h"
#include "supervisor/git/checkpoint_failure.h"
#include "supervisor/commands/reconnect_summary.h"
#include "supervisor/base/session_selector.h"
#include "supervisor/base/root_finder.h"
#include "supervisor/base/units.h"
#include "supervisor/base/color.h"
#include "supervisor/review/review_options.h"
#include "supervisor/session/deferred_seal.h"
#include "supervisor/session/garbage_collector.h"
#include "supervisor/commands/subcommand.h"

namespace guard {

const char* const StatusCommand::kSummary =
    "Show running sessions, the last session, and sessions that need recovery";

const char* const StatusCommand::kHelp =
    "For the current root: the sessions running now (state running, supervisor alive), the last\n"
    "session with its operation and file counts and how it ended (state, exit code, signal), and\n"
    "the sessions that need recovery (left running by a supervisor that died; `guard recover`\n"
    "completes them; status itself changes nothing), and the whole state directory's size against\n"
    "the retention policy (docs/gc.md). --json: an object {root, running: [...], last: {...} or\n"
    "null, needs_recovery: [...], store: {bytes, max_bytes, keep, sessions, sessions_past_keep,\n"
    "unreferenced_bytes, within_policy}}, each session as {id, state, started, ended, exit_code,\n"
    "signal, ops, files, supervisor_pid, command, log_incomplete}, with how_it_ended in last;\n"
    "log_incomplete is null, or {from, what} when guard saw a forgery in the session: its log may\n"
    "lack changes made from then on (docs/security.md).";

namespace {

using Json = nlohmann::ordered_json;

std::string CommandLine(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) out += (out.empty() ? "" : " ") + a;
  return EscapeForTerminal(out);
}

std::string SignalName(int sig) {
  const char* abbrev = os::SignalAbbrev(sig);
  return abbrev != nullptr ? std::string("SIG") + abbrev : std::to_string(sig);
}

// "finished, exit 0", "killed by SIGKILL", "crashed (SIGSEGV)", ...
std::string HowItEnded(const SessionMeta& m, bool alive) {
  std::string s = SessionStateName(m.state);
  if (m.state == SessionState::kRunning) return alive ? "running" : "running, supervisor gone";
  if (m.exit_code >= 0) s += ", exit " + std::to_string(m.exit_code);
  if (m.signal != 0) s += ", signal " + std::to_string(m.signal) + " (" + SignalName(m.signal) + ")";
  return s;
}

// {from, what} of a session whose log is incomplete (evidence of forgery:
// docs/security.md), null otherwise.
Json LogIncompleteJson(const SessionMeta& m) {
  if (m.incomplete_ns == 0) return Json(nullptr);
  Json j;
  j["from"] = FormatIso8601(m.incomplete_ns);
  bool lossy;
  j["what"] = Utf8OrEscaped(m.incomplete_what, &lossy);
  return j;
}

Json SessionJson(const SessionMeta& m) {
  Json j;
  j["id"] = m.id;
  j["state"] = SessionStateName(m.state);
  j["started"] = FormatIso8601(m.started_ns);
  j["ended"] = m.ended_ns != 0 ? Json(FormatIso8601(m.ended_ns)) : Json(nullptr);
  j["exit_code"] = m.exit_code >= 0 ? Json(m.exit_code) : Json(nullptr);
  j["signal"] = m.signal != 0 ? Json(m.signal) : Json(nullptr);
  j["ops"] = m.ops;
  j["files"] = m.files;
  j["supervisor_pid"] = m.supervisor_pid;
  Json argv = Json::array();
  for (const std::string& a : m.argv) {
    bool lossy;
    argv.push_back(Utf8OrEscaped(a, &lossy));
  }
  j["command"] = argv;
  j["log_incomplete"] = LogIncompleteJson(m);
  return j;
}

void PrintLogIncomplete(const SessionMeta& m, bool color) {
  if (const std::string line = LogIncompleteLine(m); !line.empty()) {
    std::printf("  %s: %s\n", m.id.c_str(), Paint(color, Hue::kRed, EscapeForTerminal(line)).c_str());
  }
}

}  // namespace

int StatusCommand::Run() {
  ColorWhen when = ColorWhen::kAuto;
  if (!ParseColorWhen(options_.color, &when)) {
    std::fprintf(stderr, "guard: --color must be auto, always or never\n");
    return 2;
  }
  const bool color = UseColor(when, STDOUT_FILENO);
  StateDir state;
  Status s = StateDir::Open(&state);
  std::string root;
  if (s.ok()) s = FindSessionRoot(state, options_.root, &root);
  std::vector<std::string> ids;
  // A session whose seal is under way is reported once sealed (deferred_seal.h).
  if (s.ok()) WaitForSeals(state, root, SealWait{});
  if (s.ok()) s = state.ListSessions(&ids);
  if (!s.ok()) {
    std::fprintf(stderr, "guard: %s\n", s.ToString().c_str());
    return 1;
  }
  std::vector<SessionMeta> running, orphaned, mine;
  for (const std::string& id : ids) {
    SessionMeta m;
    Status ls = LoadSessionMeta(state.session_dir(id) + "/meta.json", &m);
    if (!ls.ok()) {
      std::fprintf(stderr, "guard: warning: session %s: %s\n", id.c_str(),
                   EscapeForTerminal(ls.ToString()).c_str());
      continue;
    }
    if (m.root != root) continue;
    if (m.state == SessionState::kRunning) (SupervisorAlive(m) ? running : orphaned).push_back(m);
    mine.push_back(std::move(m));
  }
  const SessionMeta* last = mine.empty() ? nullptr : &mine.back();
  // Checkpoints that failed even when tried again (checkpoint_failure.h).
  std::vector<std::pair<std::string, std::string>> failed_checkpoints;
  for (const SessionMeta& m : mine) {
    std::string why;
    if (CheckpointFailureOf(state, m.id, &why)) failed_checkpoints.emplace_back(m.id, why);
  }

  // The whole state directory against the retention policy (docs/gc.md).
  StoreInventory inventory;
  StoreUsage usage;
  int64_t cut = 0;
  bool measured = MeasureStore(state, &inventory, &usage, &cut).ok();
  size_t past_keep = 0;
  int64_t now = WallNowNs();
  for (const SessionUsage& u : usage.sessions) {
    int64_t end = u.ended_ns != 0 ? u.ended_ns : u.started_ns;
    if (u.protection == Protection::kNone && now - end > options_.keep_ns) ++past_keep;
  }
  bool last_alive = last != nullptr && last->state == SessionState::kRunning && SupervisorAlive(*last);

  if (options_.json) {
    bool lossy;
    Json j;
    j["root"] = Utf8OrEscaped(root, &lossy);
    j["running"] = Json::array();
    for (const SessionMeta& m : running) j["running"].push_back(SessionJson(m));
    j["last"] = last != nullptr ? SessionJson(*last) : Json(nullptr);
    if (last != nullptr) j["last"]["how_it_ended"] = HowItEnded(*last, last_alive);
    j["needs_recovery"] = Json::array();
    for (const SessionMeta& m : orphaned) j["needs_recovery"].push_back(SessionJson(m));
    j["checkpoint_failed"] = Json::array();
    for (const auto& [id, why] : failed_checkpoints) {
      j["checkpoint_failed"].push_back({{"id", id}, {"error", Utf8OrEscaped(why, &lossy)}});
    }
    if (measured) {
      Json store;
      store["bytes"] = usage.total();
      store["max_bytes"] = options_.max_bytes;
      store["keep"] = FormatDuration(options_.keep_ns);
      store["sessions"] = usage.sessions.size();
      store["sessions_past_keep"] = past_keep;
      store["unreferenced_bytes"] = usage.unreferenced_bytes;
      store["within_policy"] = usage.total() <= options_.max_bytes && past_keep == 0;
      j["store"] = store;
    }
    j["schema"] = kJsonSchemaVersion;
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }

  std::printf("root: %s\n", EscapeForTerminal(root).c_str());
  if (measured) {
    bool over = usage.total() > options_.max_bytes;
    std::printf("store: %s of %s, %zu session%s (all roots)%s%s\n", FormatSize(usage.total()).c_str(),
                FormatSize(options_.max_bytes).c_str(), usage.sessions.size(), usage.sessions.size() == 1 ? "" : "s",
                past_keep ? (", " + std::to_string(past_keep) + " ended more than " + FormatDuration(options_.keep_ns) +
                             " ago").c_str()
                          : "",
                over || past_keep ? " (over the policy: the next session's end or `guard gc` trims it)" : "");
  }
  if (last == nullptr) {
    std::printf("no guard session recorded for this root\n");
    return 0;
  }
  if (running.empty()) std::printf("running: none\n");
  for (const SessionMeta& m : running) {
    std::printf("running: %s (supervisor pid %d, started %s): %s\n", Paint(color, Hue::kYellow, m.id).c_str(),
                static_cast<int>(m.supervisor_pid), ShownTime(m.started_ns).c_str(),
                CommandLine(m.argv).c_str());
    if (m.id != last->id) PrintLogIncomplete(m, color);
  }
  bool orphaned_last = last->state == SessionState::kRunning && !last_alive;
  if (orphaned_last) {
    // Its counts are only written at its end: none to show until recovered.
    std::printf("last session: %s %s, started %s: %s\n", Paint(color, Hue::kYellow, last->id).c_str(),
                Paint(color, Hue::kRed, "stopped mid-session (guard was killed)").c_str(),
                ShownTime(last->started_ns).c_str(), CommandLine(last->argv).c_str());
  } else {
    std::printf("last session: %s %s, %llu ops, %llu files, started %s%s%s: %s\n",
                Paint(color, Hue::kYellow, last->id).c_str(),
                Paint(color, EndedAbnormally(*last) ? Hue::kRed : last_alive ? Hue::kYellow : Hue::kGreen,
                      HowItEnded(*last, last_alive))
                    .c_str(),
                static_cast<unsigned long long>(last->ops), static_cast<unsigned long long>(last->files),
                ShownTime(last->started_ns).c_str(), last->ended_ns != 0 ? ", ended " : "",
                last->ended_ns != 0 ? ShownTime(last->ended_ns).c_str() : "", CommandLine(last->argv).c_str());
  }
  PrintLogIncomplete(*last, color);
  for (const SessionMeta& m : orphaned) {
    std::printf("%s %s (run `guard recover`)\n", Paint(color, Hue::kRed, "needs recovery:").c_str(), m.id.c_str());
  }
  for (const auto& [id, why] : failed_checkpoints) {
    std::printf("%s %s: %s (guard checkpoint --session %s tries again)\n",
                Paint(color, Hue::kRed, "checkpoint failed:").c_str(), id.c_str(), EscapeForTerminal(why).c_str(),
                id.c_str());
  }
  // The same summary `guard -- CMD` prints when it starts after a session
  // that ended abnormally (a session that needs recovery is one: its
  // summary says, from its post-images, whether its work is in the tree);
  // after one that ended normally, when its work has left the tree since
  // and no restore of guard's explains it (`git checkout -- .`).
  SessionHistory history;
  const bool abnormal = EndedAbnormally(*last) || orphaned_last;
  const bool ended = last->state != SessionState::kRunning;
  if ((abnormal || (ended && !IsRestoreSession(*last))) && SessionHistory::Load(state, last->id, &history).ok()) {
    std::string summary = ReconnectSummary(history, !abnormal);
    for (size_t at = 0; (at = summary.find("guard: ", at)) != std::string::npos;) summary.erase(at, 7);
    std::fputs(summary.c_str(), stdout);
  }
  return 0;
}

// The command line of `guard status` (subcommand.h).
namespace {

class StatusSubcommand final : public Subcommand {
 public:
  void Declare(CLI::App* cmd, SharedOptions* line) override {
    cmd->description(StatusCommand::kSummary)->footer(StatusCommand::kHelp);
    cmd->add_flag("--json", options_.json, "Print a JSON object");
    cmd->add_option("--color", options_.color, "auto (default: colour when stdout is a terminal and NO_COLOR is unset), "
                                               "always, never");
    line->AddRoot(cmd);
  }
  int Run(const Invocation& invocation) override {
    options_.root = invocation.root;
    options_.keep_ns = invocation.settings->keep_ns.value;
    options_.max_bytes = invocation.settings->max_size.value;
    return StatusCommand(options_).Run();
  }

 private:
  StatusCommand::Options options_;
};

}  // namespace

std::unique_ptr<Subcommand> MakeStatusSubcommand() { return std::make_unique<StatusSubcommand>(); }

}  // namespace guard
