#include "supervisor/trace/test_fault.h"

#include <cstdlib>
#include <cstring>

namespace guard {

DecodeFault DecodeFault::FromEnvironment() {
  const char* spec = std::getenv("GUARD_TEST_FAULT");
  return spec == nullptr ? DecodeFault() : Parse(spec);
}

DecodeFault DecodeFault::Parse(const std::string& spec) {
  static const std::string kPrefix = "decode-fail:";
  DecodeFault f;
  if (spec.compare(0, kPrefix.size(), kPrefix) != 0) return f;
  std::string what = spec.substr(kPrefix.size());
  if (what.size() > 1 && what[0] == '#') {
    char* end = nullptr;
    unsigned long long n = std::strtoull(what.c_str() + 1, &end, 10);
    if (*end == '\0') f.nth_ = n;
  } else {
    f.syscall_ = what;
  }
  return f;
}

bool DecodeFault::Hits(const char* syscall) {
  ++seen_;
  if (!syscall_.empty()) return syscall_ == syscall;
  return nth_ != 0 && seen_ == nth_;
}

}  // namespace guard
