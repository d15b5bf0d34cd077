#include "tests/e2e/support/restore_properties.h"

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/session_view.h"
#include "tests/e2e/support/stepped_session.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

// A restore of a session of 25 steps takes a fraction of a second; one that
// takes longer is a bug of its own, reported as a timeout.
constexpr int kRestoreTimeoutSeconds = 30;

uint64_t EnvNumber(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoull(v, nullptr, 10);
}

std::string Lines(const std::vector<std::string>& lines, size_t max) {
  std::string out;
  for (size_t i = 0; i < lines.size() && i < max; ++i) out += "    " + lines[i] + "\n";
  if (lines.size() > max) out += "    ... and " + std::to_string(lines.size() - max) + " more\n";
  return out;
}

// Builds the failure report of one seed.
class Report {
 public:
  Report(uint64_t seed, WorkloadMix mix, const Workload& w, const Workspace& ws)
      : seed_(seed), mix_(mix), workload_(w), ws_(ws) {}

  void set_session(const std::string& id) { session_ = id; }

  std::string Fail(const std::string& what, const std::string& details) const {
    std::ostringstream os;
    os << "seed " << seed_ << " (mix " << WorkloadMixName(mix_) << "): " << what << "\n"
       << details << (details.empty() || details.back() == '\n' ? "" : "\n") << "  steps (" << workload_.steps.size()
       << "):\n"
       << FormatSteps(workload_) << "  reproduce: GUARD_PROPERTY_SEED=" << seed_
       << " GUARD_E2E_KEEP=1 GUARD_PROPERTY_VERBOSE=1 " << boost::unit_test::framework::master_test_suite().argv[0]
       << "\n";
    if (!session_.empty() && std::getenv("GUARD_PROPERTY_VERBOSE") != nullptr) {
      try {
        os << "  journal of session " << session_ << ":\n" << SessionView::Load(ws_.home(), session_).Dump();
      } catch (const std::exception& e) {
        os << "  journal of session " << session_ << " unreadable: " << e.what() << "\n";
      }
    }
    return os.str();
  }

 private:
  uint64_t seed_;
  WorkloadMix mix_;
  const Workload& workload_;
  const Workspace& ws_;
  std::string session_;
};

}  // namespace

