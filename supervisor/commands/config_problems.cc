#include "supervisor/commands/config_problems.h"

#include <algorithm>
#include <cstdio>

namespace guard {

int CheckConfigProblems(ConfigUse use, Settings* settings) {
  if (settings->problems.empty()) return -1;
  const ConfigProblem& first = settings->problems.front();
  if (use == ConfigUse::kSession && settings->CaptureUnsure()) {
    for (const ConfigProblem& p : settings->problems) {
      if (p.key.empty() || p.key == "capture" || p.key.rfind("capture.", 0) == 0) {
        std::fprintf(stderr, "guard: %s; no session starts until it is mended\n", p.message.c_str());
        return 2;
      }
    }
  }
  if (use == ConfigUse::kDeletes) {
    std::fprintf(stderr, "guard: %s; nothing is removed until the configuration is mended\n",
                 first.message.c_str());
    return 1;
  }
  const std::vector<std::string> keys = ConfigKeyNames();
  for (const ConfigProblem& p : settings->problems) {
    bool known = std::find(keys.begin(), keys.end(), p.key) != keys.end();
    const char* taken = p.key.empty() ? "using the built-in defaults" : known ? "using the built-in default" : "ignored";
    std::fprintf(stderr, "guard: warning: %s; %s, and gc waits until it is mended\n", p.message.c_str(), taken);
  }
  settings->auto_gc = {false, "off while " + settings->path + " has problems"};
  return -1;
}

}  // namespace guard
