// Putting guard's environment back into an exec (interpose/env_restore.h):
// nothing changes when nothing was cleared, the variables come back when
// they were, the host's own LD_PRELOAD stays after the shim's, and beyond
// the bound the host's environment goes unchanged.
#define BOOST_TEST_MODULE env_restore
#include <boost/test/unit_test.hpp>

#include <memory>
#include <string>
#include <vector>

#include "interpose/env_restore.h"

namespace {

// An envp built from strings (kept alive by the object).
struct Env {
  std::vector<std::string> strings;
  std::vector<char*> ptrs;
  explicit Env(std::vector<std::string> s) : strings(std::move(s)) {
    for (std::string& e : strings) ptrs.push_back(e.data());
    ptrs.push_back(nullptr);
  }
  char* const* get() { return ptrs.data(); }
};

std::vector<std::string> Strings(char* const* envp) {
  std::vector<std::string> out;
  for (; *envp != nullptr; ++envp) out.emplace_back(*envp);
  return out;
}

constexpr const char* kShim = "/opt/guard/lib/libguard-shim.so";

struct Started {
  Env start{{"HOME=/home/u", std::string("LD_PRELOAD=") + kShim, "GUARD_SESSION=s1", "GUARD_ROOT=/tree",
             "PATH=/bin"}};
  Started() { shim_env_snapshot(start.get(), kShim); }
};

BOOST_FIXTURE_TEST_CASE(EnvironmentThatKeptGuardsVariablesIsPassedAsIs, Started) {
  Env same{{"PATH=/usr/bin", "GUARD_ROOT=/tree", std::string("LD_PRELOAD=/x.so:") + kShim, "GUARD_SESSION=s1"}};
  auto frame = std::make_unique<shim_env_frame>();
  BOOST_TEST(shim_env_restore(same.get(), frame.get()) == same.get());
}

BOOST_FIXTURE_TEST_CASE(ClearedEnvironmentGetsThePreloadAndGuardVariablesBack, Started) {
  Env empty{{}};
  auto frame = std::make_unique<shim_env_frame>();
  std::vector<std::string> got = Strings(shim_env_restore(empty.get(), frame.get()));
  std::vector<std::string> want = {"GUARD_SESSION=s1", "GUARD_ROOT=/tree", std::string("LD_PRELOAD=") + kShim};
  BOOST_TEST(got == want, boost::test_tools::per_element());
}

BOOST_FIXTURE_TEST_CASE(ChangedGuardVariableIsPutBackAndOthersKept, Started) {
  Env changed{{"TERM=xterm", "GUARD_SESSION=forged", "GUARD_OTHER=kept", std::string("LD_PRELOAD=") + kShim}};
  auto frame = std::make_unique<shim_env_frame>();
  std::vector<std::string> got = Strings(shim_env_restore(changed.get(), frame.get()));
  std::vector<std::string> want = {"TERM=xterm", "GUARD_OTHER=kept", "GUARD_SESSION=s1", "GUARD_ROOT=/tree",
                                   std::string("LD_PRELOAD=") + kShim};
  BOOST_TEST(got == want, boost::test_tools::per_element());
}

BOOST_FIXTURE_TEST_CASE(HostsOwnPreloadStaysAfterTheShims, Started) {
  Env theirs{{"LD_PRELOAD=/usr/lib/libfaketime.so", "GUARD_SESSION=s1", "GUARD_ROOT=/tree"}};
  auto frame = std::make_unique<shim_env_frame>();
  std::vector<std::string> got = Strings(shim_env_restore(theirs.get(), frame.get()));
  std::vector<std::string> want = {"GUARD_SESSION=s1", "GUARD_ROOT=/tree",
                                   std::string("LD_PRELOAD=") + kShim + ":/usr/lib/libfaketime.so"};
  BOOST_TEST(got == want, boost::test_tools::per_element());
}

BOOST_FIXTURE_TEST_CASE(EnvironmentBeyondTheBoundIsPassedUnchanged, Started) {
  std::vector<std::string> many;
  for (int i = 0; i <= SHIM_ENV_MAX; ++i) many.push_back("V" + std::to_string(i) + "=x");
  Env big{many};
  auto frame = std::make_unique<shim_env_frame>();
  BOOST_TEST(shim_env_restore(big.get(), frame.get()) == big.get());
  many.pop_back();  // exactly at the bound: restored
  Env at_bound{many};
  char* const* got = shim_env_restore(at_bound.get(), frame.get());
  BOOST_TEST(got != at_bound.get());
  BOOST_TEST(Strings(got).size() == static_cast<size_t>(SHIM_ENV_MAX) + 3);
}

BOOST_AUTO_TEST_CASE(ShimLoadedWithoutPreloadIsNamedByItsFile) {
  Env start{{"GUARD_SESSION=s2"}};
  shim_env_snapshot(start.get(), kShim);
  Env empty{{}};
  auto frame = std::make_unique<shim_env_frame>();
  std::vector<std::string> got = Strings(shim_env_restore(empty.get(), frame.get()));
  std::vector<std::string> want = {"GUARD_SESSION=s2", std::string("LD_PRELOAD=") + kShim};
  BOOST_TEST(got == want, boost::test_tools::per_element());
}

}  // namespace
