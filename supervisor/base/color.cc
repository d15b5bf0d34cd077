#include "supervisor/base/color.h"

namespace guard {

std::string Paint(bool on, Hue hue, std::string_view text) {
  if (!on) return std::string(text);
  const char* sgr = "";
  switch (hue) {
    case Hue::kRed: sgr = "\033[31m"; break;
    case Hue::kGreen: sgr = "\033[32m"; break;
    case Hue::kYellow: sgr = "\033[33m"; break;
    case Hue::kCyan: sgr = "\033[36m"; break;
    case Hue::kBold: sgr = "\033[1m"; break;
  }
  std::string out(sgr);
  out += text;
  out += "\033[m";
  return out;
}

}  // namespace guard
