#include "supervisor/base/units.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace guard {
namespace {

// Splits "12.5GiB" into 12.5 and "GiB". False when there is no number, or
// the number is negative or not finite.
bool SplitNumber(const std::string& text, double* number, std::string* unit) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0) return false;
  std::string digits = text.substr(0, i);
  if (digits.find('.') != digits.rfind('.') || digits == ".") return false;
  char* end = nullptr;
  *number = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size() || !std::isfinite(*number) || *number < 0) return false;
  size_t j = i;
  while (j < text.size() && text[j] == ' ') ++j;  // "10 GiB" too
  *unit = text.substr(j);
  return true;
}

}  // namespace

bool ParseDuration(const std::string& text, int64_t* ns) {
  double n = 0;
  std::string unit;
  if (!SplitNumber(text, &n, &unit)) return false;
  double scale = 0;
  if (unit.empty()) {
    if (n != 0) return false;  // "30": seconds or days? say it
    scale = 1;
  } else if (unit == "ms") {
    scale = 1e6;
  } else if (unit == "s") {
    scale = 1e9;
  } else if (unit == "m") {
    scale = 60e9;
  } else if (unit == "h") {
    scale = 3600e9;
  } else if (unit == "d") {
    scale = 86400e9;
  } else if (unit == "w") {
    scale = 7 * 86400e9;
  } else {
    return false;
  }
  double v = n * scale;
  if (v > 9.2e18) return false;
  *ns = static_cast<int64_t>(std::llround(v));
  return true;
}

bool ParseSize(const std::string& text, uint64_t* bytes) {
  double n = 0;
  std::string unit;
  if (!SplitNumber(text, &n, &unit)) return false;
  static const struct {
    const char* name;
    double scale;
  } kUnits[] = {
      {"", 1},        {"B", 1},         {"K", 1024.0},    {"KiB", 1024.0},       {"KB", 1e3},
      {"M", 1048576.0}, {"MiB", 1048576.0}, {"MB", 1e6},     {"G", 1073741824.0}, {"GiB", 1073741824.0},
      {"GB", 1e9},    {"T", 1099511627776.0}, {"TiB", 1099511627776.0}, {"TB", 1e12},
  };
  for (const auto& u : kUnits) {
    if (unit != u.name) continue;
    double v = n * u.scale;
    if (v > 1.8e19) return false;
    *bytes = static_cast<uint64_t>(std::llround(v));
    return true;
  }
  return false;
}

std::string FormatSize(uint64_t bytes) {
  static const char* kNames[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else if (v < 10) std::snprintf(buf, sizeof buf, "%.2f %s", v, kNames[u]);
  else if (v < 100) std::snprintf(buf, sizeof buf, "%.1f %s", v, kNames[u]);
  else std::snprintf(buf, sizeof buf, "%.0f %s", v, kNames[u]);
  return buf;
}

std::string FormatDuration(int64_t ns) {
  if (ns == 0) return "0";
  static const struct {
    const char* name;
    int64_t ns;
  } kUnits[] = {{"d", 86400'000000000LL}, {"h", 3600'000000000LL},
                {"m", 60'000000000LL},        {"s", 1'000000000LL}, {"ms", 1'000000LL}};
  for (const auto& u : kUnits) {
    if (ns % u.ns == 0) return std::to_string(ns / u.ns) + u.name;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3fs", static_cast<double>(ns) / 1e9);
  return buf;
}

}  // namespace guard
