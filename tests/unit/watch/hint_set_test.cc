// HintSet: hints coalesced into the fewest names to look at, none covering
// another, in byte order; kAll swallows everything. Table-driven.
#define BOOST_TEST_MODULE hint_set
#include <boost/test/unit_test.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "supervisor/watch/hint_set.h"

namespace guard {
namespace {

using Scope = WatchHint::Scope;

WatchHint P(const std::string& p) { return {p, Scope::kPath}; }
WatchHint T(const std::string& p) { return {p, Scope::kTree}; }
WatchHint A() { return {"/r", Scope::kAll}; }

std::string Show(const std::vector<WatchHint>& hints) {
  std::ostringstream o;
  for (const WatchHint& h : hints) {
    o << (h.scope == Scope::kPath ? "P:" : h.scope == Scope::kTree ? "T:" : "A:") << h.path << " ";
  }
  return o.str();
}

struct Case {
  const char* name;
  std::vector<WatchHint> in;
  std::vector<WatchHint> out;
};

BOOST_AUTO_TEST_CASE(HintsAreCoalescedIntoTheFewestNamesToLookAt) {
  const std::vector<Case> cases = {
      {"one name hinted many times is looked at once", {P("/r/a"), P("/r/a"), P("/r/a")}, {P("/r/a")}},
      {"names come out in byte order", {P("/r/b"), P("/r/a/x"), P("/r/a")}, {P("/r/a"), P("/r/a/x"), P("/r/b")}},
      {"a tree covers a path of its own name", {P("/r/d"), T("/r/d")}, {T("/r/d")}},
      {"a tree covers the names below it", {P("/r/d/x"), T("/r/d"), T("/r/d/e"), P("/r/d/e/f")}, {T("/r/d")}},
      {"a tree covers names below it that sort after a sibling", {T("/r/a/b"), P("/r/a/b-c"), P("/r/a/b/c")},
       {T("/r/a/b"), P("/r/a/b-c")}},
      {"a name beside a tree is not below it", {T("/r/d"), P("/r/d0"), P("/r/dx/y")}, {T("/r/d"), P("/r/d0"), P("/r/dx/y")}},
      {"a path above a tree does not cover it", {P("/r/d"), T("/r/d/e")}, {P("/r/d"), T("/r/d/e")}},
      {"kAll swallows everything before it", {P("/r/a"), T("/r/d"), A()}, {A()}},
      {"kAll swallows everything after it", {A(), P("/r/a"), T("/r/d")}, {A()}},
      {"the root as a tree is kAll", {P("/r/a"), T("/r")}, {A()}},
      {"the root as a path is its own state", {P("/r"), P("/r")}, {P("/r")}},
      {"names outside the root are left out", {P("/other/a"), P("/rx/a"), P("/r/a")}, {P("/r/a")}},
      {"nothing in, nothing out", {}, {}},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.name) {
      HintSet set("/r");
      set.AddAll(c.in);
      BOOST_TEST(set.empty() == c.out.empty());
      BOOST_TEST(Show(set.Take()) == Show(c.out));
      BOOST_TEST(set.empty());
      BOOST_TEST(Show(set.Take()) == "");
    }
  }
}

}  // namespace
}  // namespace guard
