#include "tests/e2e/support/guard_stats.h"

#include <fstream>

namespace guard::e2e {

std::map<std::string, long long> ReadGuardStats(const std::string& path) {
  std::map<std::string, long long> out;
  std::ifstream in(path);
  std::string name;
  long long value;
  while (in >> name >> value) out[name] = value;
  return out;
}

}  // namespace guard::e2e
