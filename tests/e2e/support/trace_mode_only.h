// For a test of the tracer itself (its stops, its decoder, its kill points):
// every guard it runs uses --mode trace, whatever GUARD_MODE the suite runs
// with. Include once, in the test's one source file, after boost/test.
#pragma once

#include <stdlib.h>

namespace guard::e2e {

struct TraceModeOnly {
  TraceModeOnly() { setenv("GUARD_MODE", "trace", 1); }
};
BOOST_TEST_GLOBAL_FIXTURE(TraceModeOnly);

}  // namespace guard::e2e
