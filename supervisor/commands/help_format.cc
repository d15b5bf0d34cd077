#include "supervisor/commands/help_format.h"

#include <cstdlib>
#include <sstream>

namespace guard {
namespace {

// Where the continuation lines of `line` start: its description column, or
// its own indentation.
size_t HangingIndent(const std::string& line) {
  size_t indent = line.find_first_not_of(' ');
  if (indent == std::string::npos) return 0;
  size_t gap = line.find("  ", indent);
  if (gap == std::string::npos) return indent;
  size_t column = line.find_first_not_of(' ', gap);
  return column == std::string::npos ? indent : column;
}

void WrapLine(const std::string& line, size_t width, std::string* out) {
  size_t hang = HangingIndent(line);
  if (hang > width / 2) hang = line.find_first_not_of(' ') + 4;  // too deep a column: a short hang
  std::string rest = line;
  bool first = true;
  while (rest.size() > width) {
    size_t floor = first ? line.find_first_not_of(' ') : hang;
    size_t cut = rest.rfind(' ', width);
    if (cut == std::string::npos || cut <= floor) cut = rest.find(' ', width);  // a word longer than the room
    if (cut == std::string::npos) break;
    size_t end = rest.find_last_not_of(' ', cut);
    *out += rest.substr(0, end + 1) + "\n";
    size_t next = rest.find_first_not_of(' ', cut);
    if (next == std::string::npos) return;
    rest = std::string(hang, ' ') + rest.substr(next);
    first = false;
  }
  *out += rest + "\n";
}

}  // namespace

std::string WrapHelp(const std::string& text, size_t width) {
  std::string out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) WrapLine(line, width, &out);
  if (!text.empty() && text.back() != '\n' && !out.empty()) out.pop_back();
  return out;
}

size_t HelpWidth() {
  const char* columns = std::getenv("COLUMNS");
  if (columns == nullptr) return 80;
  char* end = nullptr;
  long n = std::strtol(columns, &end, 10);
  if (end == columns || *end != '\0' || n < 40 || n > 80) return 80;
  return static_cast<size_t>(n);
}

}  // namespace guard
