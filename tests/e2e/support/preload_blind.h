// A test case --mode preload (the shim alone) cannot pass, because of what
// it cannot see (docs/capture.md, "What --mode preload misses"): skipped,
// with its reason in the test log, when the suite runs with
// GUARD_MODE=preload; run as usual in every other mode. A whole test file
// that preload cannot pass is listed in tests/CMakeLists.txt instead.
//   BOOST_AUTO_TEST_CASE(Name, GUARD_PRELOAD_BLIND("chown by path"))
#pragma once

#include <stdlib.h>

#include <boost/test/unit_test.hpp>
#include <string>

namespace guard::e2e {

struct NotUnderPreload {
  const char* why;
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
    const char* mode = getenv("GUARD_MODE");
    if (mode == nullptr || std::string(mode) != "preload") return true;
    boost::test_tools::assertion_result skip(false);
    skip.message() << "--mode preload cannot see this: " << why;
    return skip;
  }
};

}  // namespace guard::e2e

#define GUARD_PRELOAD_BLIND(why) *boost::unit_test::precondition(::guard::e2e::NotUnderPreload{why})
