#include "supervisor/trace/signal_scope.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace guard {
namespace {

// Debian 12's <linux/landlock.h> predates scopes: the ABI's own values.
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};
constexpr unsigned kCreateRulesetVersion = 1u << 0;
constexpr uint64_t kScopeSignal = 1u << 1;
constexpr long kScopesAbi = 6;

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif

long Abi() { return syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion); }

}  // namespace

bool SignalScopeAvailable() { return Abi() >= kScopesAbi; }

int EnterSignalScope() {
  if (Abi() < kScopesAbi) return EOPNOTSUPP;
  RulesetAttr attr{0, 0, kScopeSignal};
  long fd = syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (fd < 0) return errno;
  int err = syscall(SYS_landlock_restrict_self, fd, 0) == 0 ? 0 : errno;
  close(static_cast<int>(fd));
  return err;
}

}  // namespace guard
