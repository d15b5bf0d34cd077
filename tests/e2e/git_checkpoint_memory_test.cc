// A checkpoint streams blobs: its peak memory stays under 64 MiB whatever
// the size of the files it holds, for `guard checkpoint` and for a
// session's end checkpoint alike, and a file a checkpoint already holds is
// not read again (docs/workflows.md). A bound on memory, not on time: the
// peak RSS is the kernel's own (wait4's ru_maxrss). The file is 256 MiB of
// random bytes; the workspace, its store and its pack go with the test.
#define BOOST_TEST_MODULE git_checkpoint_memory
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <algorithm>
#include <filesystem>
#include <map>

#include "tests/e2e/support/git_process.h"
#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/guard_stats.h"
#include "tests/e2e/support/killed_session.h"
#include "tests/e2e/support/workspace.h"

extern char** environ;

namespace guard::e2e {
namespace {

constexpr long kBoundKiB = 64 * 1024;
constexpr const char* kBigMiB = "256";

struct Measured {
  int exit_code = -1;
  long max_rss_kib = 0;
  std::string out;
};

// Runs `argv` (guard) in the tree with the workspace's environment and
// returns its own peak RSS, as wait4 reports it for that one child.
Measured RunMeasured(const Workspace& ws, const std::vector<std::string>& argv) {
  std::map<std::string, std::optional<std::string>> env = GuardEnv(ws);
  for (const auto& [k, v] : GitTestEnv(ws)) env[k] = v;
  // The deferred seal (the end checkpoint among it) runs in guard's own
  // process after the caller has its status: it writes its peak here.
  const std::string stats = ws.dir() + "/measured.stats";
  ::unlink(stats.c_str());
  env["GUARD_STATS_FILE"] = stats;
  std::vector<std::string> vars;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string var = *e;
    if (env.count(var.substr(0, var.find('='))) == 0) vars.push_back(var);
  }
  for (const auto& [k, v] : env) {
    if (v) vars.push_back(k + "=" + *v);
  }
  std::vector<char*> envp, args;
  for (std::string& v : vars) envp.push_back(v.data());
  envp.push_back(nullptr);
  std::vector<std::string> owned = argv;
  for (std::string& a : owned) args.push_back(a.data());
  args.push_back(nullptr);
  const std::string out_path = ws.dir() + "/measured.out";
  pid_t pid = fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    int fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || chdir(ws.tree().c_str()) != 0) _exit(127);
    dup2(fd, 1);
    dup2(fd, 2);
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  int status = 0;
  struct rusage ru {};
  BOOST_REQUIRE(wait4(pid, &status, 0, &ru) == pid);
  Measured m;
  m.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  m.max_rss_kib = ru.ru_maxrss;
  m.out = ReadFile(out_path);
  // A session's seal goes on after its status: waited for, its peak counted.
  BOOST_REQUIRE(WaitForDeferredSeals(ws));
  if (::access(stats.c_str(), F_OK) == 0) {
    std::map<std::string, long long> figures = ReadGuardStats(stats);
    if (figures.count("maxrss_kb") != 0) m.max_rss_kib = std::max(m.max_rss_kib, static_cast<long>(figures["maxrss_kb"]));
  }
  return m;
}

// The store object of the one blob over 200 MiB.
std::string BigStoreObject(const Workspace& ws) {
  for (const auto& e : std::filesystem::recursive_directory_iterator(ws.home() + "/store/objects")) {
    if (e.is_regular_file() && e.file_size() > (200u << 20)) return e.path();
  }
  return "";
}

BOOST_AUTO_TEST_CASE(CheckpointsOfALargeFileStayUnder64MiBAndDoNotReadItAgainWhenUnchanged) {
  Workspace ws;
  ws.Write("README", "one\n");
  RunInTree(ws, "git init -q -b main . && git add -A && git commit -qm one");
  // The session and its end checkpoint: the whole `guard -- CMD` process.
  Measured session = RunMeasured(
      ws, {GuardBinary(), "--quiet", "--root", ws.tree(), "--", "bash", "-c",
           std::string("head -c ") + kBigMiB + "M /dev/urandom > big"});
  BOOST_REQUIRE_MESSAGE(session.exit_code == 0, session.out);
  std::vector<std::string> ids = ws.SessionIds();
  BOOST_REQUIRE_EQUAL(ids.size(), 1u);
  const std::string ref = "refs/guard/" + ids[0];
  BOOST_TEST(TrimEnd(GitOut(ws, {"rev-parse", ref + ":big"})) == TrimEnd(GitOut(ws, {"hash-object", "big"})));
  BOOST_TEST(session.max_rss_kib < kBoundKiB, "the session with its end checkpoint peaked at "
                                                  << session.max_rss_kib << " KiB");
  BOOST_TEST_MESSAGE("session + end checkpoint: " << session.max_rss_kib << " KiB");

  // Unchanged: the blob is not read at all (it is not even there), and
  // nothing is written.
  const std::string object = BigStoreObject(ws);
  BOOST_REQUIRE(!object.empty());
  BOOST_REQUIRE(rename(object.c_str(), (object + ".away").c_str()) == 0);
  Measured unchanged = RunMeasured(ws, {GuardBinary(), "checkpoint"});
  BOOST_REQUIRE(rename((object + ".away").c_str(), object.c_str()) == 0);
  BOOST_TEST(unchanged.exit_code == 0, unchanged.out);
  BOOST_TEST(unchanged.out.find("nothing changed") != std::string::npos, unchanged.out);
  BOOST_TEST(unchanged.max_rss_kib < kBoundKiB, "unchanged: " << unchanged.max_rss_kib << " KiB");
  BOOST_TEST_MESSAGE("guard checkpoint, unchanged: " << unchanged.max_rss_kib << " KiB");

  // Written anew (the ref and the cache of ids gone): hashed and packed
  // from the store, streamed.
  GitOut(ws, {"update-ref", "-d", ref});
  std::filesystem::remove(ws.home() + "/sessions/" + ids[0] + "/git-blob-ids");
  Measured written = RunMeasured(ws, {GuardBinary(), "checkpoint"});
  BOOST_TEST(written.exit_code == 0, written.out);
  BOOST_TEST(written.out.find("1 path changed") != std::string::npos, written.out);
  BOOST_TEST(written.max_rss_kib < kBoundKiB, "written: " << written.max_rss_kib << " KiB");
  BOOST_TEST_MESSAGE("guard checkpoint, written: " << written.max_rss_kib << " KiB");
  BOOST_TEST(TrimEnd(GitOut(ws, {"rev-parse", ref + ":big"})) == TrimEnd(GitOut(ws, {"hash-object", "big"})));
  CheckFsck(ws);
}

}  // namespace
}  // namespace guard::e2e
