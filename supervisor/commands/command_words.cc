#include "supervisor/commands/command_words.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include <CLI/CLI.hpp>

namespace guard {
namespace {

// git's levenshtein.c: the cost of turning `a` into `b`, where w is a swap
// of two neighbours, s a substitution, i an insertion and d a deletion.
int WeightedDistance(std::string_view a, std::string_view b, int w, int s, int i, int d) {
  std::vector<int> row0(b.size() + 1), row1(b.size() + 1), row2(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row1[j] = static_cast<int>(j) * i;
  for (size_t x = 0; x < a.size(); ++x) {
    row2[0] = static_cast<int>(x + 1) * d;
    for (size_t y = 0; y < b.size(); ++y) {
      int cost = row1[y] + s * (a[x] != b[y]);
      if (x > 0 && y > 0 && a[x - 1] == b[y] && a[x] == b[y - 1]) cost = std::min(cost, row0[y - 1] + w);
      cost = std::min(cost, row1[y + 1] + d);
      cost = std::min(cost, row2[y] + i);
      row2[y + 1] = cost;
    }
    std::swap(row0, row1);
    std::swap(row1, row2);
  }
  return row1[b.size()];
}

// git's SIMILARITY_FLOOR: a name farther than this is no suggestion.
constexpr int kSimilarityFloor = 7;

// Whether `word` names a program the user could have meant to run: a path,
// or an executable file in a directory of PATH.
bool IsProgram(const std::string& word) {
  if (word.find('/') != std::string::npos) return true;
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::string_view dirs = path;
  while (!dirs.empty()) {
    size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
    if (dir.empty()) dir = ".";
    if (access((dir + "/" + word).c_str(), X_OK) == 0) return true;
  }
  return false;
}

}  // namespace

std::string FirstWord(const CLI::App& app, int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") return "";
    if (arg.size() < 2 || arg[0] != '-') return arg;  // "-" alone is a word too
    if (arg.find('=') != std::string::npos) continue;  // --root=DIR
    // An option that takes a value takes the next word; a short one may
    // have it attached (-rDIR), which CLI11 reads as its value.
    const CLI::Option* option = app.get_option_no_throw(arg);
    bool attached = arg[1] != '-' && arg.size() > 2;
    if (option != nullptr && option->get_items_expected_min() > 0 && !attached) ++i;
  }
  return "";
}

std::vector<std::string> CommandNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name().rfind("__", 0) != 0) names.push_back(sub->get_name());
  }
  return names;
}

std::vector<std::string> SimilarCommands(const std::string& word, const std::vector<std::string>& names) {
  int best = kSimilarityFloor + 1;
  std::vector<std::string> out;
  for (const std::string& name : names) {
    int distance = name.rfind(word, 0) == 0 ? 0 : WeightedDistance(word, name, 0, 2, 1, 3) + 1;
    if (distance > kSimilarityFloor || distance > best) continue;
    if (distance < best) out.clear();
    best = distance;
    out.push_back(name);
  }
  return out;
}

std::string NotACommand(const std::string& word, const std::vector<std::string>& names) {
  std::string line = "'" + word + "' is not a guard command; ";
  if (IsProgram(word)) return line + "did you mean 'guard -- " + word + "'?";
  std::vector<std::string> similar = SimilarCommands(word, names);
  if (similar.empty()) return line + "see 'guard help'";
  if (similar.size() == 1) return line + "did you mean '" + similar[0] + "'?";
  line += "did you mean one of ";
  for (size_t i = 0; i < similar.size(); ++i) line += (i == 0 ? "'" : ", '") + similar[i] + "'";
  return line + "?";
}

}  // namespace guard
