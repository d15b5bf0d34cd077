// `guard __prompt`: what the shell's prompt hook runs before each prompt
// (`guard shell-init SHELL --prompt`): one line on stderr when the last
// session of the current root needs attention (it ended abnormally, or
// needs recovery, or its work is no longer in the tree), at most once per
// session, as direnv speaks at a prompt. Hidden; fast and silent otherwise
// (no recovery, no configuration read): it reads the newest sessions'
// meta.json until one of this root, and only for a session that ended
// normally compares its changed paths with the tree (one lstat each when
// their saved stat still holds; not for a journal over 4 MiB). The
// session's `prompted` marker (sessions/<id>/prompted) records that it was
// said.
#pragma once

#include <string>

namespace guard {

class PromptCommand {
 public:
  int Run();
};

}  // namespace guard
