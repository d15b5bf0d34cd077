#include "supervisor/review/review_options.h"

#include <unistd.h>

#include <cstdlib>

namespace guard {

bool UseColor(ColorWhen when, int fd) {
  if (when != ColorWhen::kAuto) return when == ColorWhen::kAlways;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && *no_color != '\0') return false;
  return ::isatty(fd) == 1;
}

bool ParseColorWhen(const std::string& s, ColorWhen* out) {
  if (s == "auto")
    *out = ColorWhen::kAuto;
  else if (s == "always")
    *out = ColorWhen::kAlways;
  else if (s == "never")
    *out = ColorWhen::kNever;
  else
    return false;
  return true;
}

}  // namespace guard
