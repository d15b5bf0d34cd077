// `guard [--root DIR] [--quiet] [--on-capture-failure=block|allow] -- CMD [ARG...]`:
// runs CMD under capture as a new session and exits with its status when
// CMD's first process ends; processes it left running are still captured,
// by a supervisor process that seals the session when the last one ends.
#pragma once

#include <string>
#include <vector>

#include "supervisor/base/config.h"
#include "supervisor/capture/capture.h"
#include "supervisor/commands/subcommand.h"

namespace CLI {
class Option;
}

namespace guard {

class RunCommand {
 public:
  struct Options {
    std::string root;
    bool quiet = false;
    CaptureFailurePolicy on_failure = CaptureFailurePolicy::kBlock;
    std::vector<std::string> argv;
    // `root` is a recorded session's root, which may be gone (an undo of a
    // session that removed it recreates it): taken as it is then.
    bool recorded_root = false;
    // Start the automatic gc (auto_gc.h) once the session is sealed.
    bool auto_gc = true;
    // --checkpoint-every: a checkpoint (supervisor/git/checkpoint.h) this
    // often while the session runs; 0: only the one at its end.
    int64_t checkpoint_every_ns = 0;
    // capture.sync_every: the group commit's interval (config.h).
    int64_t sync_every_ns = kSyncEveryDefaultNs;
    // --mode: "auto" (the preload shim where it can see, the tracer for the
    // rest), "trace" (the tracer alone), "preload" (the shim alone) or
    // "watch" (neither: supervisor/watch/).
    std::string mode = "auto";
    // capture.hide_state: "auto" (the state directory out of the command's
    // reach where the kernel allows it, state_isolation.h), "required"
    // (else no session), "off". Under --mode auto and preload: the tracer
    // alone guards it itself.
    std::string hide_state = "auto";
    // retention.max_size: the store's cap, which binds inside the session
    // too (session_cap.h); 0: none.
    uint64_t max_bytes = 0;
  };
  explicit RunCommand(Options options) : options_(std::move(options)) {}
  // Returns guard's exit status: the command's, or 128+N for signal N, or
  // 125/126/127 when guard or the launch failed.
  int Run();
  // The session Run() recorded ("" if it made none).
  const std::string& session_id() const { return session_id_; }

 private:
  Options options_;
  std::string session_id_;
};

// guard's own options, which make a session when no subcommand is named
// (main.cc); `guard config` shows what they would set.
class RunSubcommand final : public Subcommand {
 public:
  // Declares them on guard's own App, `app`.
  void Declare(CLI::App* app, SharedOptions* line) override;
  // --root given before any subcommand.
  const std::string& root() const { return options_.root; }
  // The first option given that only a session takes, or nullptr.
  const char* SessionOptionGiven() const;
  // Lays the flags, GUARD_MODE and GUARD_HIDE_STATE over `settings`, read
  // from config.toml; "" or the usage error.
  std::string Override(Settings* settings) const;
  // Without a command: guard's help on stderr, and 2.
  int Run(const Invocation& invocation) override;

 private:
  CLI::App* app_ = nullptr;
  RunCommand::Options options_;
  std::string policy_ = "block";
  std::string mode_;
  std::string checkpoint_every_;
  CLI::Option* quiet_option_ = nullptr;
  CLI::Option* policy_option_ = nullptr;
  CLI::Option* mode_option_ = nullptr;
  CLI::Option* checkpoint_every_option_ = nullptr;
};

// Exit status guard uses when it fails before the command could run.
inline constexpr int kExitGuardError = 125;

}  // namespace guard
