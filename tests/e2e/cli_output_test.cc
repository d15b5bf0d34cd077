// Long output on the command line (issue 40, points 4 and 7): the pager on a
// terminal and never elsewhere, diff --stat and --name-only, show's
// numbering, session ids by hex suffix, and the --json plans. Terminal
// behaviour runs guard on a pseudo-terminal (support/pty_run.h).
#define BOOST_TEST_MODULE cli_output
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/pty_run.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

std::string Session(const Workspace& ws, const std::string& script) {
  GuardResult r = RunGuardBash(ws, script);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "guard run: exit " << r.exit_code << "; stderr:\n" << r.err);
  BOOST_REQUIRE_EQUAL(r.new_sessions.size(), 1u);
  return r.new_sessions[0];
}

ProcessSpec Guard(const Workspace& ws, std::vector<std::string> args) {
  ProcessSpec spec;
  spec.argv = {GuardBinary()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.cwd = ws.tree();
  spec.env = GuardEnv(ws);
  spec.env["NO_COLOR"] = "1";
  spec.env["GUARD_NO_PROGRESS"] = std::nullopt;
  return spec;
}

// A pager that records that it ran, then shows its input.
void RecordingPager(const Workspace& ws, ProcessSpec* spec) {
  spec->env["GUARD_PAGER"] = "echo ran > '" + ws.Path("../pager-ran") + "'; cat";
  spec->env["PAGER"] = std::nullopt;
}

bool PagerRan(const Workspace& ws) { return ws.Exists("../pager-ran"); }

struct Edited {
  Workspace ws;
  std::string id;
  Edited() {
    ws.Write("a.txt", "one\ntwo\n");
    ws.Write("b.txt", "bee\n");
    id = Session(ws, "printf 'one\\nTWO\\nthree\\n' > a.txt; rm b.txt; printf 'new\\n' > c.txt");
  }
};

BOOST_AUTO_TEST_CASE(DiffOnATerminalGoesThroughThePager) {
  Edited e;
  ProcessSpec spec = Guard(e.ws, {"diff"});
  RecordingPager(e.ws, &spec);
  PtyResult r = RunOnPty(spec);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.out);
  BOOST_CHECK(PagerRan(e.ws));
  BOOST_CHECK_NE(r.out.find("+TWO"), std::string::npos);
}

BOOST_AUTO_TEST_CASE(ShowOnATerminalGoesThroughThePager) {
  Edited e;
  ProcessSpec spec = Guard(e.ws, {"show"});
  RecordingPager(e.ws, &spec);
  PtyResult r = RunOnPty(spec);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.out);
  BOOST_CHECK(PagerRan(e.ws));
}

BOOST_AUTO_TEST_CASE(NoPagerFlagKeepsThePagerAway) {
  Edited e;
  ProcessSpec spec = Guard(e.ws, {"diff", "--no-pager"});
  RecordingPager(e.ws, &spec);
  PtyResult r = RunOnPty(spec);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.out);
  BOOST_CHECK(!PagerRan(e.ws));
  BOOST_CHECK_NE(r.out.find("+TWO"), std::string::npos);
}

BOOST_AUTO_TEST_CASE(NoPagerWhenStdoutIsNotATerminal) {
  Edited e;
  ProcessSpec spec = Guard(e.ws, {"diff"});
  RecordingPager(e.ws, &spec);
  ProcessResult r = RunProcess(spec);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  BOOST_CHECK(!PagerRan(e.ws));
  BOOST_CHECK_NE(r.out.find("+TWO"), std::string::npos);
}

BOOST_AUTO_TEST_CASE(APagerQuittingEarlyIsNotAnError) {
  Workspace ws;
  ws.Write("big.txt", "");
  Session(ws, "seq 1 200000 > big.txt");
  ProcessSpec spec = Guard(ws, {"diff"});
  spec.env["GUARD_PAGER"] = "head -c 10 >/dev/null";
  PtyResult r = RunOnPty(spec);
  BOOST_CHECK_MESSAGE(r.exit_code == 0, r.out.substr(0, 2000));
  BOOST_CHECK_EQUAL(r.out.find("guard:"), std::string::npos);
}

BOOST_AUTO_TEST_CASE(DiffStatCountsLinesPerFile) {
  Edited e;
  ProcessResult r = RunProcess(Guard(e.ws, {"diff", "--stat"}));
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  BOOST_CHECK_NE(r.out.find("a.txt | 3 ++-"), std::string::npos);
  BOOST_CHECK_NE(r.out.find("3 files changed"), std::string::npos);
  BOOST_CHECK_EQUAL(r.out.find("@@"), std::string::npos);
}

BOOST_AUTO_TEST_CASE(DiffNameOnlyListsThePaths) {
  Edited e;
  ProcessResult r = RunProcess(Guard(e.ws, {"diff", "--name-only"}));
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  BOOST_CHECK_EQUAL(r.out, "a.txt\nb.txt\nc.txt\n");
}

// The operations' numbers in `guard show`'s first column, in order.
std::vector<int> ShownNumbers(const std::string& text) {
  std::vector<int> numbers;
  size_t start = 0;
  bool header_seen = false;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (!header_seen) {
      header_seen = line.find("    # ") == 0;
      continue;
    }
    if (line.size() > 5 && line[4] >= '0' && line[4] <= '9') numbers.push_back(std::stoi(line.substr(0, 5)));
  }
  return numbers;
}