std::string CheckRestoreProperties(uint64_t seed, WorkloadMix mix) {
  Workspace ws;
  WorkloadPaths paths{ws.tree(), ws.outside(), TestProgram("rename_exchange")};
  Workload workload = MakeRandomWorkload(seed, mix, paths);
  Report report(seed, mix, workload, ws);
  TreeSnapshot start = SnapshotTree(ws.tree());

  std::vector<std::string> scripts;
  for (const WorkloadStep& step : workload.steps) scripts.push_back(step.script);
  SteppedSession session = RunSteppedSession(ws, scripts);
  report.set_session(session.session_id);
  if (!session.ok()) {
    return report.Fail("the session did not complete: " + session.error, DescribeResult(session.guard));
  }
  if (int k = session.FailedStep(); k >= 0) {
    return report.Fail("step " + std::to_string(k) + " exited " + std::to_string(session.step_status[k]) +
                           " (a bug of the workload generator, or of guard's capture)",
                       DescribeResult(session.guard));
  }
  const size_t n = workload.steps.size();
  const std::vector<TreeSnapshot>& snaps = session.snapshots;
  if (auto d = DiffSnapshots(start, snaps[0]); !d.empty()) {
    return report.Fail("the tree changed before the first step", Lines(d, 40));
  }
  const std::string orig = session.session_id;
  Rng rng(seed * 31 + static_cast<uint64_t>(mix) + 7);
  const size_t k = rng.Below(n);      // undo --to the first op of step k
  const size_t j = rng.Below(n + 1);  // replay --to the marker before step j (n: the end)

  struct Check {
    std::string name;
    std::vector<std::string> args;
    const TreeSnapshot* expected;
    bool undoes_previous = false;  // meaningless when the previous check recorded no session
  };
  const std::string seq_k = std::to_string(session.first_seq[k]);
  const std::string mark_j = std::to_string(session.marker_seq[j]);
  const std::vector<Check> checks = {
      {"1. guard undo (S0)", {"undo", "--yes"}, &start},
      {"2. guard replay --session ORIG (Sn)", {"replay", "--yes", "--session", orig}, &snaps[n]},
      {"3. guard undo --session ORIG --to " + seq_k + " (first op of step " + std::to_string(k) + "; S" +
           std::to_string(k) + ")",
       {"undo", "--yes", "--session", orig, "--to", seq_k},
       &snaps[k]},
      // A plain `guard undo` names the user's last session, never guard's
      // own restore (docs/restore.md): the undo of an undo names it.
      {"4. guard undo --session UNDO3 (Sn)", {"undo", "--yes", "--session"}, &snaps[n], true},
      {"5. guard undo --session ORIG (S0)", {"undo", "--yes", "--session", orig}, &start},
      {"6. guard replay --session ORIG --to " + mark_j + " (marker before step " + std::to_string(j) + "; S" +
           std::to_string(j) + ")",
       {"replay", "--yes", "--session", orig, "--to", mark_j},
       &snaps[j]},
  };
  std::string done;
  bool previous_recorded = true;
  std::string previous_session;
  for (const Check& c : checks) {
    if (c.undoes_previous && !previous_recorded) continue;
    GuardCommand command;
    command.args = c.args;
    if (c.undoes_previous) command.args.push_back(previous_session);
    command.timeout_seconds = kRestoreTimeoutSeconds;
    GuardResult r = RunGuardCommand(ws, command);
    std::string context = "  after: " + (done.empty() ? std::string("(nothing)") : done) + "\n  " + DescribeResult(r);
    if (r.timed_out) {
      return report.Fail(c.name + ": did not finish in " + std::to_string(kRestoreTimeoutSeconds) + " s", context);
    }
    if (r.exit_code != 0) return report.Fail(c.name + ": guard exited " + std::to_string(r.exit_code), context);
    // A restore that changes something is recorded as a session of its own;
    // one with nothing to change records none.
    size_t sessions = r.out.find(": nothing to change in ") != std::string::npos ? 0 : 1;
    if (r.new_sessions.size() != sessions) {
      return report.Fail(c.name + ": " + std::to_string(r.new_sessions.size()) + " sessions recorded instead of " +
                             std::to_string(sessions),
                         context);
    }
    previous_recorded = sessions == 1;
    if (previous_recorded) previous_session = r.new_sessions.front();
    std::vector<std::string> diffs = DiffSnapshots(*c.expected, SnapshotTree(ws.tree()));
    if (!diffs.empty()) {
      return report.Fail(c.name + ": the tree differs (expected, found):", Lines(diffs, 40) + context);
    }
    done += (done.empty() ? "" : ", ") + c.name.substr(0, 1);
  }
  return "";
}

void CheckRestorePropertiesOverSeeds(WorkloadMix mix, int default_seeds) {
  uint64_t first = EnvNumber("GUARD_PROPERTY_FIRST_SEED", 1);
  uint64_t count = EnvNumber("GUARD_PROPERTY_SEEDS", static_cast<uint64_t>(default_seeds));
  if (const char* only = std::getenv("GUARD_PROPERTY_SEED"); only != nullptr && *only != '\0') {
    first = std::strtoull(only, nullptr, 10);
    count = 1;
  }
  constexpr int kFullReports = 3;
  std::vector<uint64_t> failed;
  auto t0 = std::chrono::steady_clock::now();
  for (uint64_t seed = first; seed < first + count; ++seed) {
    std::string failure;
    try {
      failure = CheckRestoreProperties(seed, mix);
    } catch (const std::exception& e) {
      failure = "seed " + std::to_string(seed) + ": exception: " + e.what();
    }
    if (failure.empty()) continue;
    failed.push_back(seed);
    if (failed.size() <= kFullReports) {
      BOOST_ERROR(failure);
    } else {
      BOOST_ERROR(failure.substr(0, failure.find('\n')));
    }
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string list;
  for (uint64_t s : failed) list += " " + std::to_string(s);
  BOOST_TEST(failed.empty(), failed.size() << " of " << count << " seeds failed:" << list);
  BOOST_TEST_MESSAGE("mix " << WorkloadMixName(mix) << ": " << count << " seeds from " << first << " in " << secs
                            << " s; " << failed.size() << " failed" << (failed.empty() ? "" : ":" + list));
}

}  // namespace guard::e2e
