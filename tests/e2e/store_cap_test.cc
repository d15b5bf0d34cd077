// The store's cap inside a running session (issue 37, point 12; docs/gc.md,
// "Inside a session"): with `retention.max_size` bound, a session keeps what
// each file held before it, its state at each mark and its latest work, and
// drops its other versions, oldest first. Each test runs a loop of a fixed
// number of changes (not a duration), then checks that the state directory
// stays under the bound docs/gc.md states, that the cap was said once, that
// undo to the start and to a mark are exact, and that undo to a dropped
// point says it cannot be exact. Unit twin: tests/unit/session/session_cap_test.cc.
#define BOOST_TEST_MODULE store_cap
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kMiB = 1 << 20;

uint64_t DiskUse(const std::string& dir) {
  uint64_t total = 0;
  std::set<std::pair<dev_t, ino_t>> seen;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator(); it.increment(ec)) {
    struct stat st;
    if (::lstat(it->path().c_str(), &st) != 0 || !seen.insert({st.st_dev, st.st_ino}).second) continue;
    total += static_cast<uint64_t>(st.st_blocks) * 512;
  }
  return total;
}

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

std::string Lines(size_t bytes) {
  std::string s;
  for (size_t i = 0; s.size() < bytes; ++i) s += "old line " + std::to_string(i) + " of a large log\n";
  return s;
}

GuardResult MustRun(const Workspace& ws, const std::vector<std::string>& args) {
  GuardResult r = RunGuardCommand(ws, args);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "guard " << args[0] << ": " << DescribeResult(r));
  return r;
}

// The seqs of the session's modify operations on `path`, in order.
std::vector<uint64_t> ModifySeqs(const Workspace& ws, const std::string& id, const std::string& path) {
  nlohmann::json all = nlohmann::json::parse(MustRun(ws, {"show", "--session", id, "--json"}).out);
  std::vector<uint64_t> seqs;
  for (const auto& e : all) {
    if (e.value("op", "") == "modify" && e.value("path", "") == path) seqs.push_back(e["seq"].get<uint64_t>());
  }
  return seqs;
}

// Which of `seqs` an undo --to says it cannot reach exactly (a dry run).
std::set<uint64_t> NotExact(const Workspace& ws, const std::string& id, const std::vector<uint64_t>& seqs) {
  std::set<uint64_t> out;
  for (uint64_t seq : seqs) {
    GuardResult r = RunGuardCommand(ws, {"undo", "--dry-run", "--session", id, "--to", std::to_string(seq)});
    if ((r.out + r.err).find("cannot be exact") != std::string::npos) out.insert(seq);
  }
  return out;
}

void Configure(const Workspace& ws, const std::string& max_size) {
  fs::create_directories(ws.dir() + "/config/guard");
  WriteFile(ws.dir() + "/config/guard/config.toml",
            "[retention]\nmax_size = \"" + max_size + "\"\nauto_gc = false\n");
}

