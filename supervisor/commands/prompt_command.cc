#include "supervisor/commands/prompt_command.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <vector>

#include "common/session_history.h"
#include "common/session_meta.h"
#include "common/state_dir.h"
#include "supervisor/base/root_finder.h"
#include "supervisor/base/session_selector.h"
#include "supervisor/base/time_format.h"
#include "supervisor/commands/reconnect_summary.h"
#include "supervisor/commands/subcommand.h"
#include "supervisor/commands/work_in_tree.h"

namespace guard {
namespace {

// How many of the newest sessions are read to find this root's last one.
constexpr size_t kNewestRead = 50;
// A larger journal is not read at a prompt.
constexpr off_t kJournalMax = 4 << 20;

// Why the session needs attention, or "".
std::string Attention(const StateDir& state, const SessionMeta& m) {
  if (m.state == SessionState::kRunning) {
    return SupervisorAlive(m) ? "" : "guard was stopped mid-session (any guard command but status recovers it)";
  }
  if (EndedAbnormally(m)) return "it ended abnormally (" + std::string(SessionStateName(m.state)) + ")";
  if (IsRestoreSession(m)) return "";
  struct stat st;
  const std::string journal = state.session_dir(m.id) + "/journal";
  if (::stat(journal.c_str(), &st) != 0 || st.st_size > kJournalMax) return "";
  SessionHistory history;
  if (!SessionHistory::Load(state, m.id, &history).ok()) return "";
  WorkInTree now = CompareTreeWithEnd(history, history.ChangedPaths());
  if (now.differ.empty()) return "";
  return "its work is not in the tree now (" + std::to_string(now.differ.size()) + " of " +
         std::to_string(now.compared) + " changed paths differ)";
}

}  // namespace

int PromptCommand::Run() {
  StateDir state;
  std::string root;
  std::vector<std::string> ids;
  if (!StateDir::Open(&state).ok() || !FindRoot("", &root).ok() || !state.ListSessions(&ids).ok()) return 0;
  size_t read = 0;
  for (auto it = ids.rbegin(); it != ids.rend() && read < kNewestRead; ++it, ++read) {
    SessionMeta m;
    if (!LoadSessionMeta(state.session_dir(*it) + "/meta.json", &m).ok() || m.root != root) continue;
    const std::string marker = state.session_dir(m.id) + "/prompted";
    if (::access(marker.c_str(), F_OK) == 0) return 0;
    const std::string why = Attention(state, m);
    if (why.empty()) return 0;
    std::fprintf(stderr, "guard: the last session here (%s, %s) needs a look: %s; `guard status` says more\n",
                 m.id.c_str(), ShownTime(m.started_ns).c_str(), why.c_str());
    int fd = ::open(marker.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0) ::close(fd);
    return 0;
  }
  return 0;
}

// The command line of `guard __prompt` (subcommand.h).
namespace {

// Hidden: for the shell's prompt hook alone.
class PromptSubcommand final : public Subcommand {
 public:
  void Declare(CLI::App* cmd, SharedOptions*) override { cmd->group(""); }
  int Run(const Invocation&) override { return PromptCommand().Run(); }
};

}  // namespace

std::unique_ptr<Subcommand> MakePromptSubcommand() { return std::make_unique<PromptSubcommand>(); }

}  // namespace guard
