// The line guard says for the ring header's shim_mismatch word
// (supervisor/session/shim_mismatch.h), table-driven: word -> what the line
// must say, and "" where the word reports nothing.
#define BOOST_TEST_MODULE shim_mismatch
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "supervisor/session/shim_mismatch.h"

namespace guard {
namespace {

constexpr uint32_t kSeen = GUARD_SHIM_MISMATCH_SEEN;
constexpr uint32_t kAlone = GUARD_SHIM_MISMATCH_ALONE;
constexpr uint32_t kBlock = GUARD_SHIM_MISMATCH_BLOCK;
const std::string kGuards = "this guard speaks protocol " + std::to_string(GUARD_SHIM_PROTOCOL);

BOOST_AUTO_TEST_CASE(TheLineNamesBothProtocolsAndWhatBecomesOfTheCalls) {
  struct Row {
    uint32_t word;
    std::vector<std::string> says;  // empty: no line
  };
  const Row rows[] = {
      {0, {}},
      // A shim of guard's own protocol has nothing to report.
      {kSeen | GUARD_SHIM_PROTOCOL, {}},
      // Without SEEN the word is not a report.
      {GUARD_SHIM_PROTOCOL + 1, {}},
      {kSeen | kBlock | (GUARD_SHIM_PROTOCOL + 1),
       {"preload shim of protocol " + std::to_string(GUARD_SHIM_PROTOCOL + 1) + ";", kGuards, "the tracer alone captures"}},
      {kSeen | kAlone | kBlock | 0u,
       {"preload shim of protocol 0;", kGuards, "nothing captures", "refused (--on-capture-failure=block)"}},
      {kSeen | kAlone | 9u, {"protocol 9;", "nothing captures", "run unrecorded (--on-capture-failure=allow)"}},
  };
  for (const Row& r : rows) {
    const std::string line = ShimMismatchLine(r.word);
    BOOST_TEST(line.empty() == r.says.empty(), std::hex << r.word << ": " << line);
    for (const std::string& part : r.says) BOOST_TEST(line.find(part) != std::string::npos, line << " / " << part);
    BOOST_TEST(line.find('\n') == std::string::npos);
  }
}

}  // namespace
}  // namespace guard
