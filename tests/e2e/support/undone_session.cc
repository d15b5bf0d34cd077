#include "tests/e2e/support/undone_session.h"

#include <boost/test/unit_test.hpp>

#include "tests/e2e/support/guard_command.h"

namespace guard::e2e {

UndoneSession::UndoneSession(const Workspace& ws, std::vector<std::string> command, int exit_code) : ws_(ws) {
  before_ = SnapshotTree(ws_.tree());
  GuardRun run;
  run.command = std::move(command);
  run_ = RunGuard(ws_, run);
  BOOST_REQUIRE_MESSAGE(run_.exit_code == exit_code && run_.new_sessions.size() == 1, DescribeResult(run_));
  id_ = run_.new_sessions[0];
  after_ = SnapshotTree(ws_.tree());
}

void UndoneSession::Expect(const std::vector<std::string>& args, const TreeSnapshot& expected) const {
  GuardResult r = RunGuardCommand(ws_, args);
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  std::string text;
  for (const std::string& d : DiffSnapshots(expected, SnapshotTree(ws_.tree()))) text += "    " + d + "\n";
  BOOST_TEST(text.empty(), "after guard " << args[0] << ", the tree differs (expected, found):\n"
                                          << text << DescribeResult(r) << View().Dump());
}

void UndoneSession::ExpectUndoReplayUndo() const {
  Expect({"undo", "--yes", "--session", id_}, before_);
  Expect({"replay", "--yes", "--session", id_}, after_);
  Expect({"undo", "--yes", "--session", id_}, before_);
}

}  // namespace guard::e2e
