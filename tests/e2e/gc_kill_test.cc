// guard gc SIGKILLed at random moments: every session left listed is
// complete (every blob its journal names reads back whole), and the next
// gc finishes the job, leaving the same sessions and the same store as a gc
// that was never killed.
//
// The state directory is built once (eight sessions of one root writing
// files of shared and unique content, then aged so that the sweep may
// remove what no kept session names) and copied for each seed; the kill
// comes after a seeded delay between 0 and the time an uninterrupted gc of
// the same copy took, so kills land in the recovery, the measurement, the
// removal of sessions and the sweep alike.
#define BOOST_TEST_MODULE gc_kill
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/random_workload.h"
#include "tests/e2e/support/store_checks.h"

namespace guard::e2e {
namespace {

constexpr int kSeeds = 25;

ProcessSpec GcSpec(const Workspace& ws, const std::string& home) {
  ProcessSpec spec;
  spec.argv = {GuardBinary(), "gc", "--keep", "0s", "--keep-newest", "2"};
  spec.cwd = ws.tree();
  spec.env = GuardEnv(ws);
  spec.env["GUARD_HOME"] = home;
  return spec;
}

std::vector<std::string> SessionsIn(const std::string& home) {
  std::vector<std::string> ids;
  std::error_code ec;
  for (auto& e : std::filesystem::directory_iterator(home + "/sessions", ec)) {
    std::string name = e.path().filename().string();
    if (name[0] != '.') ids.push_back(name);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

void Copy(const std::string& from, const std::string& to) {
  ProcessResult r = RunProcess(ProcessSpec{.argv = {"cp", "-a", from, to}});
  if (r.exit_code != 0) throw std::runtime_error("cp -a: " + r.err);
}

BOOST_AUTO_TEST_CASE(KilledGcLeavesEveryKeptSessionCompleteAndTheNextGcFinishes) {
  Workspace ws;
  for (int s = 0; s < 8; ++s) {
    std::string script = "for i in $(seq 1 60); do printf 'shared %d\\n' $((i % 20)) > s$i.txt; head -c 2000 "
                         "/dev/urandom > u$i.bin; done; rm -f u1*.bin; mv s2.txt moved" + std::to_string(s);
    GuardResult r = RunGuardBash(ws, script);
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  }
  AgeStore(ws.home(), 7200);
  std::vector<std::string> all = SessionsIn(ws.home());
  BOOST_REQUIRE(all.size() == 8u);
  std::vector<std::string> expect(all.end() - 2, all.end());

  // The reference: a gc that is not killed, and how long it takes: the
  // shortest of three, so that the kills' delays stay inside a gc on a
  // machine whose speed changes under a parallel test run (one slow
  // reference spread them past the end of the faster gcs after it).
  std::string ref = ws.dir() + "/ref";
  int64_t full_us = INT64_MAX;
  for (int r = 0; r < 3; ++r) {
    std::error_code ec;
    std::filesystem::remove_all(ref, ec);
    Copy(ws.home(), ref);
    auto t0 = std::chrono::steady_clock::now();
    ProcessResult done = RunProcess(GcSpec(ws, ref));
    full_us = std::min<int64_t>(
        full_us, std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count());
    BOOST_REQUIRE_MESSAGE(done.exit_code == 0, DescribeResult(done));
    BOOST_REQUIRE(SessionsIn(ref) == expect);
  }
  size_t ref_objects = CountObjects(ref);
  BOOST_TEST_MESSAGE("uninterrupted gc: " << full_us << " us, " << CountObjects(ws.home()) << " -> " << ref_objects
                                          << " objects");

  Rng rng(15);
  int killed_during = 0;
  for (int seed = 0; seed < kSeeds; ++seed) {
    BOOST_TEST_CONTEXT("seed " << seed) {
      std::string home = ws.dir() + "/kill" + std::to_string(seed);
      Copy(ws.home(), home);
      int64_t delay = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(full_us) + 1));
      ChildProcess gc(GcSpec(ws, home));
      std::this_thread::sleep_for(std::chrono::microseconds(delay));
      kill(gc.pid(), SIGKILL);
      ProcessResult r = gc.Wait();
      if (r.exit_code == 128 + SIGKILL) ++killed_during;
      // Every session still listed is whole.
      std::vector<std::string> left = SessionsIn(home);
      for (const std::string& id : left) {
        std::vector<std::string> missing = UnreadableBlobs(home, id);
        BOOST_TEST(missing.empty(), "after a kill at " << delay << " us, session " << id << " lost "
                                                       << missing.size() << " blobs, first: "
                                                       << (missing.empty() ? "" : missing[0]));
      }
      for (const std::string& id : expect) BOOST_TEST((std::find(left.begin(), left.end(), id) != left.end()));
      // The next gc completes what the killed one began.
      ProcessResult again = RunProcess(GcSpec(ws, home));
      BOOST_TEST(again.exit_code == 0, DescribeResult(again));
      BOOST_TEST(SessionsIn(home) == expect);
      for (const std::string& id : expect) BOOST_TEST(UnreadableBlobs(home, id).empty());
      BOOST_TEST(CountObjects(home) == ref_objects);
      std::error_code ec;
      std::filesystem::remove_all(home, ec);
    }
  }
  BOOST_TEST_MESSAGE(killed_during << " of " << kSeeds << " kills landed while gc ran");
  // Enough kills must land inside the gc, or the test shows nothing.
  BOOST_TEST(killed_during >= kSeeds / 3);
}

}  // namespace
}  // namespace guard::e2e
