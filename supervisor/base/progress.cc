#include "supervisor/base/progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "common/clock.h"

namespace guard {

namespace {
// Below this the line would flicker more than it informs.
constexpr int64_t kIntervalNs = 100 * 1000000LL;

// 20101 -> "20,101".
std::string Grouped(size_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}
}  // namespace

Progress::Progress(std::string label) : label_(std::move(label)) {
  const char* off = std::getenv("GUARD_NO_PROGRESS");
  enabled_ = ::isatty(STDERR_FILENO) == 1 && (off == nullptr || *off == '\0');
}

Progress::~Progress() { Done(); }

void Progress::Update(const char* what, size_t done, size_t total) {
  if (!enabled_) return;
  int64_t now = MonoNowNs();
  if (visible_ && now - last_ns_ < kIntervalNs && done != total) return;
  last_ns_ = now;
  int percent = total == 0 ? 100 : static_cast<int>(done * 100 / total);
  // \r and erase-to-end-of-line: the line is rewritten in place.
  std::fprintf(stderr, "\r%s: %s %s/%s (%d%%)\033[K", label_.c_str(), what, Grouped(done).c_str(),
               Grouped(total).c_str(), percent);
  std::fflush(stderr);
  visible_ = true;
}

void Progress::Say(const char* doing) {
  if (!enabled_) return;
  std::fprintf(stderr, "\r%s: %s...\033[K", label_.c_str(), doing);
  std::fflush(stderr);
  visible_ = true;
  last_ns_ = MonoNowNs();
}

void Progress::Done() {
  if (!visible_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  visible_ = false;
}

}  // namespace guard
