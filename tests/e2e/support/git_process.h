// Running git in a workspace's tree from end-to-end tests (the environment
// of GitTestEnv), and the checks every git test ends with.
#pragma once

#include <string>
#include <vector>

#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {

ProcessResult Git(const Workspace& ws, const std::vector<std::string>& args, const std::string& cwd = "");
// git's stdout; a failure fails the test.
std::string GitOut(const Workspace& ws, const std::vector<std::string>& args, const std::string& cwd = "");
// Without trailing newlines and spaces.
std::string TrimEnd(std::string s);
// `git fsck --full --strict` of the tree's repository passes (a failure
// fails the test, with git's words).
void CheckFsck(const Workspace& ws, const std::string& cwd = "");
// Waits (at most 60 s) until `path` exists.
bool WaitForFile(const std::string& path);

}  // namespace guard::e2e
