#include "supervisor/base/config_edit.h"

#include <sstream>
#include <vector>

#include <toml++/toml.h>

#include "supervisor/base/config.h"

namespace guard {
namespace {

// The byte offset in `text` of toml++'s (line, column), both from 1, the
// column counted in characters (UTF-8 sequences).
size_t Offset(const std::string& text, const toml::source_position& at) {
  size_t pos = 0;
  for (toml::source_index line = 1; line < at.line && pos < text.size(); ++line) {
    size_t nl = text.find('\n', pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
  }
  for (toml::source_index column = 1; column < at.column && pos < text.size(); ++column) {
    ++pos;
    while (pos < text.size() && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) ++pos;
  }
  return pos;
}

// Whether `line` is the header [name] (spaces and a comment allowed).
bool IsHeader(const std::string& line, const std::string& name) {
  size_t a = line.find_first_not_of(" \t");
  if (a == std::string::npos || line[a] != '[' || line.compare(a, 2, "[[") == 0) return false;
  size_t close = line.find(']', a);
  if (close == std::string::npos) return false;
  std::string inside = line.substr(a + 1, close - a - 1);
  size_t b = inside.find_first_not_of(" \t"), e = inside.find_last_not_of(" \t");
  return b != std::string::npos && inside.substr(b, e - b + 1) == name;
}

bool IsAnyHeader(const std::string& line) {
  size_t a = line.find_first_not_of(" \t");
  return a != std::string::npos && line[a] == '[';
}

bool IsKeyLine(const std::string& line) {
  size_t a = line.find_first_not_of(" \t");
  return a != std::string::npos && line[a] != '#' && line[a] != '[';
}

}  // namespace

std::string TomlValueText(const std::string& value) {
  try {
    toml::table t = toml::parse("v = " + value);
    if (t.size() == 1 && t.contains("v") && !t["v"].is_table()) return value;
  } catch (const toml::parse_error&) {
  }
  return TomlBasicString(value);
}

Status SetConfigText(const std::string& text, const std::string& path, const std::string& key,
                     const std::string& value_text, std::string* out) {
  toml::table table;
  try {
    table = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    return Status::InvalidArgument(path + ":" + std::to_string(e.source().begin.line) +
                                   ": not valid TOML: " + std::string(e.description()) + "; mend it first");
  }
  size_t dot = key.find('.');
  const std::string section = key.substr(0, dot), leaf = key.substr(dot + 1);
  if (const toml::node* node = table.at_path(key).node(); node != nullptr) {
    // In place: the value's span, whatever surrounds it.
    size_t begin = Offset(text, node->source().begin), end = Offset(text, node->source().end);
    if (begin >= end || end > text.size()) {
      return Status::InvalidArgument(path + ": cannot find " + key + "'s value in the file; edit it by hand");
    }
    *out = text.substr(0, begin) + value_text + text.substr(end);
    return Status::Ok();
  }
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string added = leaf + " = " + value_text;
  size_t header = lines.size();
  for (size_t i = 0; i < lines.size() && header == lines.size(); ++i) {
    if (IsHeader(lines[i], section)) header = i;
  }
  if (header < lines.size()) {
    // After the table's last key line (comments before the next header
    // are that header's), else just under the header.
    size_t at = header + 1;
    for (size_t i = header + 1; i < lines.size() && !IsAnyHeader(lines[i]); ++i) {
      if (IsKeyLine(lines[i])) at = i + 1;
    }
    lines.insert(lines.begin() + static_cast<long>(at), added);
  } else {
    if (!lines.empty() && !lines.back().empty()) lines.push_back("");
    lines.push_back("[" + section + "]");
    lines.push_back(added);
  }
  out->clear();
  for (const std::string& line : lines) *out += line + "\n";
  try {
    (void)toml::parse(*out, path);
  } catch (const toml::parse_error&) {
    return Status::InvalidArgument(path + ": cannot add " + key + " to the file as it is (its [" + section +
                                   "] is not a table of its own); edit it by hand");
  }
  return Status::Ok();
}

}  // namespace guard
