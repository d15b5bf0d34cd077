#include "tests/e2e/support/stopped_restore.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdio>
#include <thread>

#include "tests/e2e/support/session_view.h"

namespace guard::e2e {

RestoredSession::RestoredSession(int files) {
  ws.Mkdir("d");
  for (int i = 0; i < files; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "d/s%d/f%03d", i % 4, i);
    if (i < 4) ws.Mkdir("d/s" + std::to_string(i));
    ws.Write(name, std::string("removed by the session: ") + name + "\n", i % 3 ? 0644 : 0600);
  }
  ws.Mkdir("kept");
  for (int i = 0; i < 20; ++i) ws.Write("kept/m" + std::to_string(i), "version one of m" + std::to_string(i) + "\n");
  ws.Mkdir("swap");
  ws.Write("swap/inner", "a directory the session replaces by a file\n");
  before = SnapshotTree(ws.tree());
  GuardResult run = RunGuardBash(ws,
                                 "rm -rf d swap && echo now a file > swap && "
                                 "for f in kept/m*; do echo two >> $f; done && "
                                 "mkdir -p made && for i in $(seq 40); do echo new $i > made/n$i; done");
  BOOST_REQUIRE_MESSAGE(run.exit_code == 0 && run.new_sessions.size() == 1, DescribeResult(run));
  id = run.new_sessions[0];
  after = SnapshotTree(ws.tree());
}

size_t RestoredSession::UndoChanges() {
  GuardResult undo = Guard({"undo", "--yes", "--session", id});
  BOOST_REQUIRE_MESSAGE(undo.exit_code == 0 && undo.new_sessions.size() == 1, DescribeResult(undo));
  size_t n = SessionView::Load(ws.home(), undo.new_sessions[0]).Operations().size();
  GuardResult back = Guard({"replay", "--yes"});
  BOOST_REQUIRE_MESSAGE(back.exit_code == 0 && back.new_sessions.size() == 1, DescribeResult(back));
  replay_changes = SessionView::Load(ws.home(), back.new_sessions[0]).Operations().size();
  BOOST_REQUIRE_MESSAGE(TreeDiff(after, SnapshotTree(ws.tree())).empty(), "replay after undo differs");
  return n;
}

StoppedRestore RunStoppedRestore(const RestoredSession& s, const std::vector<std::string>& args, long at,
                                 RestoreStop how) {
  std::vector<std::string> ids = s.ws.SessionIds();
  ProcessSpec spec;
  spec.cwd = s.ws.tree();
  spec.env = GuardEnv(s.ws);
  spec.env["GUARD_TEST_PAUSE_RESTORE"] = s.PauseFile();
  // 0: the pause before the restore changes anything, its session not yet started.
  if (at > 0) spec.env["GUARD_TEST_PAUSE_RESTORE_AT"] = std::to_string(at);
  spec.timeout_seconds = 120;
  if (how == RestoreStop::kClosedStdout) {
    spec.argv = {"bash", "-c", "\"$0\" \"$@\" | true; exit ${PIPESTATUS[0]}", GuardBinary()};
  } else {
    // Its pid is guard's (exec). Its stdout goes to a file: the test reads
    // nothing while it polls, and a plan of thousands of lines would fill
    // a pipe and hold guard before its first change.
    spec.env["GUARD_E2E_RESTORE_OUT"] = s.ws.dir() + "/restore.out";
    spec.argv = {"bash", "-c", "exec \"$0\" \"$@\" >\"$GUARD_E2E_RESTORE_OUT\"", GuardBinary()};
  }
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  StoppedRestore out;
  {
    ChildProcess child(spec);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(100);  // a hang guard only
    while (!out.paused && std::chrono::steady_clock::now() < deadline) {
      out.paused = access(s.PauseFile().c_str(), F_OK) == 0;
      siginfo_t info{};
      if (!out.paused && waitid(P_PID, static_cast<id_t>(child.pid()), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid != 0) {
        break;  // it ended before that change
      }
      if (!out.paused) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (out.paused) {
      switch (how) {
        case RestoreStop::kSigint: kill(child.pid(), SIGINT); break;
        case RestoreStop::kSigterm: kill(child.pid(), SIGTERM); break;
        case RestoreStop::kSigkill: kill(child.pid(), SIGKILL); break;
        case RestoreStop::kClosedStdout: break;
      }
      // Killed, it cannot end its pause; interrupted, it ends it itself.
      if (how == RestoreStop::kSigkill || how == RestoreStop::kClosedStdout) unlink(s.PauseFile().c_str());
    }
    out.result = child.Wait();
  }
  if (how != RestoreStop::kClosedStdout) {
    const std::string file = s.ws.dir() + "/restore.out";
    if (access(file.c_str(), F_OK) == 0) out.result.out = ReadFile(file) + out.result.out;
    unlink(file.c_str());
  }
  unlink(s.PauseFile().c_str());
  for (const std::string& id : s.ws.SessionIds()) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) out.new_sessions.push_back(id);
  }
  return out;
}

std::string TreeDiff(const TreeSnapshot& expected, const TreeSnapshot& actual) {
  std::string text;
  for (const std::string& d : DiffSnapshots(expected, actual)) text += "    " + d + "\n";
  return text;
}

}  // namespace guard::e2e
