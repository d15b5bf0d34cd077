// How the review commands print paths and other bytes from the journal.
// Paths are bytes: they may hold newlines, control characters and invalid
// UTF-8, and none of that may corrupt a terminal, a line-based listing or a
// JSON document.
#pragma once

#include <string>
#include <string_view>

namespace guard {

// For one-line human output (`guard show`): control characters (below 0x20,
// 0x7f, U+0080..U+009F) and bytes that are not valid UTF-8 become \xNN; a
// backslash becomes \\. Valid printable UTF-8 is kept.
std::string EscapeForTerminal(std::string_view bytes);

// As git prints paths with core.quotepath=on: unchanged if every byte is
// printable ASCII other than '"' and '\'; else in double quotes with C
// escapes (\t, \n, \", \\ ...) and other bytes as three-digit octal.
std::string QuoteLikeGit(std::string_view bytes);

// For JSON strings: valid UTF-8 is returned unchanged; otherwise each byte
// that is not part of a well-formed sequence is replaced by the four
// characters \xNN (a literal backslash, 'x', two lowercase hex digits), and
// *lossy is set so that the caller can add the raw bytes in hex.
std::string Utf8OrEscaped(std::string_view bytes, bool* lossy);

// Lowercase hex of every byte.
std::string HexBytes(std::string_view bytes);

}  // namespace guard
