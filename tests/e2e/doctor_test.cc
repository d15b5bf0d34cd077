// guard doctor: what it says matches what this machine has (the test makes
// the same checks itself: a child seized by ptrace, a user namespace,
// inotify's limits, the shim), each mode whose needs are met is tried and
// works here, and nothing is left behind: no session in the user's state
// directory, no temporary directory, no file in the current directory.
#define BOOST_TEST_MODULE doctor
#include <boost/test/unit_test.hpp>

#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

bool ChildCanBeSeized() {
  pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  bool ok = ptrace(PTRACE_SEIZE, child, 0, 0) == 0;
  kill(child, SIGKILL);
  int status;
  waitpid(child, &status, __WALL);
  return ok;
}

bool UserNamespacesWork() {
  pid_t child = fork();
  if (child == 0) _exit(unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0 ? 0 : 1);
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

long long ProcNumber(const std::string& path) { return std::stoll(ReadFile(path)); }

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.push_back(e->d_name);
    }
    closedir(d);
  }
  return out;
}

struct Doctor {
  ProcessResult result;
  nlohmann::json json;
};

Doctor RunDoctor(const Workspace& ws, const std::map<std::string, std::optional<std::string>>& extra = {}) {
  ProcessSpec spec;
  spec.argv = {GuardBinary(), "doctor", "--json"};
  spec.cwd = ws.tree();
  spec.env = GuardEnv(ws);
  spec.env["TMPDIR"] = ws.outside() + "/tmp";
  for (const auto& [k, v] : extra) spec.env[k] = v;
  spec.timeout_seconds = 180;
  MakeDir(ws.outside() + "/tmp");
  Doctor d;
  d.result = RunProcess(spec);
  d.json = nlohmann::json::parse(d.result.out, nullptr, false);
  return d;
}

const nlohmann::json& FindingOf(const nlohmann::json& j, const std::string& key) {
  for (const auto& f : j["findings"]) {
    if (f["key"] == key) return f;
  }
  static const nlohmann::json none;
  BOOST_FAIL("no finding " << key);
  return none;
}

const nlohmann::json& ModeOf(const nlohmann::json& j, const std::string& mode) {
  for (const auto& m : j["modes"]) {
    if (m["mode"] == mode) return m;
  }
  static const nlohmann::json none;
  BOOST_FAIL("no mode " << mode);
  return none;
}

BOOST_AUTO_TEST_CASE(WhatItSaysIsWhatTheMachineHasAndItLeavesNothingBehind) {
  Workspace ws;
  ws.Write("mine.txt", "the user's\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  Doctor d = RunDoctor(ws);
  BOOST_REQUIRE_MESSAGE(!d.json.is_discarded(), DescribeResult(d.result));
  const nlohmann::json& j = d.json;
  BOOST_TEST(j["schema"] == 1);

  BOOST_TEST(FindingOf(j, "ptrace")["ok"] == ChildCanBeSeized());
  BOOST_TEST(FindingOf(j, "user_namespaces")["ok"] == UserNamespacesWork());
  const nlohmann::json& inotify = FindingOf(j, "inotify");
  BOOST_TEST(inotify["max_user_watches"] == ProcNumber("/proc/sys/fs/inotify/max_user_watches"));
  BOOST_TEST(inotify["max_queued_events"] == ProcNumber("/proc/sys/fs/inotify/max_queued_events"));
  BOOST_TEST(FindingOf(j, "shim")["ok"] == true);  // the build's shim, beside the binary
  BOOST_TEST(FindingOf(j, "reflink")["detail"].get<std::string>().find(ws.tree()) != std::string::npos);

  // Every mode whose needs are met was tried, and works here.
  for (const auto& m : j["modes"]) {
    const bool can = m["missing"].empty();
    BOOST_TEST(m["trial"]["ran"] == can, m.dump());
    if (can) BOOST_TEST(m["works"] == true, m.dump());
    BOOST_TEST(!m["cannot_promise"].get<std::string>().empty());
  }
  BOOST_TEST(ModeOf(j, "preload")["works"] == true);
  BOOST_TEST(ModeOf(j, "auto")["works"] == ChildCanBeSeized());
  BOOST_TEST(j["works"] == true);
  BOOST_TEST(d.result.exit_code == 0, DescribeResult(d.result));

  // Nothing left behind.
  BOOST_TEST(ws.SessionIds().empty());
  BOOST_TEST(Entries(ws.outside() + "/tmp").empty());
  BOOST_TEST(DiffSnapshots(before, SnapshotTree(ws.tree())).empty());
}

BOOST_AUTO_TEST_CASE(WithoutTheShimPreloadIsSaidToNeedItAndIsNotTried) {
  Workspace ws;
  Doctor d = RunDoctor(ws, {{"GUARD_SHIM_PATH", ws.outside() + "/no-such-shim.so"}});
  BOOST_REQUIRE_MESSAGE(!d.json.is_discarded(), DescribeResult(d.result));
  BOOST_TEST(FindingOf(d.json, "shim")["ok"] == false);
  const nlohmann::json& preload = ModeOf(d.json, "preload");
  BOOST_TEST(preload["works"] == false);
  BOOST_TEST(preload["trial"]["ran"] == false);
  BOOST_TEST(preload["missing"] == nlohmann::json::array({"shim"}));
}

BOOST_AUTO_TEST_CASE(TheTextSaysEachModeAndWhatItCannotPromise) {
  Workspace ws;
  ProcessSpec spec;
  spec.argv = {GuardBinary(), "doctor"};
  spec.cwd = ws.tree();
  spec.env = GuardEnv(ws);
  spec.timeout_seconds = 180;
  ProcessResult r = RunProcess(spec);
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(r.out.rfind("guard doctor: ", 0) == 0, r.out);
  for (const char* line : {"\n  preload  works", "\nmodes:\n", "\nwhat each mode cannot promise here:\n",
                           "\n  preload: static programs"}) {
    BOOST_TEST(r.out.find(line) != std::string::npos, line << " in:\n" << r.out);
  }
}

}  // namespace
}  // namespace guard::e2e
