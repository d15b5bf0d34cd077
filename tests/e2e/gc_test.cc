// guard gc and guard forget on real sessions: what is removed (old sessions,
// oldest first, never the newest of a root, never a running one), what
// stays (every blob a kept session names, shared content included), the
// sizes sessions and status report, the automatic gc after a session ends,
// and a gc racing a capturing session.
#define BOOST_TEST_MODULE gc
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/e2e/support/expect_capture.h"
#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/store_checks.h"

namespace guard::e2e {
namespace {

std::string MakeSession(const Workspace& ws, const std::string& script) {
  GuardResult r = RunGuardBash(ws, script);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0 && r.new_sessions.size() == 1, DescribeResult(r));
  return r.new_sessions[0];
}

// Five sessions, each rewriting a few files; the first and the last write
// the same content into shared.txt, so that they share a blob.
std::vector<std::string> FiveSessions(const Workspace& ws) {
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    std::string n = std::to_string(i);
    ids.push_back(MakeSession(ws, "for f in a b c; do head -c 3000 /dev/urandom > $f.bin; done; echo " +
                                      std::string(i == 0 || i == 4 ? "same" : "other" + n) + " > shared.txt"));
  }
  return ids;
}

void ExpectComplete(const Workspace& ws, const std::vector<std::string>& ids) {
  for (const std::string& id : ids) {
    std::vector<std::string> missing = UnreadableBlobs(ws.home(), id);
    std::string all;
    for (const std::string& m : missing) all += "  " + m + "\n";
    BOOST_TEST(missing.empty(), "session " << id << " lost blobs:\n" << all);
  }
}

BOOST_AUTO_TEST_CASE(GcRemovesOldSessionsOldestFirstAndKeepsTheNewestOfTheRoot) {
  Workspace ws;
  std::vector<std::string> ids = FiveSessions(ws);
  AgeStore(ws.home(), 7200);
  size_t objects_before = CountObjects(ws.home());
  GuardResult r = RunGuardCommand(ws, {"gc", "--keep", "0s", "--keep-newest", "3"});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(ws.SessionIds() == (std::vector<std::string>{ids[2], ids[3], ids[4]}));
  BOOST_TEST(r.out.find("removed session " + ids[0]) != std::string::npos, r.out);
  BOOST_TEST(CountObjects(ws.home()) < objects_before);
  ExpectComplete(ws, ws.SessionIds());
  // The newest session still undoes exactly (its pre-images survived).
  GuardResult undo = RunGuardCommand(ws, {"undo", "--yes", "--session", ids[4]});
  BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
  BOOST_TEST(ws.Read("shared.txt") == "other3\n");
}

BOOST_AUTO_TEST_CASE(ContentSharedWithAKeptSessionStays) {
  Workspace ws;
  std::vector<std::string> ids = FiveSessions(ws);
  AgeStore(ws.home(), 7200);
  // Forget the first: its "same\n" is the last session's too.
  GuardResult r = RunGuardCommand(ws, {"forget", "--yes", ids[0]});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(!PathExists(ws.home() + "/sessions/" + ids[0]));
  ExpectComplete(ws, ws.SessionIds());
  SessionView last = SessionView::Load(ws.home(), ids[4]);
  bool found = false;
  for (const Record& rec : last.records()) {
    if (rec.kind == OpKind::kFinal && rec.path == "shared.txt") {
      std::string content;
      BOOST_TEST(last.ReadBlob(rec.after.blob, &content).ok());
      BOOST_TEST(content == "same\n");
      found = true;
    }
  }
  BOOST_TEST(found);
}

BOOST_AUTO_TEST_CASE(GcWithinThePolicyAndDryRunsRemoveNothing) {
  Workspace ws;
  std::vector<std::string> ids = FiveSessions(ws);
  AgeStore(ws.home(), 7200);
  size_t objects = CountObjects(ws.home());
  GuardResult r = RunGuardCommand(ws, {"gc"});  // the default policy: 30 days, 10 GiB
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(ws.SessionIds() == ids);
  BOOST_TEST(CountObjects(ws.home()) == objects);
  r = RunGuardCommand(ws, {"gc", "--dry-run", "--keep", "0s", "--keep-newest", "1"});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(r.out.find("would remove session " + ids[0]) != std::string::npos, r.out);
  BOOST_TEST(ws.SessionIds() == ids);
  BOOST_TEST(CountObjects(ws.home()) == objects);
  r = RunGuardCommand(ws, {"forget", "--dry-run", ids[1]});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(ws.SessionIds() == ids);
}

BOOST_AUTO_TEST_CASE(SizeCapRemovesOldestSessionsUntilTheStoreFits) {
  Workspace ws;
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(MakeSession(ws, "head -c 400000 /dev/urandom > big" + std::to_string(i)));
  AgeStore(ws.home(), 7200);
  // Each session holds ~400 KB of its own: a 1 MB cap keeps the newest two.
  GuardResult r = RunGuardCommand(ws, {"gc", "--max-size", "1MB", "--keep-newest", "1"});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(ws.SessionIds() == (std::vector<std::string>{ids[2], ids[3]}), r.out);
  ExpectComplete(ws, ws.SessionIds());
}

