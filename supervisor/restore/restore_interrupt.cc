#include "supervisor/restore/restore_interrupt.h"

#include <signal.h>

#include <atomic>
#include <initializer_list>

namespace guard {
namespace {

// Written by the handler, read by the restore's one thread between changes.
// Lock-free, hence safe from a signal handler.
std::atomic<int> caught{0};
static_assert(std::atomic<int>::is_always_lock_free);

void OnSignal(int sig) {
  int none = 0;
  caught.compare_exchange_strong(none, sig, std::memory_order_relaxed);
}

}  // namespace

void CatchRestoreInterrupts(bool restart) {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = restart ? SA_RESTART : 0;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

int RestoreInterruptSignal() { return caught.load(std::memory_order_relaxed); }

}  // namespace guard
