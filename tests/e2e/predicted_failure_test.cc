// Calls guard expects to fail, from what their paths hold when it looks,
// that another process lets succeed before they run; and two processes'
// calls on one name that guard records in one order while they run in the
// other. Found with three shells each writing one shared name and moving it
// away (session 19): undo left files behind in every mode. Each case races
// three processes over one name (tests/programs/predicted_failures.c, and
// the shells themselves) and is undone, replayed and undone byte for byte,
// three times over: a lost race leaves a file behind, or another's content
// in one.
// Unit twins: capture_core_test (the RENAME_NOREPLACE and mkdir rows, "an unlink
// waits for a rename in flight onto its name").
#define BOOST_TEST_MODULE predicted_failure
#include <boost/test/unit_test.hpp>

#include <string>

#include "tests/e2e/support/undone_session.h"

namespace guard::e2e {
namespace {

constexpr int kRuns = 3;

// Three processes race `mode` over "slot"; each owns its own file, or
// files ROUNDS of them, made beforehand when the mode moves them.
void Race(const std::string& mode, bool own_files) {
  for (int run = 0; run < kRuns; ++run) {
    BOOST_TEST_CONTEXT(mode << ", run " << run) {
      Workspace ws;
      ws.Write("keep", "kept\n");
      for (int p = 0; p < 3; ++p) {
        ws.Write(std::to_string(p), "own " + std::to_string(p) + "\n");
        if (!own_files) continue;
        for (int j = 0; j < 25; ++j) {
          std::string name = std::to_string(p) + "-" + std::to_string(j);
          ws.Write(name, "file " + name + "\n");
        }
      }
      UndoneSession s(ws, {TestProgram("predicted_failures"), mode});
      s.ExpectUndoReplayUndo();
    }
  }
}

// RENAME_NOREPLACE onto a name another process removes in between: the
// file it moves was no record's.
BOOST_AUTO_TEST_CASE(ARenameWithoutReplaceOntoANameRemovedMeanwhileIsRecorded) { Race("noreplace", true); }

// A link whose source another process makes in between: its new name was
// no record's.
BOOST_AUTO_TEST_CASE(ALinkToANameMadeMeanwhileIsRecorded) { Race("link", false); }

// RENAME_EXCHANGE with a side another process makes in between.
BOOST_AUTO_TEST_CASE(AnExchangeWithASideMadeMeanwhileIsRecorded) { Race("exchange", false); }

// A rename whose source another process makes in between.
BOOST_AUTO_TEST_CASE(ARenameOfANameMadeMeanwhileIsRecorded) { Race("rename", false); }

// The shells of session 19: each writes a shared name and moves it to a
// name of its own; every move whose source another shell made again
// between guard's look and the call went unrecorded.
BOOST_AUTO_TEST_CASE(ThreeShellsMovingOneNameAwayAreUndone) {
  for (int run = 0; run < kRuns; ++run) {
    BOOST_TEST_CONTEXT("run " << run) {
      UndoneScript s(
          [](const Workspace& ws) {
            ws.Mkdir("z");
            ws.Write("z/keep", "kept\n");
          },
                     "for i in 1 2 3; do (for j in $(seq 20); do echo $i$j > z/shared; "
                     "mv z/shared z/s$i-$j 2>/dev/null; done) & done; wait");
      s.ExpectUndoReplayUndo();
    }
  }
}

}  // namespace
}  // namespace guard::e2e
