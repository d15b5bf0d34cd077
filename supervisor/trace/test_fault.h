// TEST ONLY: a fault injection point for the end-to-end tests of how guard
// handles a call it cannot decode (tests/e2e/decode_failure_test.cc). A
// real decode failure (a tracee's path that cannot be read, another thread
// unmapping it) cannot be made to happen on demand.
//
//   GUARD_TEST_FAULT=decode-fail:<syscall>   every trapped <syscall> (e.g. openat)
//   GUARD_TEST_FAULT=decode-fail:#<N>        the N-th trapped mutating call (from 1)
//
// The variable is read once, from the supervisor's own environment, when the
// tracer is made: the command cannot set it (a tracee's environment is its
// own, and guard never reads it). The fault only turns a call guard could
// decode into a capture failure, which then follows --on-capture-failure like
// any other: it can get a call refused or counted as not captured, never let
// through a call that guard would otherwise refuse.
#pragma once

#include <cstdint>
#include <string>

namespace guard {

class DecodeFault {
 public:
  // From GUARD_TEST_FAULT; none when it is unset or names another fault.
  static DecodeFault FromEnvironment();
  static DecodeFault Parse(const std::string& spec);

  // Called for each trapped call that decoded as a mutation, in order:
  // whether the fault makes this one fail to decode.
  bool Hits(const char* syscall);

 private:
  std::string syscall_;  // empty: by ordinal
  uint64_t nth_ = 0;     // 0: none
  uint64_t seen_ = 0;
};

}  // namespace guard
