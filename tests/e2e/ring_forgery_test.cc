// A hostile process of the session writes into the shim's ring
// (tests/programs/ring_forger.c): a claim it never publishes, in the name of
// pid 1; every claim slot in pid 1's name; every name lock in tid 1's. None
// of it may hide another process's changes or stall the session: the `rm`
// and the overwrite that follow are recorded (undo gives both files back
// byte for byte), and every run ends by itself (a hung one is killed by the
// run's deadline, which fails the test; nothing here measures time).
// Unit twins: ring_test's AClaimOfAProcessNotOfTheSessionIsFreedAndNeverDelivered,
// ClaimSlotsTakenByAProcessNotOfTheSessionAreFreed; name_lock_test's
// ALockWhoseOwnerIsNotOfTheSessionIsTakenOver. Where guard sees the
// forgery, the session fails closed (forgery_evidence_test holds that
// part). Under --mode trace there is
// no ring: the forger finds none, and the session records as always.
#define BOOST_TEST_MODULE ring_forgery
#include <boost/test/unit_test.hpp>

#include <stdlib.h>

#include <set>
#include <string>

#include "common/ring_format.h"
#include "tests/e2e/support/durability_checks.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/session_mode.h"

namespace guard::e2e {
namespace {

constexpr int kDeadlineSeconds = 60;  // a hang guard, far beyond a normal run
constexpr const char* kGone = "a";
constexpr const char* kOverwritten = "b";
constexpr const char* kGoneContent = "the only copy of a\n";
constexpr const char* kOverwrittenContent = "b as it was\n";

GuardResult RunScript(const Workspace& ws, const std::string& script) {
  GuardRun run;
  run.command = {"/bin/bash", "-c", script};
  run.timeout_seconds = kDeadlineSeconds;
  GuardResult r = RunGuard(ws, run);
  BOOST_TEST_MESSAGE("stdout: " << r.out << "stderr: " << r.err);
  BOOST_REQUIRE_MESSAGE(!r.timed_out, "the session hung");
  return r;
}

// Runs the forger, then `rm a; echo evil > b`, and checks that undo gives
// both back.
void ForgeThenChange(const std::string& forgery) {
  Workspace ws;
  ws.Write(kGone, kGoneContent);
  ws.Write(kOverwritten, kOverwrittenContent);
  const std::string forger = TestProgram("ring_forger");
  GuardResult r = RunScript(ws, forger + " " + forgery + "; echo forger=$?; rm a; echo evil > b");
  BOOST_TEST(r.out.find(ShimCaptures() ? "forger=0" : "forger=3") != std::string::npos, r.out);
  // A forgery guard sees (an owner not of the session) makes it fail
  // closed (docs/security.md, "Failing closed"): under --mode auto the
  // tracer records what follows; under preload the capture-failure policy
  // (block) refuses what comes after guard saw it. Either way undo gives
  // both files back: each change was refused or recorded.
  const char* mode = getenv("GUARD_MODE");
  const bool alone = mode != nullptr && std::string(mode) == "preload";
  if (alone && r.err.find("log is incomplete") != std::string::npos) {
    BOOST_TEST((!ws.Exists(kGone) || ws.Read(kGone) == kGoneContent));
  } else {
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_REQUIRE(!ws.Exists(kGone));
    BOOST_REQUIRE(ws.Read(kOverwritten) == "evil\n");
  }
  GuardResult undo = RunGuardWithin(ws, {"undo", "--yes"}, kDeadlineSeconds);
  BOOST_TEST_MESSAGE("undo: " << undo.out << undo.err);
  BOOST_REQUIRE(!undo.timed_out);
  BOOST_TEST(undo.exit_code == 0, undo.err);
  BOOST_REQUIRE(ws.Exists(kGone));
  BOOST_TEST(ws.Read(kGone) == kGoneContent);
  BOOST_TEST(ws.Read(kOverwritten) == kOverwrittenContent);
}

BOOST_AUTO_TEST_CASE(AClaimInPid1sNameHidesNoOtherProcessesChanges) { ForgeThenChange("claim"); }

BOOST_AUTO_TEST_CASE(EveryClaimSlotInPid1sNameStallsNoPut) { ForgeThenChange("slots"); }

BOOST_AUTO_TEST_CASE(NameLocksInTid1sNameHideNothing) { ForgeThenChange("locks"); }

// Ten rm's after every lock word was set to tid 1: each takes its name's
// lock over (tid 1 is not a thread of the session) instead of waiting out
// the 2 s bound and going on without it, which would leave the word naming
// tid 1. So the words of the ten names no longer do.
BOOST_AUTO_TEST_CASE(ForgedNameLocksAreTakenOverNotWaitedFor) {
  Workspace ws;
  std::string rms;
  std::set<uint32_t> buckets;
  for (int i = 0; i < 10; ++i) {
    const std::string name = "f" + std::to_string(i);
    ws.Write(name, "file " + std::to_string(i) + "\n");
    rms += "rm " + name + "; ";
    char* real = ::realpath(ws.Path(name).c_str(), nullptr);
    BOOST_REQUIRE(real != nullptr);
    buckets.insert(guard_ring_name_lock_index(real, std::string(real).size()));
    ::free(real);
  }
  const std::string forger = TestProgram("ring_forger");
  GuardResult r = RunScript(ws, forger + " locks; " + rms + forger + " count-locks; true");
  BOOST_TEST(r.exit_code == 0, r.err);
  for (int i = 0; i < 10; ++i) BOOST_TEST(!ws.Exists("f" + std::to_string(i)));
  if (!ShimCaptures()) return;  // no ring, no locks
  const size_t at = r.out.find("tid1-locks ");
  BOOST_REQUIRE_MESSAGE(at != std::string::npos, r.out);
  const unsigned left = static_cast<unsigned>(std::stoul(r.out.substr(at + 11)));
  BOOST_TEST(left <= GUARD_RING_NAME_LOCKS - buckets.size(), "words still naming tid 1: " << left);
  GuardResult undo = RunGuardWithin(ws, {"undo", "--yes"}, kDeadlineSeconds);
  BOOST_TEST(undo.exit_code == 0, undo.err);
  for (int i = 0; i < 10; ++i) BOOST_TEST(ws.Read("f" + std::to_string(i)) == "file " + std::to_string(i) + "\n");
}

}  // namespace
}  // namespace guard::e2e
