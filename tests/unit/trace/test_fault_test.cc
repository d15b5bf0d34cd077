// The test-only decode fault (supervisor/trace/test_fault.h): which trapped
// calls a GUARD_TEST_FAULT spec hits, and that anything else hits none.
#define BOOST_TEST_MODULE test_fault
#include <boost/test/unit_test.hpp>

#include "supervisor/trace/test_fault.h"

using guard::DecodeFault;

BOOST_AUTO_TEST_CASE(BySyscallNameHitsEveryCallOfThatName) {
  DecodeFault f = DecodeFault::Parse("decode-fail:openat");
  BOOST_TEST(!f.Hits("unlinkat"));
  BOOST_TEST(f.Hits("openat"));
  BOOST_TEST(f.Hits("openat"));
  BOOST_TEST(!f.Hits("open"));
}

BOOST_AUTO_TEST_CASE(ByOrdinalHitsTheNthCallOnly) {
  DecodeFault f = DecodeFault::Parse("decode-fail:#3");
  BOOST_TEST(!f.Hits("openat"));
  BOOST_TEST(!f.Hits("unlinkat"));
  BOOST_TEST(f.Hits("renameat2"));
  BOOST_TEST(!f.Hits("openat"));
}

BOOST_AUTO_TEST_CASE(AnythingElseHitsNothing) {
  for (const char* spec : {"", "decode-fail:", "decode-fail:#", "decode-fail:#x", "decode-fail:#0", "die-after:3",
                           "openat"}) {
    BOOST_TEST_CONTEXT(spec) {
      DecodeFault f = DecodeFault::Parse(spec);
      for (int i = 0; i < 5; ++i) BOOST_TEST(!f.Hits("openat"));
    }
  }
}
