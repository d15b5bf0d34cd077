#define BOOST_TEST_MODULE session_meta
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "common/file_io.h"
#include "common/session_meta.h"
#include "tests/unit/support/temp_dir.h"

namespace fs = std::filesystem;
using guard::SessionMeta;
using guard::SessionState;
using guard::Status;

namespace {

using guard::testing::TempDir;

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << data;
  BOOST_REQUIRE(f.good());
}

SessionMeta FullMeta() {
  SessionMeta m;
  m.id = "20261129-203012-a1b2c3";
  m.root = "/home/user/project with space";
  m.argv = {"make", "-j4", "all", "", "quote\"and\\backslash", "ünïcode"};
  m.started_ns = 1'796'070'612'123'456'789;
  m.ended_ns = 1'796'070'699'987'654'321;
  m.state = SessionState::kCrashed;
  m.exit_code = 139;
  m.signal = 11;
  m.ops = 123456789012ull;
  m.files = 42;
  m.supervisor_pid = 31337;
  m.supervisor_start_ticks = 9876543210ull;
  m.guard_version = "0.1.0";
  m.git_head = "0123456789abcdef0123456789abcdef01234567";
  return m;
}

bool SameMeta(const SessionMeta& a, const SessionMeta& b) {
  return a.id == b.id && a.root == b.root && a.argv == b.argv && a.started_ns == b.started_ns &&
         a.ended_ns == b.ended_ns && a.state == b.state && a.exit_code == b.exit_code &&
         a.signal == b.signal && a.ops == b.ops && a.files == b.files &&
         a.supervisor_pid == b.supervisor_pid &&
         a.supervisor_start_ticks == b.supervisor_start_ticks && a.guard_version == b.guard_version &&
         a.git_head == b.git_head;
}

// "YYYYMMDD-HHMMSS-mmmxxxx": milliseconds, then lowercase hex. (Not std::regex: GCC 12's
// regex trips -Werror=maybe-uninitialized in the sanitizer build.)
bool WellFormedId(const std::string& id) {
  const std::string shape = "DDDDDDDD-DDDDDD-DDDXXXX";
  if (id.size() != shape.size()) return false;
  for (size_t i = 0; i < id.size(); ++i) {
    char c = id[i];
    bool digit = c >= '0' && c <= '9';
    if (shape[i] == 'D' && !digit) return false;
    if (shape[i] == 'X' && !digit && !(c >= 'a' && c <= 'f')) return false;
    if (shape[i] == '-' && c != '-') return false;
  }
  return true;
}

}  // namespace

BOOST_AUTO_TEST_CASE(SessionIdsAreUniqueAndWellFormed) {
  std::set<std::string> seen;
  for (int i = 0; i < 20000; ++i) {
    std::string id = guard::NewSessionId();
    BOOST_REQUIRE_MESSAGE(WellFormedId(id), id);
    BOOST_REQUIRE_MESSAGE(seen.insert(id).second, "duplicate id " << id);
  }
}

BOOST_AUTO_TEST_CASE(SessionIdsSortByStartTimeToTheMillisecond) {
  std::string a = guard::NewSessionId();
  ::usleep(2000);
  std::string b = guard::NewSessionId();
  BOOST_TEST(a < b);
}

BOOST_AUTO_TEST_CASE(SessionIdsSortByStartTime) {
  // The time part is UTC "now", and a later second sorts later whatever the
  // random part.
  // The ids read CLOCK_REALTIME; so must the bounds: time() reads the
  // coarse clock, which can still show the second before at a boundary.
  auto now = [] {
    struct timespec ts;
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec;
  };
  time_t before = now();
  std::string a = guard::NewSessionId();
  time_t made = now();
  while (now() == made) ::usleep(10000);
  std::string b = guard::NewSessionId();
  BOOST_TEST(a < b);
  // The second may tick between `before` and the id: either is right.
  auto prefix = [](time_t t) {
    struct tm tm;
    ::gmtime_r(&t, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &tm);
    return std::string(text);
  };
  BOOST_TEST((a.substr(0, 15) >= prefix(before) && a.substr(0, 15) <= prefix(made)), a << " not in [" << prefix(before)
                                                                                        << ", " << prefix(made) << "]");
}