BOOST_AUTO_TEST_CASE(ForgetRefusesARunningSession) {
  Workspace ws;
  ChildProcess running(GuardSpec(ws, GuardRun{.command = {"bash", "-c", "echo x > f; sleep 60"}}));
  std::string id;
  for (int i = 0; i < 2000 && id.empty(); ++i) {
    std::vector<std::string> now = ws.SessionIds();
    if (!now.empty() && PathExists(ws.home() + "/sessions/" + now[0] + "/journal")) id = now[0];
    else std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  BOOST_REQUIRE(!id.empty());
  GuardResult r = RunGuardCommand(ws, {"forget", "--yes", id});
  BOOST_TEST(r.exit_code == 1, DescribeResult(r));
  BOOST_TEST(r.out.find("kept session " + id + ": running") != std::string::npos, r.out);
  BOOST_TEST(PathExists(ws.home() + "/sessions/" + id + "/meta.json"));
  r = RunGuardCommand(ws, {"gc", "--keep", "0s", "--keep-newest", "0"});
  BOOST_TEST(ws.SessionIds() == std::vector<std::string>{id});
  kill(running.pid(), SIGTERM);
  running.Wait();
}

BOOST_AUTO_TEST_CASE(SessionsShowWhatEachHoldsAloneAndShared) {
  Workspace ws;
  std::string a = MakeSession(ws, "head -c 50000 /dev/urandom > own; echo same > shared");
  std::string b = MakeSession(ws, "echo same > shared2");
  GuardResult r = RunGuardCommand(ws, {"sessions", "--json"});
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  nlohmann::json j = nlohmann::json::parse(r.out);
  BOOST_REQUIRE(j.size() == 2u);
  BOOST_TEST(j[0]["own_bytes"].get<uint64_t>() > 50000u);
  BOOST_TEST(j[0]["shared_bytes"].get<uint64_t>() > 0u);  // "same\n" is in both
  BOOST_TEST(j[1]["shared_bytes"].get<uint64_t>() == j[0]["shared_bytes"].get<uint64_t>());
  r = RunGuardCommand(ws, {"sessions"});
  BOOST_TEST(r.out.find(" own, ") != std::string::npos, r.out);
  r = RunGuardCommand(ws, {"status", "--json"});
  nlohmann::json s = nlohmann::json::parse(r.out);
  BOOST_TEST(s["store"]["bytes"].get<uint64_t>() > 50000u);
  BOOST_TEST(s["store"]["max_bytes"].get<uint64_t>() == (10ULL << 30));
  BOOST_TEST(s["store"]["within_policy"].get<bool>());
  r = RunGuardCommand(ws, {"status"});
  BOOST_TEST(r.out.find("store: ") != std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(AutomaticGcAfterASessionEndBringsTheStoreWithinThePolicy) {
  Workspace ws;
  MakeDir(ws.dir() + "/config");
  MakeDir(ws.dir() + "/config/guard");
  WriteFile(ws.dir() + "/config/guard/config.toml", "[retention]\nauto_gc = false\n");
  std::vector<std::string> ids = FiveSessions(ws);
  AgeStore(ws.home(), 7200);
  WriteFile(ws.dir() + "/config/guard/config.toml", "[retention]\nkeep = \"0s\"\nkeep_newest = 2\n");
  std::string last = MakeSession(ws, "echo one more > more.txt");
  // The gc runs detached after the session's end: wait for it.
  std::vector<std::string> expect = {ids[4], last};
  // Its report, written when it is done, ends with the directory's size.
  auto log = [&] { return PathExists(ws.home() + "/gc.log") ? ReadFile(ws.home() + "/gc.log") : ""; };
  for (int i = 0; i < 600 && log().find("state directory") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  BOOST_TEST(ws.SessionIds() == expect);
  BOOST_TEST(log().find("removed session " + ids[0]) != std::string::npos, log());
  ExpectComplete(ws, ws.SessionIds());
}

// A session stores raw (its command never waits for zstd); gc compresses
// what shrinks, and the session still undoes byte for byte from the
// compressed objects.
BOOST_AUTO_TEST_CASE(WhatASessionStoredRawGcCompresses) {
  Workspace ws;
  std::string text;
  for (int i = 0; text.size() < 200000; ++i) text += "line " + std::to_string(i % 50) + " of a source file\n";
  ws.Write("src.txt", text);
  std::string id = MakeSession(ws, "echo changed > src.txt; head -c 20000 /dev/urandom > noise.bin");
  size_t raw_before = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(ws.home() + "/store/objects"))
    raw_before += e.is_regular_file() && e.path().extension() != ".zst";
  BOOST_TEST(raw_before >= 2u);  // stored raw while the session ran
  GuardResult g = RunGuardCommand(ws, {"gc"});
  BOOST_REQUIRE_MESSAGE(g.exit_code == 0, DescribeResult(g));
  BOOST_TEST(g.out.find("compressed 1 blob") != std::string::npos, g.out);
  size_t zst = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(ws.home() + "/store/objects")) {
    if (e.path().extension() != ".zst") continue;
    ++zst;
    // The raw file went once its .zst was durable: undo below reads the .zst.
    std::filesystem::path raw = e.path();
    raw.replace_extension();
    BOOST_TEST(!std::filesystem::exists(raw), raw.string());
  }
  BOOST_TEST(zst >= 1u);
  ExpectComplete(ws, {id});
  GuardResult u = RunGuardCommand(ws, {"undo", "--yes", "--session", id});
  BOOST_REQUIRE_MESSAGE(u.exit_code == 0, DescribeResult(u));
  BOOST_TEST(ws.Read("src.txt") == text);
  BOOST_TEST(!ws.Exists("noise.bin"));
}

// A gc that read the journals before a running session stored content the
// gc is about to sweep must not take it from that session. The test hook
// GUARD_TEST_GC_PAUSE_MS holds the gc between its marks and its sweep
// while the session deduplicates against the old session's objects.
// The automatic gc starts detached after a session; by the time it runs
// the state directory may be gone (the suite's own temporary homes are, and
// a user may have removed it): it must not make an empty one again.
BOOST_AUTO_TEST_CASE(AutomaticGcOfAStateDirectoryRemovedMeanwhileMakesNone) {
  Workspace ws;
  // The session's own automatic gc off, so that none runs while the test
  // removes the directory; the gc under test is started by hand.
  MakeDir(ws.dir() + "/config");
  MakeDir(ws.dir() + "/config/guard");
  WriteFile(ws.dir() + "/config/guard/config.toml", "[retention]\nauto_gc = false\n");
  MakeSession(ws, "echo x > f");
  std::error_code ec;
  std::filesystem::remove_all(ws.home(), ec);
  BOOST_REQUIRE(!PathExists(ws.home()));
  GuardResult r = RunGuardCommand(ws, {"gc", "--auto"});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(!PathExists(ws.home()));
}

BOOST_AUTO_TEST_CASE(GcWhileASessionCapturesNeverRemovesABlobItNames) {
  Workspace ws;
  std::string files;
  for (int i = 0; i < 60; ++i) {
    ws.Write("f" + std::to_string(i), std::string(2000, static_cast<char>('a' + i % 26)) + std::to_string(i));
    files += " f" + std::to_string(i);
  }
  std::string old = MakeSession(ws, "for f in" + files + "; do echo changed >> $f; done");
  // Back to the contents the old session saved as pre-images, then old.
  for (int i = 0; i < 60; ++i)
    ws.Write("f" + std::to_string(i), std::string(2000, static_cast<char>('a' + i % 26)) + std::to_string(i));
  AgeStore(ws.home(), 7200);

  GuardRun run;
  run.command = {"bash", "-c", "sleep 0.3; for f in" + files + "; do echo again >> $f; sleep 0.02; done"};
  ChildProcess session(GuardSpec(ws, run));
  ProcessSpec spec;
  spec.argv = {GuardBinary(), "forget", "--yes", old};
  spec.cwd = ws.tree();
  spec.env = GuardEnv(ws);
  spec.env["GUARD_TEST_GC_PAUSE_MS"] = "1500";
  ProcessResult f = RunProcess(spec);
  BOOST_TEST(f.exit_code == 0, DescribeResult(f));
  ProcessResult s = session.Wait();
  BOOST_REQUIRE_MESSAGE(s.exit_code == 0, DescribeResult(s));
  std::vector<std::string> ids = ws.SessionIds();
  BOOST_REQUIRE(ids.size() == 1u);
  ExpectComplete(ws, ids);
  GuardResult undo = RunGuardCommand(ws, {"undo", "--yes"});
  BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
  BOOST_TEST(ws.Read("f7") == std::string(2000, 'h') + "7");
}

BOOST_AUTO_TEST_CASE(LongCommandsPrintNoProgressWhenStderrIsNotATerminal) {
  Workspace ws;
  std::vector<std::string> ids = FiveSessions(ws);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"gc", "--keep", "0s"}, {"export"}, {"undo", "--yes"}, {"replay", "--yes"}}) {
    GuardResult r = RunGuardCommand(ws, args);
    BOOST_TEST(r.exit_code == 0, DescribeResult(r));
    BOOST_TEST(r.err.find('\r') == std::string::npos, args[0] << ": " << r.err);
    BOOST_TEST(r.err.find("\033[") == std::string::npos, args[0] << ": " << r.err);
  }
}

BOOST_AUTO_TEST_CASE(TemporaryFilesLeftByADeadWriterAreSwept) {
  Workspace ws;
  MakeSession(ws, "echo x > x");
  std::string temp = ws.home() + "/store/tmp/4194305-7-0badf00d";  // pid above pid_max: dead
  WriteFile(temp, "half a blob", 0600);
  AgeStore(ws.home(), 7200);
  GuardResult r = RunGuardCommand(ws, {"gc"});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(!PathExists(temp));
}

}  // namespace
}  // namespace guard::e2e