// Issue 37's case: short lines appended, one `>>` open each, to a 64 MiB
// log with max_size = "64MiB", a mark half way.
BOOST_AUTO_TEST_CASE(ALogAppendedToOverTheCapStaysUnderTheBoundAndUndoToTheStartAndAMarkIsExact) {
  Workspace ws;
  Configure(ws, "64MiB");
  const std::string original = Lines(64 * kMiB);
  ws.Write("log", original);
  const uint64_t before = DiskUse(ws.home());
  constexpr int kAppends = 12, kMarkAfter = 6;
  const std::string g = Quoted(GuardBinary());
  GuardRun run;
  run.quiet = false;
  run.timeout_seconds = 300;
  run.command = {"bash", "-ec",
                 "for i in $(seq 1 " + std::to_string(kAppends) + "); do echo \"new line $i\" >> log; " +
                     "if [ $i = " + std::to_string(kMarkAfter) + " ]; then " + g + " mark half; fi; done"};
  GuardResult r = RunGuard(ws, run);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  BOOST_REQUIRE_EQUAL(r.new_sessions.size(), 1u);
  const std::string id = r.new_sessions[0];
  std::string at_mark = original, at_end = original;
  for (int i = 1; i <= kAppends; ++i) {
    at_end += "new line " + std::to_string(i) + "\n";
    if (i <= kMarkAfter) at_mark = at_end;
  }
  BOOST_REQUIRE(ws.Read("log") == at_end);

  // Said once, on stderr.
  const std::string said = "over its cap";
  const size_t first = r.err.find(said);
  BOOST_TEST(first != std::string::npos, DescribeResult(r));
  BOOST_TEST(r.err.find(said, first + 1) == std::string::npos, DescribeResult(r));

  // The bound (docs/gc.md): the cap, plus what the session never drops:
  // the log as it was before (64 MiB), and at the mark and at the end,
  // which append objects hold in a few KiB; 4 MiB for the journals, logs
  // and file system blocks.
  const uint64_t after = DiskUse(ws.home());
  BOOST_TEST_MESSAGE("cap, 64 MiB log, " << kAppends << " appends: state directory " << before << " -> " << after
                                          << " bytes");
  BOOST_TEST(after <= 64 * kMiB + original.size() + 4 * kMiB, "the state directory holds " << after << " bytes");

  // Some versions were dropped, never the first of a turn.
  const std::vector<uint64_t> seqs = ModifySeqs(ws, id, "log");
  BOOST_REQUIRE_GE(seqs.size(), static_cast<size_t>(kAppends));
  const std::set<uint64_t> dropped = NotExact(ws, id, seqs);
  BOOST_TEST(!dropped.empty(), "no version was dropped");
  BOOST_TEST(dropped.count(seqs.front()) == 0u);

  MustRun(ws, {"undo", "--yes", "--session", id, "--to", "half"});
  BOOST_TEST((ws.Read("log") == at_mark), "undo to the mark is not exact");
  MustRun(ws, {"undo", "--yes", "--session", id});
  BOOST_TEST((ws.Read("log") == original), "undo to the start is not exact");
}

// A file rewritten whole again and again (not only appended to): each
// version is a whole copy, and the cap is what bounds them.
BOOST_AUTO_TEST_CASE(AFileRewrittenOverTheCapKeepsItsFirstMarkedAndLastVersions) {
  Workspace ws;
  Configure(ws, "16MiB");
  constexpr int kRewrites = 24, kMarkAfter = 12;
  constexpr uint64_t kSize = 4 * kMiB;
  auto version = [](int i) {
    std::string line = "version " + std::to_string(i) + "\n";
    std::string s;
    while (s.size() < kSize) s += line;
    s.resize(kSize);
    return s;
  };
  ws.Write("data", version(0));
  const std::string g = Quoted(GuardBinary());
  GuardRun run;
  run.quiet = false;
  run.timeout_seconds = 300;
  run.command = {"bash", "-ec",
                 "for i in $(seq 1 " + std::to_string(kRewrites) + "); do yes \"version $i\" | head -c " +
                     std::to_string(kSize) + " > data; if [ $i = " + std::to_string(kMarkAfter) + " ]; then " + g +
                     " mark half; fi; done"};
  GuardResult r = RunGuard(ws, run);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  BOOST_REQUIRE_EQUAL(r.new_sessions.size(), 1u);
  const std::string id = r.new_sessions[0];
  BOOST_REQUIRE(ws.Read("data") == version(kRewrites));
  BOOST_TEST(r.err.find("over its cap") != std::string::npos, DescribeResult(r));

  // The cap, plus the versions never dropped: before the session, at the
  // mark, the last post-image and the end state (4 MiB each), and 4 MiB
  // for the rest. Without the cap: 24 copies, 96 MiB.
  const uint64_t after = DiskUse(ws.home());
  BOOST_TEST_MESSAGE("cap, 4 MiB file rewritten " << kRewrites << " times: state directory " << after << " bytes");
  BOOST_TEST(after <= 16 * kMiB + 4 * kSize + 4 * kMiB, "the state directory holds " << after << " bytes");

  const std::vector<uint64_t> seqs = ModifySeqs(ws, id, "data");
  BOOST_REQUIRE_GE(seqs.size(), static_cast<size_t>(kRewrites));
  const std::set<uint64_t> dropped = NotExact(ws, id, seqs);
  BOOST_TEST(!dropped.empty(), "no version was dropped");
  BOOST_TEST(dropped.count(seqs.front()) == 0u);

  MustRun(ws, {"undo", "--yes", "--session", id, "--to", "half"});
  BOOST_TEST((ws.Read("data") == version(kMarkAfter)), "undo to the mark is not exact");
  MustRun(ws, {"undo", "--yes", "--session", id});
  BOOST_TEST((ws.Read("data") == version(0)), "undo to the start is not exact");
}

}  // namespace
}  // namespace guard::e2e
