// `guard doctor [--json]`: which capture modes work on this machine and why
// not. It probes what each mode needs (doctor_probes.h), then, in each mode
// whose needs are met, runs a short capture in a temporary directory with a
// temporary state directory (GUARD_HOME), undoes it and replays it, and
// compares the trees byte for byte; the temporary directories are removed,
// so no session is left behind. It ends with what each mode cannot promise
// here. Exit 0 when at least one mode works, 1 when none does.
//
// The modes are a table (kDoctorModes in doctor_command.cc): a mode is one
// row, naming the findings it needs and what it cannot promise. A row whose
// mode `--mode` does not accept (config.h CheckMode) is left out.
#pragma once

#include <string>
#include <vector>

namespace guard {

struct DoctorMode {
  const char* mode;
  std::vector<const char*> needs;  // Finding keys that must be ok
  const char* cannot_promise;      // what the mode cannot promise, anywhere
};

// The table, in the order shown.
const std::vector<DoctorMode>& DoctorModes();

class DoctorCommand {
 public:
  struct Options {
    bool json = false;
    std::string root;  // unused: the trial runs in a directory of its own
  };
  static const char* const kSummary;
  static const char* const kHelp;
  explicit DoctorCommand(Options options) : options_(std::move(options)) {}
  int Run();

 private:
  Options options_;
};

}  // namespace guard
