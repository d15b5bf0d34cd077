// `guard config`: the effective settings, one `key = value` line each, with
// where each came from (a flag, config.toml and its line, or the built-in
// default), and the path of the file guard reads.
#pragma once

#include "supervisor/base/config.h"

namespace guard {

class ConfigCommand {
 public:
  static const char* const kSummary;
  explicit ConfigCommand(const Settings& settings) : settings_(settings) {}
  int Run();

 private:
  Settings settings_;
};

}  // namespace guard
