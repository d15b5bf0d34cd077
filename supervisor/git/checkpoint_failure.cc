#include "supervisor/git/checkpoint_failure.h"

#include <unistd.h>

#include "common/file_io.h"

namespace guard {
namespace {

std::string NotePath(const StateDir& state, const std::string& id) {
  return state.session_dir(id) + "/checkpoint-failed";
}

}  // namespace

void NoteCheckpointOutcome(const StateDir& state, const std::string& id, const Status& outcome) {
  std::string path = NotePath(state, id);
  if (outcome.ok()) {
    ::unlink(path.c_str());
    return;
  }
  std::string line = outcome.ToString();
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  (void)WriteFileAtomic(path, line + "\n", 0600);
}

bool CheckpointFailureOf(const StateDir& state, const std::string& id, std::string* message) {
  std::string text;
  if (!ReadFileToString(NotePath(state, id), &text).ok()) return false;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  *message = text;
  return true;
}

}  // namespace guard
