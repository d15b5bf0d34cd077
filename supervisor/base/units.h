// Durations and sizes as people write them in flags and in config.toml:
// "30d", "12h", "90m", "45s", "2w" and "10GiB", "500MB", "1.5G", "4096".
#pragma once

#include <cstdint>
#include <string>

namespace guard {

// A whole number (or a decimal, "1.5h") followed by one unit: ms, s, m, h, d
// or w (milliseconds, seconds, minutes, hours, days, weeks). "0" alone is zero. *ns receives the
// duration in nanoseconds. False for anything else (no unit, negative,
// overflow), so that "30" is never silently taken as seconds or days.
bool ParseDuration(const std::string& text, int64_t* ns);
// A number with an optional unit: none or B (bytes), K/KB/KiB, M/MB/MiB,
// G/GB/GiB, T/TB/TiB. Decimal (KB = 1000) and binary (KiB = 1024) prefixes
// mean what they say; a bare K, M, G or T is binary, as du and df take it.
bool ParseSize(const std::string& text, uint64_t* bytes);

// "1.2 GiB", "340 KiB", "12 B": binary units, three significant digits.
std::string FormatSize(uint64_t bytes);
// "30d", "12h", "90m", "45s", "100ms": the largest unit up to days that
// divides it exactly (so that "14d" prints back as written; "2w" prints as
// "14d").
std::string FormatDuration(int64_t ns);

}  // namespace guard
