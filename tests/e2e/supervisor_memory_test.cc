// The supervisor's memory stays bounded whatever the session's size (issue
// 12: a peak RSS of at most 64 MiB; docs/performance.md measures it up to
// 100,000 files). What it keeps per path it touched is small (interned
// names, compact notes: recorder.h, work_saver.h), and the seal works
// through the paths in batches instead of holding a record for each.
//
// The bounds are peak RSS (GUARD_STATS_FILE's maxrss_kb, the supervisor's
// own getrusage): a count of bytes, not a time, so they do not depend on
// the machine's speed or load. Each leaves a wide margin over what the
// build measured (about 25 MiB and 35 MiB), and lies well below what the
// supervisor took before (about 150 MiB for the first session, 20,000
// deletes).
#define BOOST_TEST_MODULE supervisor_memory
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <stdexcept>

#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/guard_stats.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

constexpr int kFiles = 20000;
constexpr long long kBoundKb = 64 * 1024;

// GUARD_STATS_FILE's "name value" lines.
// Names as long as a real tree's (node_modules paths are 40 to 80
// characters): each holds heap memory of its own wherever it is kept.
std::string FileName(int i) { return "package-with-a-long-name/lib/module-" + std::to_string(i) + ".js"; }

void MakeFiles(const Workspace& ws, const std::string& dir) {
  ws.Mkdir(dir);
  ws.Mkdir(dir + "/package-with-a-long-name");
  ws.Mkdir(dir + "/package-with-a-long-name/lib");
  for (int i = 0; i < kFiles; ++i) {
    std::string path = ws.Path(dir + "/" + FileName(i));
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error("cannot create " + path);
    close(fd);
  }
}

std::map<std::string, long long> RunWithStats(const Workspace& ws, const std::string& script) {
  GuardRun run;
  run.command = {"sh", "-c", script};
  const std::string stats = ws.outside() + "/stats";
  run.env["GUARD_STATS_FILE"] = stats;
  run.timeout_seconds = 900;  // a hang guard only
  GuardResult r = RunGuard(ws, run);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return ReadGuardStats(stats);
}

BOOST_AUTO_TEST_CASE(RemovingTwentyThousandFilesKeepsTheSupervisorsPeakMemorySmall) {
  Workspace ws;
  MakeFiles(ws, "node_modules");
  std::map<std::string, long long> st = RunWithStats(ws, "rm -rf node_modules");
  BOOST_REQUIRE(!ws.Exists("node_modules"));
  BOOST_TEST(st["files"] >= kFiles);
  BOOST_TEST_MESSAGE("maxrss_kb " << st["maxrss_kb"]);
  BOOST_TEST(st["maxrss_kb"] > 0);
  BOOST_TEST(st["maxrss_kb"] < kBoundKb);
}

BOOST_AUTO_TEST_CASE(WritingTwentyThousandFilesKeepsTheSupervisorsPeakMemorySmall) {
  // Every file gets a post-image (the work saver) and a final state.
  Workspace ws;
  MakeFiles(ws, "src");
  std::map<std::string, long long> st = RunWithStats(
      ws, "cp -r src copy && find copy -type f -exec sh -c 'for f; do echo \"$f\" > \"$f\"; done' sh {} +");
  BOOST_TEST(st["files"] >= kFiles);
  BOOST_TEST_MESSAGE("maxrss_kb " << st["maxrss_kb"] << ", post_images " << st["post_images"]);
  BOOST_TEST(st["maxrss_kb"] > 0);
  BOOST_TEST(st["maxrss_kb"] < kBoundKb);
}

}  // namespace
}  // namespace guard::e2e
