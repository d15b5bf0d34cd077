// CallsInFlight (supervisor/capture/calls_in_flight.h), table-driven: each
// row is a sequence of calls handed over, recorded, ended, and what the
// ordering state must answer between them. The end-to-end race tests that
// these orderings stand for name their rows (tests/e2e/capture_race_test.cc).
//
// The little language of a row's steps:
//   open T P [P2] [hold] [movedir] [movenames]   thread T's call on P (and P2) is recorded and let run
//   touch P [moves]     another call, not recorded, names P (moves: it may move names)
//   unknown             a call whose names guard could not resolve
//   end T               T's call is seen to end
//   holder T P [P2] = N   the thread T's call on P must wait for (0: none)
//   mover T = N         the thread a call of T with unknown names must wait for
//   quiet T = 0|1       whether the tree tells what T's call did
//   alone T P [P2] = 0|1
#define BOOST_TEST_MODULE calls_in_flight
#include "supervisor/capture/calls_in_flight.h"

#include <sstream>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

namespace guard {
namespace {

struct Row {
  const char* name;
  std::vector<const char*> steps;
};

// Reads "P [P2]" up to a word that is not a path (paths start with '/').
void Paths(std::istringstream& in, std::string* p, std::string* p2, std::vector<std::string>* rest) {
  in >> *p;
  std::string w;
  while (in >> w) {
    if (w[0] == '/' && p2->empty()) {
      *p2 = w;
    } else {
      rest->push_back(w);
    }
  }
}

// "T P [P2] = WANT", the rest of a holder or alone step.
struct Query {
  pid_t tid = 0;
  std::string p, p2, want;
  const std::string* second() const { return p2.empty() ? nullptr : &p2; }
};
Query ReadQuery(std::istringstream& in) {
  Query q;
  in >> q.tid;
  std::vector<std::string> rest;
  Paths(in, &q.p, &q.p2, &rest);
  BOOST_REQUIRE(rest.size() == 2 && rest[0] == "=");
  q.want = rest[1];
  return q;
}

void RunRow(const Row& row) {
  BOOST_TEST_CONTEXT(row.name) {
    CallsInFlight calls;
    for (const char* step : row.steps) {
      BOOST_TEST_CONTEXT(step) {
        std::istringstream in(step);
        std::string verb;
        in >> verb;
        if (verb == "open") {
          pid_t tid = 0;
          in >> tid;
          std::string p, p2;
          std::vector<std::string> rest;
          Paths(in, &p, &p2, &rest);
          auto has = [&](const char* w) { return std::find(rest.begin(), rest.end(), w) != rest.end(); };
          calls.Count();
          const bool moves = has("movedir") || has("movenames");
          calls.Stamp(p, p2.empty() ? nullptr : &p2, moves);
          const bool alone = calls.Alone(tid, p, p2.empty() ? nullptr : &p2);
          PendingOp& op = calls.Open(tid);
          op.abs_path = p;
          op.abs_path2 = p2;
          op.holdable = has("hold");
          op.moves_directory = has("movedir");
          op.moves_names_below = has("movenames");
          op.quiet_at = calls.calls_seen();
          op.alone = alone;
        } else if (verb == "touch") {
          std::string p, moves;
          in >> p >> moves;
          calls.Count();
          calls.Stamp(p, nullptr, moves == "moves");
        } else if (verb == "unknown") {
          calls.Count();
          calls.StampUnknown();
        } else if (verb == "end") {
          pid_t tid = 0;
          in >> tid;
          BOOST_TEST(calls.Take(tid).has_value());
        } else if (verb == "holder") {
          Query q = ReadQuery(in);
          BOOST_TEST(calls.HolderOf(q.tid, q.p, q.second()) == std::stoi(q.want));
        } else if (verb == "mover") {
          pid_t tid = 0;
          std::string eq;
          int want = 0;
          in >> tid >> eq >> want;
          BOOST_TEST(calls.MoverInFlight(tid) == want);
        } else if (verb == "quiet") {
          pid_t tid = 0;
          std::string eq;
          int want = 0;
          in >> tid >> eq >> want;
          const PendingOp* op = calls.Find(tid);
          BOOST_REQUIRE(op != nullptr);
          BOOST_TEST(calls.Quiet(*op) == (want != 0));
        } else if (verb == "alone") {
          Query q = ReadQuery(in);
          BOOST_TEST(calls.Alone(q.tid, q.p, q.second()) == (q.want == "1"));
        } else {
          BOOST_FAIL("unknown step");
        }
      }
    }
  }
}

const Row kRows[] = {
    // FirstWritersOfOneFileKeepItsContentBeforeThemAll, ATracedCallWaitsFor...:
    // two threads' calls on one name run in their records' order.
    {"a call waits for another thread's call in flight on its name",
     {"open 1 /r/a hold", "holder 2 /r/a = 1", "holder 2 /r/b = 0", "holder 1 /r/a = 0", "end 1",
      "holder 2 /r/a = 0"}},
    {"either name of a two-name call counts, on either side",
     {"open 1 /r/a /r/b hold", "holder 2 /r/b = 1", "holder 2 /r/x /r/a = 1", "holder 2 /r/x /r/y = 0"}},
    {"a call that its producer cannot hold makes nobody wait",
     {"open 1 /r/a", "holder 2 /r/a = 0", "mover 2 = 0"}},
    {"a directory moving above a name holds a call on it",
     {"open 1 /r/d /r/e hold movedir", "holder 2 /r/d/x = 1", "holder 2 /r/e/y/z = 1", "holder 2 /r/dx = 0",
      "holder 2 /r/f = 0"}},
    {"a file rename holds only its own names", {"open 1 /r/d /r/e hold", "holder 2 /r/d/x = 0"}},
    {"a call with unknown names waits for a mover alone",
     {"open 1 /r/a hold", "mover 2 = 0", "open 3 /r/d /r/e hold movenames", "mover 2 = 3", "mover 3 = 0",
      "end 3", "mover 2 = 0"}},
    // one_stop_outcome_test: the tree tells a one-stop call's outcome only
    // when nothing since could have changed its paths.
    {"a call nobody followed is quiet", {"open 1 /r/a", "quiet 1 = 1"}},
    {"a later call on its path makes it not quiet", {"open 1 /r/a", "touch /r/a", "quiet 1 = 0"}},
    {"a later call on its second path makes it not quiet", {"open 1 /r/a /r/b", "touch /r/b", "quiet 1 = 0"}},
    {"a later call elsewhere leaves it quiet", {"open 1 /r/a", "touch /r/b", "quiet 1 = 1"}},
    {"a later call naming its path as its second makes it not quiet",
     {"open 1 /r/b", "open 2 /r/x /r/b", "end 2", "quiet 1 = 0"}},
    {"a later call that may move names makes it not quiet", {"open 1 /r/a", "touch /r/x moves", "quiet 1 = 0"}},
    {"a later call with unknown names makes it not quiet", {"open 1 /r/a", "unknown", "quiet 1 = 0"}},
    {"a call recorded beside another on its path is never quiet",
     {"open 2 /r/a", "open 1 /r/a", "end 2", "quiet 1 = 0"}},
    {"a call alone is alone; one beside a mover is not",
     {"alone 1 /r/a = 1", "open 2 /r/b", "alone 1 /r/a = 1", "alone 1 /r/b = 0", "alone 1 /r/x /r/b = 0",
      "open 3 /r/d /r/e movenames", "alone 1 /r/a = 0", "alone 3 /r/a = 1"}},
};

BOOST_AUTO_TEST_CASE(OrderingTable) {
  for (const Row& row : kRows) RunRow(row);
}

BOOST_AUTO_TEST_CASE(TakeRemovesTheCallAndAnsweresNothingTwice) {
  CallsInFlight calls;
  calls.Open(7).seq = 3;
  BOOST_TEST(calls.Has(7));
  std::optional<PendingOp> op = calls.Take(7);
  BOOST_REQUIRE(op.has_value());
  BOOST_TEST(op->seq == 3u);
  BOOST_TEST(!calls.Has(7));
  BOOST_TEST(!calls.Take(7).has_value());
}

}  // namespace
}  // namespace guard
