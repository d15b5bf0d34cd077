#include "tests/e2e/support/git_process.h"

#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <thread>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/killed_session.h"

namespace guard::e2e {

ProcessResult Git(const Workspace& ws, const std::vector<std::string>& args, const std::string& cwd) {
  ProcessSpec spec;
  spec.argv = {"git"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.cwd = cwd.empty() ? ws.tree() : cwd;
  spec.env = GitTestEnv(ws);
  return RunProcess(spec);
}

std::string GitOut(const Workspace& ws, const std::vector<std::string>& args, const std::string& cwd) {
  ProcessResult r = Git(ws, args, cwd);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "git " << args[0] << ": " << DescribeResult(r));
  return r.out;
}

std::string TrimEnd(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

void CheckFsck(const Workspace& ws, const std::string& cwd) {
  ProcessResult r = Git(ws, {"fsck", "--full", "--strict", "--no-progress"}, cwd);
  BOOST_TEST(r.exit_code == 0, "git fsck --full --strict: " << DescribeResult(r));
}

bool WaitForFile(const std::string& path) {
  for (int i = 0; i < 6000; ++i) {
    if (access(path.c_str(), F_OK) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace guard::e2e
