// The properties of `guard undo` and `guard replay` over random workloads
// (random_workload.h) run as one stepped session (stepped_session.h), with
// S0 the tree before the session, Sk the tree just before step k, Sn the
// tree at its end, and k, j drawn from the seed:
//
//   1. guard undo --yes                                  -> S0
//   2. guard replay --yes --session ORIG                 -> Sn
//   3. guard undo --yes --session ORIG --to SEQ(k)       -> Sk
//      (SEQ(k): the first operation of step k)
//   4. guard undo --yes              (undoes the undo 3) -> Sn
//   5. guard undo --yes --session ORIG                   -> S0
//   6. guard replay --yes --session ORIG --to MARK(j)    -> Sj
//      (MARK(j): the operation recorded just before step j)
//
// each restore exiting 0 and recording one session. Trees are compared byte
// for byte (content, type, mode & 07777, symlink targets, empty directories).
//
// Seeds, from the environment:
//   GUARD_PROPERTY_SEEDS=N       N seeds per test (the long mode: thousands)
//   GUARD_PROPERTY_FIRST_SEED=F  start at F (default 1)
//   GUARD_PROPERTY_SEED=S        only seed S (to reproduce a failure)
//   GUARD_PROPERTY_VERBOSE=1     failure reports include the session's journal
#pragma once

#include <cstdint>
#include <string>

#include "tests/e2e/support/random_workload.h"

namespace guard::e2e {

// Checks every property for one seed: "" when they hold, else a report
// (seed, steps, the property that failed, the differing paths, guard's output).
std::string CheckRestoreProperties(uint64_t seed, WorkloadMix mix);

// Checks the seeds the environment asks for (default: `default_seeds` seeds
// from 1), reporting failures through Boost.Test: every seed must pass.
void CheckRestorePropertiesOverSeeds(WorkloadMix mix, int default_seeds);

}  // namespace guard::e2e
