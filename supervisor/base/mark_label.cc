#include "supervisor/base/mark_label.h"

namespace guard {

std::string_view CutMarkLabel(std::string_view label) {
  if (label.size() <= kMaxMarkLabel) return label;
  size_t n = kMaxMarkLabel;
  // Back over UTF-8 continuation bytes (10xxxxxx) to a character's start.
  while (n > 0 && (static_cast<unsigned char>(label[n]) & 0xC0) == 0x80) --n;
  return label.substr(0, n);
}

}  // namespace guard
