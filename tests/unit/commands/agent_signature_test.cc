// guard doctor's look at the agent's program on a Mac
// (supervisor/commands/agent_signature.h), on Claude Code 2.1.332's macOS
// signing data (tests/unit/base/data/): found on PATH through a symlink, or
// through a script's `#!/usr/bin/env node` line; a program that is no
// Mach-O, and none at all.
#define BOOST_TEST_MODULE agent_signature
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include "supervisor/commands/agent_signature.h"
#include "tests/unit/support/temp_dir.h"

namespace guard {
namespace {

const std::string kClaude = std::string(GUARD_TEST_DATA_DIR) + "/claude-2.1.332-darwin-arm64.sig";

void Executable(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
  BOOST_REQUIRE(chmod(path.c_str(), 0755) == 0);
}

// The fixture as an executable file at `path`, as an install has it.
void InstallClaude(const std::string& path) {
  std::ifstream in(kClaude, std::ios::binary);
  Executable(path, std::string(std::istreambuf_iterator<char>(in), {}));
}

BOOST_AUTO_TEST_CASE(ClaudeFoundThroughASymlinkIsHardened) {
  testing::TempDir dir;
  BOOST_REQUIRE(mkdir(dir.File("bin").c_str(), 0755) == 0);
  InstallClaude(dir.File("claude-2.1.332"));
  BOOST_REQUIRE(symlink("../claude-2.1.332", dir.File("bin/claude").c_str()) == 0);
  AgentSignature a = ProbeAgentSignature("claude", dir.File("empty") + ":" + dir.File("bin"));
  BOOST_TEST(a.found);
  BOOST_TEST(a.read, a.detail);
  BOOST_TEST(a.hardened);
  BOOST_TEST(!a.injectable);
  BOOST_TEST(a.program == dir.File("claude-2.1.332"));
  BOOST_TEST(a.detail.find("(arm64)") != std::string::npos, a.detail);
}

BOOST_AUTO_TEST_CASE(AScriptIsFollowedToItsInterpreter) {
  testing::TempDir dir;
  Executable(dir.File("claude"), "#!/usr/bin/env node\nrequire('./cli.js')\n");
  InstallClaude(dir.File("node"));
  AgentSignature a = ProbeAgentSignature("claude", dir.path);
  BOOST_TEST(a.read, a.detail);
  BOOST_TEST(a.hardened);
  BOOST_TEST(a.detail.find("is a script run by " + dir.File("node")) != std::string::npos, a.detail);
}

BOOST_AUTO_TEST_CASE(NoMachOAndNoProgramAreSaidSo) {
  testing::TempDir dir;
  Executable(dir.File("claude"), std::string("\x7f" "ELF\x02\x01\x01", 7) + std::string(64, '\0'));
  AgentSignature elf = ProbeAgentSignature("claude", dir.path);
  BOOST_TEST(elf.found);
  BOOST_TEST(!elf.read);
  BOOST_TEST(elf.detail.find("not a 64-bit Mach-O") != std::string::npos, elf.detail);
  AgentSignature none = ProbeAgentSignature("claude", dir.File("nowhere"));
  BOOST_TEST(!none.found);
  BOOST_TEST(none.detail == "claude not found on PATH");
}

}  // namespace
}  // namespace guard