BOOST_AUTO_TEST_CASE(ShowNumbersOperationsOneTwoThree) {
  Edited e;
  ProcessResult r = RunProcess(Guard(e.ws, {"show"}));
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  std::vector<int> numbers = ShownNumbers(r.out);
  BOOST_REQUIRE_MESSAGE(numbers.size() >= 3, r.out);
  for (size_t i = 0; i < numbers.size(); ++i) BOOST_CHECK_EQUAL(numbers[i], static_cast<int>(i + 1));
  ProcessResult j = RunProcess(Guard(e.ws, {"show", "--json"}));
  BOOST_REQUIRE_EQUAL(j.exit_code, 0);
  nlohmann::json ops = nlohmann::json::parse(j.out);
  int expected = 1;
  for (const auto& op : ops) {
    if (op["op"] == "mark") continue;
    BOOST_CHECK(op.contains("seq"));
    BOOST_CHECK_EQUAL(op["number"].get<int>(), expected++);
  }
}

// "2026-12-07 11:23:32": the one form status, sessions and show share.
bool HasShownTime(const std::string& text) {
  for (size_t i = 0; i + 19 <= text.size(); ++i) {
    const char* p = text.c_str() + i;
    auto digits = [&](int from, int n) {
      for (int k = from; k < from + n; ++k)
        if (p[k] < '0' || p[k] > '9') return false;
      return true;
    };
    if (digits(0, 4) && p[4] == '-' && digits(5, 2) && p[7] == '-' && digits(8, 2) && p[10] == ' ' &&
        digits(11, 2) && p[13] == ':' && digits(14, 2) && p[16] == ':' && digits(17, 2))
      return true;
  }
  return false;
}

BOOST_AUTO_TEST_CASE(TimesHaveOneFormInStatusSessionsAndShow) {
  Edited e;
  for (const char* command : {"status", "sessions", "show"}) {
    ProcessResult r = RunProcess(Guard(e.ws, {command}));
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0, command << ": " << r.err);
    BOOST_CHECK_MESSAGE(HasShownTime(r.out), command << ":\n" << r.out);
  }
}

BOOST_AUTO_TEST_CASE(SessionIdMatchesByHexSuffix) {
  Edited e;
  size_t dash = e.id.rfind('-');
  BOOST_REQUIRE_MESSAGE(dash != std::string::npos && e.id.size() - dash > 4, e.id);
  std::string suffix = e.id.substr(dash + 1);
  ProcessResult r = RunProcess(Guard(e.ws, {"show", "--json", "--session", suffix}));
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  ProcessResult whole = RunProcess(Guard(e.ws, {"show", "--json", "--session", e.id}));
  BOOST_CHECK_EQUAL(r.out, whole.out);
  ProcessResult none = RunProcess(Guard(e.ws, {"show", "--session", "fffffffffffffff"}));
  BOOST_CHECK_NE(none.exit_code, 0);
}

BOOST_AUTO_TEST_CASE(UndoDryRunJsonIsThePlan) {
  Edited e;
  ProcessResult r = RunProcess(Guard(e.ws, {"undo", "--dry-run", "--json"}));
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err << r.out);
  nlohmann::json plan = nlohmann::json::parse(r.out);
  BOOST_CHECK_EQUAL(plan["schema"].get<int>(), 1);
  BOOST_CHECK_EQUAL(plan["command"].get<std::string>(), "undo");
  BOOST_CHECK_EQUAL(plan["session"].get<std::string>(), e.id);
  BOOST_CHECK_EQUAL(plan["count"].get<int>(), 3);
  BOOST_CHECK_EQUAL(plan["conflicts"].get<int>(), 0);
  std::vector<std::string> paths;
  for (const auto& c : plan["changes"]) {
    paths.push_back(c["path"].get<std::string>());
    BOOST_CHECK(c.contains("action") && c.contains("current") && c.contains("target") && c.contains("conflict"));
  }
  BOOST_CHECK((paths == std::vector<std::string>{"a.txt", "b.txt", "c.txt"}));
  BOOST_CHECK_EQUAL(e.ws.Read("a.txt"), "one\nTWO\nthree\n");  // nothing changed
  ProcessResult replay = RunProcess(Guard(e.ws, {"replay", "--dry-run", "--json"}));
  BOOST_REQUIRE_MESSAGE(replay.exit_code == 0, replay.err);
  BOOST_CHECK_EQUAL(nlohmann::json::parse(replay.out)["count"].get<int>(), 0);
}

BOOST_AUTO_TEST_CASE(EveryJsonOutputCarriesTheSchemaVersion) {
  Edited e;
  nlohmann::json status = nlohmann::json::parse(RunProcess(Guard(e.ws, {"status", "--json"})).out);
  BOOST_CHECK_EQUAL(status["schema"].get<int>(), 1);
  BOOST_CHECK(status.contains("last") && status.contains("running"));
  nlohmann::json sessions = nlohmann::json::parse(RunProcess(Guard(e.ws, {"sessions", "--json"})).out);
  BOOST_REQUIRE(sessions.is_array() && !sessions.empty());
  for (const char* f : {"schema", "id", "root", "command", "started", "ended", "state", "ops", "files"})
    BOOST_CHECK_MESSAGE(sessions[0].contains(f), f);
  nlohmann::json ops = nlohmann::json::parse(RunProcess(Guard(e.ws, {"show", "--json"})).out);
  BOOST_REQUIRE(ops.is_array() && !ops.empty());
  for (const auto& op : ops) BOOST_CHECK_EQUAL(op["schema"].get<int>(), 1);
}

}  // namespace
}  // namespace guard::e2e
