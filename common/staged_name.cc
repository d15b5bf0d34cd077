#include "common/staged_name.h"

namespace guard {
namespace {

constexpr std::string_view kPrefix = ".guard-restore.";

// Consumes one or more decimal digits from the front of `s`.
bool EatDigits(std::string_view* s) {
  size_t n = 0;
  while (n < s->size() && (*s)[n] >= '0' && (*s)[n] <= '9') ++n;
  s->remove_prefix(n);
  return n > 0;
}

}  // namespace

std::string StagedName(pid_t pid, uint32_t n) {
  return std::string(kPrefix) + std::to_string(pid) + "." + std::to_string(n);
}

bool IsStagedName(std::string_view name) {
  if (name.substr(0, kPrefix.size()) != kPrefix) return false;
  name.remove_prefix(kPrefix.size());
  if (!EatDigits(&name) || name.empty() || name[0] != '.') return false;
  name.remove_prefix(1);
  return EatDigits(&name) && name.empty();
}

}  // namespace guard
