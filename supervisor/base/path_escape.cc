#include "supervisor/base/path_escape.h"

#include <cstdint>
#include <cstdio>

namespace guard {
namespace {

// Length of the well-formed UTF-8 sequence starting at s[i], or 0 if the
// byte there does not start one (RFC 3629: no overlongs, no surrogates,
// nothing above U+10FFFF). *cp receives the code point.
size_t Utf8SequenceAt(std::string_view s, size_t i, uint32_t* cp) {
  auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  uint8_t c = b(i);
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t n;
  uint32_t v;
  uint32_t min;
  if ((c & 0xe0) == 0xc0)
    n = 2, v = c & 0x1f, min = 0x80;
  else if ((c & 0xf0) == 0xe0)
    n = 3, v = c & 0x0f, min = 0x800;
  else if ((c & 0xf8) == 0xf0)
    n = 4, v = c & 0x07, min = 0x10000;
  else
    return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xc0) != 0x80) return 0;
    v = (v << 6) | (b(i + k) & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  *cp = v;
  return n;
}

void AppendHexEscape(std::string* out, uint8_t c) {
  char buf[5];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  *out += buf;
}

}  // namespace

std::string EscapeForTerminal(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    uint32_t cp = 0;
    size_t n = Utf8SequenceAt(bytes, i, &cp);
    if (n == 0 || cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f)) {
      AppendHexEscape(&out, static_cast<uint8_t>(bytes[i]));
      i += n == 0 ? 1 : n;  // a control character is one byte or one C1 pair
      if (n == 2) AppendHexEscape(&out, static_cast<uint8_t>(bytes[i - 1]));
      continue;
    }
    if (cp == '\\') out += '\\';
    out.append(bytes.substr(i, n));
    i += n;
  }
  return out;
}

std::string QuoteLikeGit(std::string_view bytes) {
  bool plain = true;
  for (char ch : bytes) {
    uint8_t c = static_cast<uint8_t>(ch);
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') plain = false;
  }
  if (plain) return std::string(bytes);
  std::string out = "\"";
  for (char ch : bytes) {
    uint8_t c = static_cast<uint8_t>(ch);
    switch (c) {
      case '\a': out += "\\a"; continue;
      case '\b': out += "\\b"; continue;
      case '\t': out += "\\t"; continue;
      case '\n': out += "\\n"; continue;
      case '\v': out += "\\v"; continue;
      case '\f': out += "\\f"; continue;
      case '\r': out += "\\r"; continue;
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      default: break;
    }
    if (c < 0x20 || c >= 0x7f) {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  out += '"';
  return out;
}

std::string Utf8OrEscaped(std::string_view bytes, bool* lossy) {
  *lossy = false;
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    uint32_t cp;
    size_t n = Utf8SequenceAt(bytes, i, &cp);
    if (n == 0) {
      AppendHexEscape(&out, static_cast<uint8_t>(bytes[i]));
      *lossy = true;
      ++i;
      continue;
    }
    out.append(bytes.substr(i, n));
    i += n;
  }
  return out;
}

std::string HexBytes(std::string_view bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char ch : bytes) {
    uint8_t c = static_cast<uint8_t>(ch);
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

}  // namespace guard
