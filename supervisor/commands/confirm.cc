#include "supervisor/commands/confirm.h"

namespace guard {

bool Confirm(const std::string& question, std::istream& in, std::FILE* out) {
  std::fprintf(out, "%s [y/N] ", question.c_str());
  std::fflush(out);
  std::string answer;
  if (!std::getline(in, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes";
}

}  // namespace guard
