// Helpers shared by the ring's tests: a segment removed at the end, records
// that say who wrote them and in which order, children that put them.
#pragma once

#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <vector>

#include "common/ring_consumer.h"
#include "common/ring_format.h"
#include "common/ring_producer.h"
#include "common/ring_segment.h"

namespace ring_test {

constexpr uint32_t kTestType = GUARD_RING_TYPE_FIRST_USER;

// A fresh segment, removed when the test ends.
struct TestRing {
  explicit TestRing(uint64_t capacity) {
    guard::Status st = guard::RingSegment::Create(capacity, &segment);
    BOOST_REQUIRE_MESSAGE(st.ok(), st.ToString());
  }
  ~TestRing() { (void)guard::RingSegment::Remove(segment.name()); }
  guard_ring_header* header() const { return static_cast<guard_ring_header*>(segment.base()); }
  unsigned char* data() const { return static_cast<unsigned char*>(segment.base()) + GUARD_RING_HEADER_SIZE; }
  guard_ring_producer Producer() const {
    guard_ring_producer p;
    BOOST_REQUIRE_EQUAL(guard_ring_producer_init(&p, segment.base(), segment.size()), 0);
    return p;
  }
  guard::RingSegment segment;
};

// A record's payload: who, which one, and filler bytes that depend on both,
// so that a torn or misplaced payload is noticed.
struct Stamp {
  uint32_t producer;
  uint32_t seq;
};

inline uint8_t FillByte(const Stamp& s, size_t i) {
  return static_cast<uint8_t>(s.producer * 131 + s.seq * 7 + i);
}

// Writes the payload into out (size bytes, at least sizeof(Stamp)); no
// allocation, so that signal handlers can use it.
inline void FillPayload(uint8_t* out, uint32_t producer, uint32_t seq, size_t size) {
  Stamp s{producer, seq};
  std::memcpy(out, &s, sizeof s);
  for (size_t i = sizeof s; i < size; ++i) out[i] = FillByte(s, i);
}

inline std::vector<uint8_t> MakePayload(uint32_t producer, uint32_t seq, size_t size) {
  if (size < sizeof(Stamp)) size = sizeof(Stamp);
  std::vector<uint8_t> v(size);
  FillPayload(v.data(), producer, seq, size);
  return v;
}

// Checks the filler; returns the stamp.
inline bool ReadPayload(const guard::RingRecord& r, Stamp* s) {
  if (r.payload.size() < sizeof(Stamp)) return false;
  std::memcpy(s, r.payload.data(), sizeof *s);
  for (size_t i = sizeof *s; i < r.payload.size(); ++i)
    if (r.payload[i] != FillByte(*s, i)) return false;
  return true;
}

inline int Put(guard_ring_producer* p, uint32_t producer, uint32_t seq, size_t size) {
  std::vector<uint8_t> v = MakePayload(producer, seq, size);
  return guard_ring_put(p, kTestType, v.data(), static_cast<uint32_t>(v.size()));
}

// Per-producer bookkeeping of what a consumer saw: every record must come
// exactly once and in the order its producer put it.
struct Tally {
  std::map<uint32_t, uint32_t> next;  // producer -> next expected seq
  uint64_t records = 0;
  uint64_t bad = 0;  // torn payloads, gaps, duplicates, reordering
  bool Take(const guard::RingRecord& r) {
    Stamp s;
    if (r.type != kTestType || !ReadPayload(r, &s)) {
      ++bad;
      return true;
    }
    uint32_t& want = next[s.producer];
    if (s.seq != want) ++bad;
    want = s.seq + 1;
    ++records;
    return true;
  }
  guard::RingConsumer::Handler Handler() {
    return [this](const guard::RingRecord& r) { return Take(r); };
  }
};

// Forks a child that runs fn and _exits with its result (no Boost.Test in
// the child: a failure there is its exit status).
inline pid_t Spawn(const std::function<int()>& fn) {
  pid_t pid = ::fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) ::_exit(fn());
  return pid;
}

// A generous hang guard for loops that wait on other processes: failing it
// means the ring wedged, not that the machine is slow.
struct HangGuard {
  explicit HangGuard(int seconds) : until(std::chrono::steady_clock::now() + std::chrono::seconds(seconds)) {}
  bool Expired() const { return std::chrono::steady_clock::now() > until; }
  std::chrono::steady_clock::time_point until;
};

// Drains until every child has exited and the ring is empty; returns false
// if the hang guard ran out first. Exit statuses go to *statuses.
inline bool DrainUntilDone(guard::RingConsumer* c, const guard::RingConsumer::Handler& h,
                           std::vector<pid_t> children, std::vector<int>* statuses = nullptr,
                           int hang_seconds = 120) {
  HangGuard guard(hang_seconds);
  while (!guard.Expired()) {
    c->Drain(h);
    for (size_t i = 0; i < children.size();) {
      int st = 0;
      if (::waitpid(children[i], &st, WNOHANG) == children[i]) {
        if (statuses) statuses->push_back(st);
        children.erase(children.begin() + static_cast<long>(i));
      } else {
        ++i;
      }
    }
    if (children.empty()) {
      c->Drain(h);
      if (c->Empty()) return true;
    }
    c->Wait(5);
  }
  for (pid_t pid : children) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  return false;
}

}  // namespace ring_test
