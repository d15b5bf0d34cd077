// Property test of guard undo and guard replay on random workloads of
// content changes: create, overwrite, append, truncate, pwrite, chmod, renames: for every seed, undo, replay, undo --to and replay --to reach the
// snapshots taken around the steps (restore_properties.h lists them).
// GUARD_PROPERTY_SEEDS=N runs N seeds instead of 60.
#define BOOST_TEST_MODULE restore_file_workload
#include <boost/test/unit_test.hpp>

#include "tests/e2e/support/restore_properties.h"

namespace guard::e2e {
namespace {

BOOST_AUTO_TEST_CASE(UndoAndReplayReachEverySnapshotOfFilesWorkloads) {
  CheckRestorePropertiesOverSeeds(WorkloadMix::kFiles, 60);
}

}  // namespace
}  // namespace guard::e2e