BOOST_AUTO_TEST_CASE(Iso8601IsUtcWithMilliseconds) {
  BOOST_TEST(guard::FormatIso8601(0) == "1970-01-01T00:00:00.000Z");
  BOOST_TEST(guard::FormatIso8601(1'796'070'612'123'999'999) == "2026-11-30T20:30:12.123Z");
  BOOST_TEST(guard::FormatIso8601(-1'000'000) == "1969-12-31T23:59:59.999Z");
  BOOST_TEST(guard::FormatIso8601(951'782'400'000'000'000) == "2000-02-29T00:00:00.000Z");
}

BOOST_AUTO_TEST_CASE(SessionStateNamesRoundTrip) {
  for (SessionState s : {SessionState::kRunning, SessionState::kFinished, SessionState::kKilled,
                         SessionState::kCrashed, SessionState::kRecovered}) {
    SessionState parsed = SessionState::kRunning;
    BOOST_TEST(guard::ParseSessionState(guard::SessionStateName(s), &parsed));
    BOOST_TEST((parsed == s));
  }
  BOOST_TEST(std::string(guard::SessionStateName(SessionState::kRecovered)) == "recovered");
  SessionState parsed;
  BOOST_TEST(!guard::ParseSessionState("Running", &parsed));
}

BOOST_AUTO_TEST_CASE(SaveThenLoadKeepsEveryField) {
  TempDir tmp;
  std::string path = tmp.path + "/meta.json";
  SessionMeta m = FullMeta();
  BOOST_REQUIRE(guard::SaveSessionMeta(path, m).ok());
  struct stat st;
  BOOST_REQUIRE(::stat(path.c_str(), &st) == 0);
  BOOST_TEST((st.st_mode & 07777) == 0600u);
  SessionMeta back;
  Status s = guard::LoadSessionMeta(path, &back);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  BOOST_TEST(SameMeta(m, back));

  std::string text;
  BOOST_REQUIRE(guard::ReadFileToString(path, &text).ok());
  BOOST_TEST(text == guard::SessionMetaToJson(m) + "\n");
  BOOST_TEST(text.find("\"started\":\"2026-11-30T20:30:12.123Z\"") != std::string::npos, text);
  BOOST_TEST(text.find("\"state\":\"crashed\"") != std::string::npos);
  BOOST_TEST(text.find("\"supervisor\":{\"pid\":31337,\"start_ticks\":9876543210}") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(UnknownValuesAreSavedAsNull) {
  TempDir tmp;
  std::string path = tmp.path + "/meta.json";
  SessionMeta m = FullMeta();
  m.state = SessionState::kRunning;
  m.ended_ns = 0;
  m.exit_code = -1;
  m.signal = 0;
  BOOST_REQUIRE(guard::SaveSessionMeta(path, m).ok());
  std::string json = guard::SessionMetaToJson(m);
  BOOST_TEST(json.find("\"ended\":null,\"ended_ns\":null") != std::string::npos, json);
  BOOST_TEST(json.find("\"exit_code\":null") != std::string::npos, json);
  SessionMeta back;
  BOOST_REQUIRE(guard::LoadSessionMeta(path, &back).ok());
  BOOST_TEST(SameMeta(m, back));
}

BOOST_AUTO_TEST_CASE(GitHeadIsOptionalAndLeftOutWhenNone) {
  TempDir tmp;
  std::string path = tmp.path + "/meta.json";
  SessionMeta m = FullMeta();
  m.git_head.clear();
  BOOST_TEST(guard::SessionMetaToJson(m).find("git_head") == std::string::npos);
  BOOST_REQUIRE(guard::SaveSessionMeta(path, m).ok());
  SessionMeta back;
  back.git_head = "stale";
  BOOST_REQUIRE(guard::LoadSessionMeta(path, &back).ok());
  BOOST_TEST(back.git_head.empty());
}

// Evidence of forgery (docs/format.md, "Evidence of forgery"): written when
// set, read back, left out when not, and the one line commands print.
BOOST_AUTO_TEST_CASE(LogIncompleteRoundTripsAndIsLeftOutWhenNone) {
  TempDir tmp;
  std::string path = tmp.path + "/meta.json";
  SessionMeta m = FullMeta();
  BOOST_TEST(guard::SessionMetaToJson(m).find("log_incomplete") == std::string::npos);
  BOOST_TEST(guard::LogIncompleteLine(m).empty());
  m.incomplete_ns = 1'796'070'650'000'000'000;
  m.incomplete_what = "a process of the session forged a record in the shim's ring";
  BOOST_REQUIRE(guard::SaveSessionMeta(path, m).ok());
  SessionMeta back;
  BOOST_REQUIRE(guard::LoadSessionMeta(path, &back).ok());
  BOOST_TEST(back.incomplete_ns == m.incomplete_ns);
  BOOST_TEST(back.incomplete_what == m.incomplete_what);
  const std::string line = guard::LogIncompleteLine(back);
  BOOST_TEST(line.find("log incomplete from " + guard::FormatIso8601(m.incomplete_ns)) == 0u, line);
  BOOST_TEST(line.find(m.incomplete_what) != std::string::npos, line);
  BOOST_TEST(line.find("may be missing") != std::string::npos, line);
}

BOOST_AUTO_TEST_CASE(MalformedMetadataIsCorruption) {
  TempDir tmp;
  std::string path = tmp.path + "/meta.json";
  SessionMeta out;
  std::string good = guard::SessionMetaToJson(FullMeta());
  const std::vector<std::string> bad = {
      "",
      "{",
      "not json at all",
      "[1, 2, 3]",
      good.substr(0, good.size() / 2),  // torn write
      R"({"format_version": 1})",       // fields missing
      R"({"format_version": "1"})",
  };
  for (const std::string& text : bad) {
    WriteFile(path, text);
    Status s = guard::LoadSessionMeta(path, &out);
    BOOST_TEST(s.IsCorruption(), "'" << text << "' gave " << s.ToString());
  }
  // One field of the wrong type, or an unknown state.
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"\"ops\":123456789012", "\"ops\":\"many\""},
           {"\"state\":\"crashed\"", "\"state\":\"exploded\""},
           {"\"argv\":[\"make\"", "\"argv\":[7"},
           {"\"start_ticks\":9876543210", "\"start_ticks\":-1"}}) {
    std::string text = good;
    size_t at = text.find(from);
    BOOST_REQUIRE_MESSAGE(at != std::string::npos, from);
    text.replace(at, from.size(), to);
    WriteFile(path, text);
    Status s = guard::LoadSessionMeta(path, &out);
    BOOST_TEST(s.IsCorruption(), to << " gave " << s.ToString());
  }
  BOOST_TEST(guard::LoadSessionMeta(tmp.path + "/absent.json", &out).IsNotFound());
}

BOOST_AUTO_TEST_CASE(NewerFormatVersionIsUnsupported) {
  TempDir tmp;
  std::string path = tmp.path + "/meta.json";
  std::string text = guard::SessionMetaToJson(FullMeta());
  text.replace(text.find("\"format_version\":1"), 18, "\"format_version\":2");
  WriteFile(path, text);
  SessionMeta out;
  Status s = guard::LoadSessionMeta(path, &out);
  BOOST_TEST((s.code() == Status::Code::kUnsupported), s.ToString());
  // Fields a later minor revision might add are ignored.
  text = guard::SessionMetaToJson(FullMeta());
  text.insert(1, "\"added_later\":{\"x\":1},");
  WriteFile(path, text);
  BOOST_TEST(guard::LoadSessionMeta(path, &out).ok());
}

BOOST_AUTO_TEST_CASE(SupervisorAliveMatchesPidAndStartTime) {
  SessionMeta m;
  m.supervisor_pid = ::getpid();
  m.supervisor_start_ticks = guard::ProcessStartTicks(::getpid());
  BOOST_TEST(m.supervisor_start_ticks > 0u);
  BOOST_TEST(guard::SupervisorAlive(m));

  // Same pid, another start time: the pid was reused by another process.
  m.supervisor_start_ticks += 1;
  BOOST_TEST(!guard::SupervisorAlive(m));

  // A process that has exited: first as a zombie, then reaped.
  pid_t child = ::fork();
  BOOST_REQUIRE(child >= 0);
  if (child == 0) ::_exit(0);
  m.supervisor_pid = child;
  m.supervisor_start_ticks = guard::ProcessStartTicks(child);  // 0 once it is a zombie
  // (Up to 20 s: under a loaded suite the child may take long to run and exit.)
  for (int i = 0; i < 10000 && guard::ProcessStartTicks(child) != 0; ++i) ::usleep(2000);
  BOOST_TEST(guard::ProcessStartTicks(child) == 0u);
  BOOST_TEST(!guard::SupervisorAlive(m));
  BOOST_REQUIRE(::waitpid(child, nullptr, 0) == child);
  BOOST_TEST(!guard::SupervisorAlive(m));
  m.supervisor_pid = 0;
  BOOST_TEST(!guard::SupervisorAlive(m));
}

namespace guard {
namespace {

// A restore's account (meta.json's optional "restore") comes back as
// written; a session without one has none, and an outer guard's restore
// (no account) is still told by its command line.
BOOST_AUTO_TEST_CASE(ARestoreAccountRoundTripsAndItsAbsenceReadsAsNone) {
  TempDir dir;
  SessionMeta m = FullMeta();
  m.argv = {"/usr/bin/guard", "__restore", "undo", "--session", "20261129-203012-a1b2c3", "--boundary", "0"};
  m.restore.verb = "undo";
  m.restore.of = "20261129-203012-a1b2c3";
  m.restore.from = 77;
  m.restore.boundary = 12;
  m.restore.turns = 2;
  m.restore.paths = {"src", "a b"};
  m.restore.interrupted = true;
  m.restore.planned = 6000;
  m.restore.done = 536;
  std::string path = dir.path + "/meta.json";
  BOOST_REQUIRE(SaveSessionMeta(path, m).ok());
  SessionMeta back;
  BOOST_REQUIRE(LoadSessionMeta(path, &back).ok());
  const RestoreOf& r = back.restore;
  BOOST_TEST(r.verb == "undo");
  BOOST_TEST(r.of == m.restore.of);
  BOOST_TEST((r.from == 77 && r.boundary == 12 && r.turns == 2 && r.planned == 6000 && r.done == 536));
  BOOST_TEST((r.paths == std::vector<std::string>{"src", "a b"}));
  BOOST_TEST(r.interrupted);
  BOOST_TEST(IsRestoreSession(back));

  SessionMeta plain = FullMeta();
  BOOST_REQUIRE(SaveSessionMeta(path, plain).ok());
  BOOST_REQUIRE(LoadSessionMeta(path, &back).ok());
  BOOST_TEST(back.restore.verb.empty());
  BOOST_TEST(!IsRestoreSession(back));

  plain.argv = m.argv;  // recorded by an outer guard: no account
  BOOST_TEST(IsRestoreSession(plain));
  BOOST_TEST(RestoreOfSession(plain).verb == "undo");
  BOOST_TEST(RestoreOfSession(plain).of == "20261129-203012-a1b2c3");
}

}  // namespace
}  // namespace guard
