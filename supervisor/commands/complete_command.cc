#include "supervisor/commands/complete_command.h"

#include <cstdio>
#include <vector>

#include "common/session_meta.h"
#include "common/state_dir.h"
#include "supervisor/base/root_finder.h"

namespace guard {

int CompleteCommand::Run() {
  if (what_ != "sessions") return 2;
  StateDir state;
  std::string root;
  std::vector<std::string> ids;
  if (!StateDir::Open(&state).ok() || !FindRoot("", &root).ok() || !state.ListSessions(&ids).ok()) return 0;
  std::vector<std::string> mine;
  for (auto it = ids.rbegin(); it != ids.rend(); ++it) {
    SessionMeta m;
    if (LoadSessionMeta(state.session_dir(*it) + "/meta.json", &m).ok() && m.root == root) mine.push_back(*it);
  }
  for (const std::string& id : mine) std::printf("%s\n", id.c_str());
  for (size_t i = 0; i < mine.size() && i < 10; ++i) {
    if (i == 0) std::printf("last\n");
    else std::printf("last~%zu\n", i);
  }
  return 0;
}

}  // namespace guard
