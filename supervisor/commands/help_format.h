// guard's --help and `guard help` within the terminal's width: CLI11 (2.1)
// writes each option's description on one line however long; this wraps
// every line over the width under its own description column, so that the
// help reads on an 80-column terminal and the man page (made from it by
// help2man, packaging/manpage.cmake) stays within 80 columns.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace guard {

// `text` with each line longer than `width` broken at spaces, the rest of
// it indented as its description column (after the first run of two spaces
// past the line's indentation), or as the line itself for plain text. A word
// longer than the room is left whole.
std::string WrapHelp(const std::string& text, size_t width);

// The width help is written for: $COLUMNS when it is from 40 to 80, else 80.
size_t HelpWidth();

class WrappingFormatter : public CLI::Formatter {
 public:
  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
    return WrapHelp(CLI::Formatter::make_help(app, std::move(name), mode), HelpWidth());
  }
};

}  // namespace guard
