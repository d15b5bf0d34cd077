#include "tests/e2e/support/expect_capture.h"

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <cstring>

namespace guard::e2e {
namespace {

std::string Lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += "\n    " + l;
  return out;
}

bool IsUnder(const std::string& path, const std::string& dir) {
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/');
}

}  // namespace

SessionView OnlyNewSession(const Workspace& ws, const GuardResult& run) {
  BOOST_REQUIRE_MESSAGE(run.new_sessions.size() == 1, "expected exactly one new session, found "
                                                          << run.new_sessions.size() << "; guard's stderr:\n"
                                                          << run.err);
  SessionView s = SessionView::Load(ws.home(), run.new_sessions[0]);
  BOOST_TEST(s.journal_problems().empty(), "journal damaged:" << Lines(s.journal_problems()));
  return s;
}

SessionView ExpectCapture(const Workspace& ws, const GuardResult& run, const TreeSnapshot& before,
                          const std::vector<Op>& expected, bool ordered, const std::string& unlisted_dir) {
  BOOST_TEST(!run.timed_out, "guard timed out");
  SessionView s = OnlyNewSession(ws, run);
  BOOST_TEST(SessionStateName(s.meta().state) == std::string("finished"));
  BOOST_TEST(s.meta().exit_code == run.exit_code);

  std::vector<Op> ops;
  for (const Op& op : s.OpList()) {
    if (unlisted_dir.empty() || !(IsUnder(op.path, unlisted_dir) || IsUnder(op.path2, unlisted_dir))) ops.push_back(op);
  }
  // Watch mode records what each path's change amounts to between two
  // looks, not each call (docs/capture.md, "Watch mode"): a rename is a
  // removal and a creation, a truncation and its write one modification,
  // a temporary file made and removed between two looks nothing. The
  // operations listed are the calls'; what watch mode promises is checked
  // below: the pre-images and the final states.
  const char* mode = std::getenv("GUARD_MODE");
  if (mode == nullptr || std::strcmp(mode, "watch") != 0) {
    std::string mismatch = MatchOps(ops, expected, ordered);
    BOOST_TEST(mismatch.empty(), mismatch << "  journal:\n" << s.Dump());
  }

  PreImageReport report = CheckPreImages(s, before);
  BOOST_TEST(report.errors.empty(), "pre-images do not match the tree before the run:"
                                        << Lines(report.errors) << "\n  journal:\n" << s.Dump());

  std::vector<std::string> finals = CheckFinalStates(s, SnapshotTree(ws.tree()));
  BOOST_TEST(finals.empty(), "final states do not match the tree after the run:" << Lines(finals));
  return s;
}

void ExpectPreImagesOf(const SessionView& session, const TreeSnapshot& before, const std::vector<std::string>& paths) {
  PreImageReport report = CheckPreImages(session, before);
  for (const std::string& p : paths) {
    BOOST_TEST(report.verified.count(p) == 1,
               "the content " << Printable(p) << " held before the run is in no pre-image\n  journal:\n"
                              << session.Dump());
  }
}

}  // namespace guard::e2e
