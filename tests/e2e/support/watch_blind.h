// A test case --mode watch cannot pass, because of what watching the tree
// cannot see or do (docs/capture.md, "Watch mode"): skipped, with its
// reason in the test log, when the suite runs with GUARD_MODE=watch; run as
// usual in every other mode. A whole test file that watch mode cannot pass
// is listed in tests/CMakeLists.txt (GUARD_WATCH_BLIND_TESTS) instead.
//   BOOST_AUTO_TEST_CASE(Name, GUARD_WATCH_BLIND("a call to refuse"))
#pragma once

#include <stdlib.h>

#include <boost/test/unit_test.hpp>
#include <string>

namespace guard::e2e {

struct NotUnderWatch {
  const char* why;
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
    const char* mode = getenv("GUARD_MODE");
    if (mode == nullptr || std::string(mode) != "watch") return true;
    boost::test_tools::assertion_result skip(false);
    skip.message() << "--mode watch cannot do this: " << why;
    return skip;
  }
};

// Whether the suite runs in --mode watch: for an expectation that differs
// there, with its reason beside it.
inline bool UnderWatch() {
  const char* mode = getenv("GUARD_MODE");
  return mode != nullptr && std::string(mode) == "watch";
}

}  // namespace guard::e2e

#define GUARD_WATCH_BLIND(why) *boost::unit_test::precondition(::guard::e2e::NotUnderWatch{why})
