#include "supervisor/git/git_test_pause.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace guard {

void GitTestPause(const char* step) {
  const char* spec = std::getenv("GUARD_TEST_PAUSE_GIT");
  if (spec == nullptr || *spec == '\0') return;
  std::string s(spec);
  size_t colon = s.find(':');
  if (colon == std::string::npos || s.compare(0, colon, step) != 0) return;
  std::string path = s.substr(colon + 1);
  FILE* f = std::fopen(path.c_str(), "we");
  if (f == nullptr) return;
  std::fclose(f);
  for (int i = 0; i < 6000 && access(path.c_str(), F_OK) == 0; ++i) usleep(10 * 1000);
}

}  // namespace guard
