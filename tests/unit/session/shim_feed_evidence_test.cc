// ShimFeed's reaction to evidence of forgery (supervisor/session/shim_feed.h,
// SetEvidenceHandler; docs/security.md, "Failing closed"), table-driven:
// what is in the ring -> whether the feed saw evidence, the words it gave
// the handler, and the ring's fail_closed word after a drain. On a real ring
// segment with a Capture over an in-memory log. The unit twin of
// tests/e2e/forgery_evidence_test.cc.
#define BOOST_TEST_MODULE shim_feed_evidence
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "common/ring_format.h"
#include "common/ring_producer.h"
#include "common/shim_record.h"
#include "supervisor/session/shim_feed.h"
#include "tests/unit/capture/core_under_test.h"
#include "tests/unit/common/ring_test_util.h"

namespace guard {
namespace {

pid_t MyTid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

// A shim CALL of an mkdir of `abs` (absent before) by thread `tid`.
std::vector<uint8_t> MkdirCall(pid_t tid, const std::string& abs) {
  guard_shim_call call;
  std::memset(&call, 0, sizeof call);
  call.call_id = 1;
  call.tid = tid;
  call.action = GUARD_SHIM_MKDIR;
  call.mode = 0755;
  call.before1.err = ENOENT;
  call.before2.err = -1;
  call.lengths[GUARD_SHIM_STR_PATH1] = static_cast<uint16_t>(abs.size());
  std::vector<uint8_t> out(sizeof call + abs.size());
  std::memcpy(out.data(), &call, sizeof call);
  std::memcpy(out.data() + sizeof call, abs.data(), abs.size());
  return out;
}

enum class Ring {
  kHonestCall,        // a CALL as the shim makes it
  kForgedFraming,     // a published record of length 12 (not whole 8-byte units)
  kShortCall,         // a CALL record shorter than a call
  kUnknownType,       // a record of a type the shim never puts
  kRelativePath,      // a CALL whose path is not absolute
};

struct Row {
  const char* name;
  Ring ring;
  bool evidence;
  const char* words;  // part of what the handler was told ("" when not called)
};

const Row kRows[] = {
    {"an honest CALL is no evidence", Ring::kHonestCall, false, ""},
    {"forged framing is evidence", Ring::kForgedFraming, true, "framing no producer makes"},
    {"a CALL shorter than a call is evidence", Ring::kShortCall, true, "shorter than a call"},
    {"a record of unknown type is evidence", Ring::kUnknownType, true, "unknown type"},
    {"a CALL with a relative path is evidence", Ring::kRelativePath, true, "path not absolute"},
};

struct Fixture : testing::CoreUnderTest {
  ring_test::TestRing ring{64 * 1024};
  std::mutex mu;
  std::unique_ptr<ShimFeed> feed;
  std::vector<std::string> told;

  Fixture() : CoreUnderTest("guard-feed-evidence") {
    feed = std::make_unique<ShimFeed>(capture.get(), &mu, "test", logger);
    BOOST_REQUIRE(feed->Attach(ring.segment.base(), ring.segment.size()).ok());
    feed->SetEvidenceHandler([this](const std::string& what) { told.push_back(what); });
  }
  ~Fixture() { feed->Stop(); }

  void Put(uint32_t type, const std::vector<uint8_t>& payload) {
    guard_ring_producer p = ring.Producer();
    BOOST_REQUIRE_EQUAL(guard_ring_put(&p, type, payload.data(), static_cast<uint32_t>(payload.size())), 0);
  }
  void Fill(Ring what) {
    switch (what) {
      case Ring::kHonestCall: Put(GUARD_SHIM_RECORD_CALL, MkdirCall(MyTid(), Abs("d"))); break;
      case Ring::kForgedFraming: {
        Put(GUARD_SHIM_RECORD_CALL, MkdirCall(MyTid(), Abs("d")));
        reinterpret_cast<guard_ring_record*>(ring.data())->length = 12;
        break;
      }
      case Ring::kShortCall: Put(GUARD_SHIM_RECORD_CALL, std::vector<uint8_t>(16, 1)); break;
      case Ring::kUnknownType: Put(GUARD_RING_TYPE_FIRST_USER + 7, std::vector<uint8_t>(8, 0)); break;
      case Ring::kRelativePath: Put(GUARD_SHIM_RECORD_CALL, MkdirCall(MyTid(), "d")); break;
    }
  }
  uint32_t FailClosed() const { return __atomic_load_n(&ring.header()->fail_closed, __ATOMIC_RELAXED); }
  void Drain() {
    std::lock_guard<std::mutex> lock(mu);
    feed->DrainLocked();
  }
};

BOOST_AUTO_TEST_CASE(WhatTheFeedTakesForEvidence) {
  for (const Row& row : kRows) {
    BOOST_TEST_CONTEXT(row.name) {
      Fixture f;
      f.Fill(row.ring);
      f.Drain();
      BOOST_TEST(f.feed->failed_closed() == row.evidence);
      BOOST_TEST(f.FailClosed() == (row.evidence ? 1u : 0u));
      BOOST_REQUIRE_EQUAL(f.told.size(), row.evidence ? 1u : 0u);
      if (row.evidence) BOOST_TEST(f.told[0].find(row.words) != std::string::npos, f.told[0]);
    }
  }
}

// A process of the session clears the word: the next drain sets it again,
// and the handler, told once, is not told again.
BOOST_AUTO_TEST_CASE(AClearedWordIsSetAgainAndTheEvidenceIsToldOnce) {
  Fixture f;
  f.Fill(Ring::kUnknownType);
  f.Drain();
  BOOST_REQUIRE(f.FailClosed() == 1u);
  __atomic_store_n(&f.ring.header()->fail_closed, 0u, __ATOMIC_RELAXED);
  f.Fill(Ring::kShortCall);
  f.Drain();
  BOOST_TEST(f.FailClosed() == 1u);
  BOOST_TEST(f.told.size() == 1u);
  f.Drain();
  BOOST_TEST(f.FailClosed() == 1u);
}

}  // namespace
}  // namespace guard
