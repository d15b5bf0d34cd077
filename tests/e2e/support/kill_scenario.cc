#include "tests/e2e/support/kill_scenario.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/wait.h>
#include <time.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "common/session_meta.h"
#include "tests/e2e/support/durability_checks.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/process_tree.h"
#include "tests/e2e/support/session_view.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/watch_blind.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

int64_t NowUs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

void SleepUs(int64_t us) {
  if (us <= 0) return;
  timespec ts{static_cast<time_t>(us / 1000000), static_cast<long>(us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

// The content of a small file the workload writes with one write(2), or ""
// while it is missing, empty or not yet complete (no final newline).
std::string ReadLine(const std::string& path) {
  std::string s;
  try {
    s = ReadFile(path);
  } catch (const std::exception&) {
    return "";
  }
  if (s.empty() || s.back() != '\n') return "";
  s.pop_back();
  return s;
}

const char* TargetName(KillTarget t) {
  switch (t) {
    case KillTarget::kAgent: return "agent";
    case KillTarget::kGuard: return "guard";
    case KillTarget::kNone: return "no";
    case KillTarget::kSealer: return "sealer";
  }
  return "?";
}

// The workload as one bash script: every step in a subshell of its own
// (with `set -e`, as RunSteppedSession runs them), the start of each step
// marked in outside/progress, and, once all are done, an idle agent so
// that a late kill still meets a live one (but no idling in the control run,
// which kills nothing).
// `pause_before` (if below the number of steps): before that step, the
// agent says "pause" (in watch mode after a `guard mark`, which returns
// once its work is saved) and waits for outside/resume.
std::string AgentScript(const Workload& w, const std::string& outside, bool idle_at_end,
                        size_t pause_before = SIZE_MAX) {
  std::string progress = ShellQuote(outside + "/progress");
  std::ostringstream os;
  os << "exec >" << ShellQuote(outside + "/agent.out") << " 2>&1\n";
  os << "echo $$ > " << ShellQuote(outside + "/agent.pid") << "\n";
  for (size_t i = 0; i < w.steps.size(); ++i) {
    if (i == pause_before) {
      // In watch mode the work saver saves nothing (the watcher does): a
      // mark returns once every change made before it is saved
      // (WatchSession::Barrier), so the agent asks for one before it pauses.
      if (UnderWatch()) os << ShellQuote(GuardBinary()) << " mark pause\n";
      os << "echo pause > " << progress << "\n";
      os << "while [ ! -e " << ShellQuote(outside + "/resume") << " ]; do sleep 0.02; done\n";
    }
    os << "echo " << i << " > " << progress << "\n";
    os << "( set -e\n" << w.steps[i].script << "\n) || echo \"step " << i << " failed: $?\"\n";
  }
  os << "echo done > " << progress << "\n";
  if (idle_at_end) os << "exec sleep 600\n";
  return os.str();
}

std::string Joined(const std::vector<std::string>& lines, size_t max = 40) {
  std::string out;
  for (size_t i = 0; i < lines.size() && i < max; ++i) out += "    " + Printable(lines[i]) + "\n";
  if (lines.size() > max) out += "    ... (" + std::to_string(lines.size() - max) + " more)\n";
  return out;
}

std::string PidList(const std::vector<pid_t>& pids) {
  std::string out;
  for (pid_t p : pids) out += (out.empty() ? "" : ", ") + DescribeProcess(p);
  return out;
}

// Waits until the workload has begun step `step` (or finished them all),
// guard has exited, or `timeout_us` passed. Returns the last progress read.
std::string WaitForStep(const std::string& outside, size_t step, pid_t guard_pid, int64_t timeout_us) {
  int64_t deadline = NowUs() + timeout_us;
  std::string last;
  while (NowUs() < deadline) {
    std::string p = ReadLine(outside + "/progress");
    if (!p.empty()) last = p;
    if (last == "done" || (!last.empty() && std::strtoull(last.c_str(), nullptr, 10) >= step)) return last;
    if (ProcessGone(guard_pid)) return last;
    SleepUs(1000);
  }
  return last;
}

int64_t WallNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// The wall time of the last operation record of session `id` so far.
int64_t LastOperationWall(const std::string& home, const std::string& id) {
  int64_t last = 0;
  SessionView view = SessionView::Load(home, id);
  for (const Record* op : view.Operations()) last = std::max(last, op->wall_ns);
  return last;
}

// Waits until guard's work saver says (GUARD_POST_IMAGE_LAG_FILE) that it
// was idle, everything saved and durable, at a moment after `after_wall`.
bool WaitForSaverIdleAfter(const std::string& saver_log, int64_t after_wall, pid_t guard_pid, int64_t timeout_us) {
  int64_t deadline = NowUs() + timeout_us;
  while (NowUs() < deadline && !ProcessGone(guard_pid)) {
    std::string log;
    try {
      log = ReadFile(saver_log);
    } catch (const std::exception&) {
    }
    std::istringstream lines(log);
    for (std::string line; std::getline(lines, line);) {
      long long t = 0;
      if (std::sscanf(line.c_str(), "idle wall_ns %lld", &t) == 1 && t > after_wall) return true;
    }
    SleepUs(20000);
  }
  return false;
}

// What `state` (a recorded state) looks like in a snapshot: nullopt for
// absent; false when it cannot tell (content not recorded, not readable).
bool AsEntry(const SessionView& view, const FileState& state, std::optional<TreeEntry>* out) {
  TreeEntry e;
  e.type = state.type;
  e.mode = state.mode;
  switch (state.type) {
    case FileType::kAbsent:
      *out = std::nullopt;
      return true;
    case FileType::kRegular:
      if (state.blob.kind == BlobRef::Kind::kNone || !view.ReadBlob(state.blob, &e.content).ok()) return false;
      break;
    case FileType::kSymlink:
      e.target = state.symlink_target;
      break;
    case FileType::kDirectory:
    case FileType::kOther:
      break;
    default:
      return false;
  }
  *out = e;
  return true;
}

bool IsAtOrBelow(const std::string& p, const std::string& dir) {
  return p == dir || (p.size() > dir.size() && p.compare(0, dir.size(), dir) == 0 && p[dir.size()] == '/');
}

// The revert check (kill_scenario.h): `replayed` against `stopped` for the
// paths no operation after `last_old_wall` touched, against every state the
// path had for the others.
std::vector<std::string> CheckReplayAfterRevert(const SessionView& view, const TreeSnapshot& before,
                                                const TreeSnapshot& stopped, const TreeSnapshot& replayed,
                                                int64_t last_old_wall, size_t* old_paths, size_t* recent_paths) {
  std::vector<std::string> recent_roots;
  for (const Record* op : view.Operations()) {
    if (op->wall_ns <= last_old_wall) continue;
    if (!(op->flags & kOutsideRoot)) recent_roots.push_back(op->path);
    if (!op->path2.empty() && !(op->flags & kOutsideRoot2)) recent_roots.push_back(op->path2);
  }
  std::set<std::string> paths;
  for (const TreeSnapshot* t : {&before, &stopped, &replayed}) {
    for (const auto& [p, e] : t->entries) paths.insert(p);
  }
  auto find = [](const TreeSnapshot& t, const std::string& p) {
    const TreeEntry* e = t.Find(p);
    return e == nullptr ? std::optional<TreeEntry>() : std::optional<TreeEntry>(*e);
  };
  auto describe = [](const std::optional<TreeEntry>& e) { return e ? Describe(*e) : std::string("absent"); };
  std::vector<std::string> failures;
  *old_paths = *recent_paths = 0;
  for (const std::string& p : paths) {
    std::optional<TreeEntry> got = find(replayed, p), at_kill = find(stopped, p);
    bool recent = std::any_of(recent_roots.begin(), recent_roots.end(),
                              [&](const std::string& r) { return IsAtOrBelow(p, r); });
    if (!recent) {
      if (find(before, p) != at_kill) ++*old_paths;
      if (got != at_kill) {
        failures.push_back(Printable(p) + " (last written before the pause): replay gave " + describe(got) +
                           ", the kill left " + describe(at_kill));
      }
      continue;
    }
    ++*recent_paths;
    std::vector<std::optional<TreeEntry>> had = {find(before, p), at_kill};
    for (const Record& r : view.records()) {
      std::vector<const FileState*> states;
      if (IsOperation(r.kind)) {
        if (r.path == p && !(r.flags & kOutsideRoot)) states.push_back(&r.before);
        if (r.path2 == p && !(r.flags & kOutsideRoot2)) states.push_back(&r.before2);
      } else if (r.kind == OpKind::kFinal && r.path == p) {
        states.push_back(&r.after);
      }
      for (const FileState* st : states) {
        std::optional<TreeEntry> e;
        if (AsEntry(view, *st, &e)) had.push_back(e);
      }
    }
    if (std::find(had.begin(), had.end(), got) == had.end()) {
      failures.push_back(Printable(p) + " (written after the pause): replay gave " + describe(got) +
                         ", a state it never had during the session");
    }
  }
  return failures;
}

}  // namespace

KillPlan MakeKillPlan(KillTarget target, uint64_t seed, WorkloadMix mix, size_t steps) {
  KillPlan plan;
  plan.seed = seed;
  plan.mix = mix;
  plan.target = target;
  Rng rng(seed * 0x9e3779b97f4a7c15ull + 0xdead + static_cast<uint64_t>(target) * 7 + static_cast<uint64_t>(mix));
  plan.kill_step = steps == 0 ? 0 : rng.Below(steps);
  // Right at the start of a step (fork, exec, the first capture), somewhere
  // inside it or a few steps on, or a long way in (possibly after the last).
  // A step takes a few milliseconds on an idle machine: most delays are
  // shorter than that, so that most kills land mid-workload.
  int range_us = rng.Percent(45) ? 3000 : rng.Percent(73) ? 30000 : 300000;
  plan.delay_us = static_cast<int>(rng.Below(static_cast<uint64_t>(range_us)));
  plan.whole_agent = target == KillTarget::kAgent && rng.Percent(50);
  plan.recover_by_listing = (target == KillTarget::kGuard || target == KillTarget::kSealer) && rng.Percent(50);
  // A seed in four of the guard kills reverts the tree after the kill. Its
  // own generator, so that the other seeds keep their plans. Not in watch
  // mode: its judgement reads from the journal which paths the agent
  // touched after the pause, and there a change the watcher had not yet
  // seen is not in it (watch_mode_test kills guard and reverts the tree,
  // before and after the recovery, with what it expects of each).
  if (target == KillTarget::kGuard && seed % 4 == 1 && steps > 1 && !UnderWatch()) {
    Rng more(seed * 0x2545f4914f6cdd1dull + 0x5eed);
    plan.revert = true;
    plan.pause_before_step = 1 + more.Below(steps - 1);
    plan.kill_step = plan.pause_before_step + more.Below(steps - plan.pause_before_step);
  }
  return plan;
}

std::string DescribePlan(const KillPlan& plan) {
  std::ostringstream os;
  if (plan.target == KillTarget::kNone) {
    os << "seed " << plan.seed << ", mix " << WorkloadMixName(plan.mix) << ": no kill (control run";
    if (plan.max_steps != SIZE_MAX) os << " of the first " << plan.max_steps << " steps";
    os << ")";
    return os.str();
  }
  if (plan.target == KillTarget::kSealer) {
    os << "seed " << plan.seed << ", mix " << WorkloadMixName(plan.mix) << ": SIGKILL guard " << plan.delay_us
       << " us into the deferred seal, after guard returned; then "
       << (plan.recover_by_listing ? "guard sessions --json" : "guard recover");
    return os.str();
  }
  os << "seed " << plan.seed << ", mix " << WorkloadMixName(plan.mix) << ": SIGKILL "
     << (plan.target == KillTarget::kGuard ? "guard"
         : plan.whole_agent              ? "every process of the agent"
                                         : "the agent's main process")
     << " " << plan.delay_us << " us after step " << plan.kill_step << " began";
  if (plan.revert) {
    os << " (the agent paused before step " << plan.pause_before_step
       << " until guard had saved its work; the tree reverted to its state before the session after the kill)";
  }
  if (plan.target == KillTarget::kGuard) {
    os << "; then " << (plan.recover_by_listing ? "guard sessions --json" : "guard recover");
  }
  return os.str();
}

bool RestoreChecks::ExplainedBy(const RestoreChecks& c) const {
  return (undo_exact || !c.undo_exact) && (replay_exact || !c.replay_exact) && (undo_clean || !c.undo_clean) &&
         (replay_clean || !c.replay_clean);
}

std::string RestoreChecks::Failed() const {
  std::vector<std::string> parts;
  if (!undo_exact) parts.push_back("undo inexact");
  if (!undo_clean) parts.push_back("undo exit != 0");
  if (!replay_exact) parts.push_back("replay inexact");
  if (!replay_clean) parts.push_back("replay exit != 0");
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

KillOutcome RunKillScenario(KillTarget target, uint64_t seed, WorkloadMix mix, size_t max_steps) {
  KillOutcome out;
  out.plan.seed = seed;
  out.plan.mix = mix;
  out.plan.target = target;
  auto fail = [&](const std::string& what) { out.durability_failures.push_back(what); };
  try {
    Workspace ws;
    WorkloadPaths paths{ws.tree(), ws.outside(), TestProgram("rename_exchange")};
    Workload w = MakeRandomWorkload(seed, mix, paths);
    out.plan = MakeKillPlan(target, seed, mix, w.steps.size());
    if (max_steps < w.steps.size()) {
      w.steps.resize(max_steps);
      out.plan.max_steps = max_steps;
    }
    const KillPlan& plan = out.plan;
    // A kill while the workload runs (the sealer is killed after it).
    const bool kills_agent_or_guard = target == KillTarget::kAgent || target == KillTarget::kGuard;
    out.context = DescribePlan(plan) + "\n  steps:\n" + FormatSteps(w);
    TreeSnapshot before = SnapshotTree(ws.tree());

    GuardRun run;
    run.command = {"bash", "-c",
                   AgentScript(w, ws.outside(), kills_agent_or_guard,
                               plan.revert ? plan.pause_before_step : SIZE_MAX)};
    run.timeout_seconds = 180;
    const std::string saver_log = ws.outside() + "/saver.log";
    if (plan.revert) run.env["GUARD_POST_IMAGE_LAG_FILE"] = saver_log;
    // The system's tools, without version-manager shims (pyenv wraps each
    // python3 in a bash script): the steps are what they say they are.
    run.env["PATH"] = "/usr/sbin:/usr/bin:/sbin:/bin";
    const std::string seal_pause = ws.outside() + "/seal.pause";
    if (target == KillTarget::kSealer) run.env["GUARD_TEST_PAUSE_SEAL"] = "start:" + seal_pause;
    ChildProcess guard_proc(GuardSpec(ws, run));
    pid_t guard_pid = guard_proc.pid();

    // The agent has started once it wrote its pid; guard made the session
    // directory before starting it.
    int64_t deadline = NowUs() + 60 * 1000000LL;
    std::string agent_pid_text;
    while (NowUs() < deadline && (agent_pid_text = ReadLine(ws.outside() + "/agent.pid")).empty() &&
           !ProcessGone(guard_pid)) {
      SleepUs(1000);
    }
    std::vector<std::string> ids = ws.SessionIds();
    if (agent_pid_text.empty() || ids.size() != 1) {
      ProcessResult r = guard_proc.Wait();
      fail("the agent did not start (" + std::to_string(ids.size()) + " sessions); guard: " + DescribeResult(r));
      return out;
    }
    out.session_id = ids[0];
    const std::string& id = out.session_id;
    pid_t agent_pid = static_cast<pid_t>(std::strtol(agent_pid_text.c_str(), nullptr, 10));

    // Reverted kills: the operations up to the pause are the old ones.
    int64_t last_old_wall = 0;
    if (kills_agent_or_guard && plan.revert) {
      int64_t paused_by = NowUs() + 120 * 1000000LL;
      while (NowUs() < paused_by && ReadLine(ws.outside() + "/progress") != "pause" && !ProcessGone(guard_pid)) {
        SleepUs(1000);
      }
      int64_t pause_seen = WallNs();
      last_old_wall = LastOperationWall(ws.home(), id);
      // Everything written so far saved and durable, and two seconds more
      // since the last write: what the old steps wrote must survive.
      if (!UnderWatch() && !WaitForSaverIdleAfter(saver_log, last_old_wall, guard_pid, 120 * 1000000LL)) {
        fail("guard's work saver never said it was idle after the pause");
      }
      SleepUs((std::max(last_old_wall, pause_seen) + 2000000000LL - WallNs()) / 1000);
      WriteFile(ws.outside() + "/resume", "");
    }
    if (kills_agent_or_guard) {
      WaitForStep(ws.outside(), plan.kill_step, guard_pid, 120 * 1000000LL);
      SleepUs(plan.delay_us);
      out.reached = ReadLine(ws.outside() + "/progress");
      if (ProcessGone(guard_pid)) {
        ProcessResult r = guard_proc.Wait();
        fail("guard ended before the kill: " + DescribeResult(r));
        return out;
      }
    }

    std::vector<pid_t> agent_processes;
    if (target == KillTarget::kAgent) {
      if (plan.whole_agent) SignalSessionProcesses(guard_pid, id, SIGKILL);
      else kill(agent_pid, SIGKILL);
    } else if (target == KillTarget::kGuard) {
      agent_processes = Descendants(guard_pid);
      kill(guard_pid, SIGKILL);
    }
    ProcessResult r = guard_proc.Wait();
    out.guard_exit = r.exit_code;
    // Read again now that the agent is dead: it may have begun another step
    // between the read above and the kill.
    out.reached = ReadLine(ws.outside() + "/progress");
    // The sealer: guard has returned; its process seals the session now,
    // paused at the seal's start until the test lets it go.
    bool running_after_seal_kill = false;
    if (target == KillTarget::kSealer) {
      std::string sealer_text;
      int64_t paused_by = NowUs() + 60 * 1000000LL;
      while (NowUs() < paused_by && (sealer_text = ReadLine(seal_pause)).empty()) SleepUs(1000);
      pid_t sealer = static_cast<pid_t>(std::strtol(sealer_text.c_str(), nullptr, 10));
      if (sealer <= 0) {
        fail("the deferred seal never paused (GUARD_TEST_PAUSE_SEAL); guard: " + DescribeResult(r));
        return out;
      }
      // By a pidfd taken while it is paused: a kill that comes after the
      // seal ended reaches no other process that got its pid since.
      int pidfd = static_cast<int>(syscall(SYS_pidfd_open, sealer, 0));
      std::remove(seal_pause.c_str());
      SleepUs(plan.delay_us);
      if (pidfd >= 0) {
        (void)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
        struct pollfd gone = {pidfd, POLLIN, 0};
        if (poll(&gone, 1, 10000) != 1) fail("the sealer survived its SIGKILL");
        close(pidfd);
      }
      SessionMeta meta;
      running_after_seal_kill = LoadSessionMeta(ws.home() + "/sessions/" + out.session_id + "/meta.json", &meta).ok() &&
                                meta.state == SessionState::kRunning;
    }

    // Nothing of the session may run on: after a guard kill the kernel kills
    // every tracee (PTRACE_O_EXITKILL); otherwise the steps the agent had
    // started end on their own (guard's supervisor records them meanwhile).
    for (pid_t p : ProcessesWithEnv("GUARD_SESSION", id)) agent_processes.push_back(p);
    std::vector<pid_t> survivors = WaitGone(agent_processes, 5000);
    for (pid_t p : ProcessesWithEnv("GUARD_SESSION", id)) {
      if (std::find(survivors.begin(), survivors.end(), p) == survivors.end()) survivors.push_back(p);
    }
    if (!survivors.empty()) {
      fail("processes of the session survived the " + std::string(TargetName(target)) + " kill: " +
           PidList(survivors));
      for (pid_t p : survivors) kill(p, SIGKILL);
      WaitGone(survivors, 5000);
    }

    std::string meta_path = ws.home() + "/sessions/" + id + "/meta.json";
    if (target == KillTarget::kAgent || target == KillTarget::kNone) {
      // guard returns when the command's first process ends; the processes
      // it left (a step the kill interrupted) are still recorded, by guard's
      // supervisor, which seals the session once the last has ended.
      int64_t sealed_by = NowUs() + 10 * 1000000LL;
      SessionMeta meta;
      while (NowUs() < sealed_by && LoadSessionMeta(meta_path, &meta).ok() && meta.state == SessionState::kRunning) {
        SleepUs(2000);
      }
    }
    if (target == KillTarget::kAgent) {
      if (!(WIFEXITED(r.wait_status) && WEXITSTATUS(r.wait_status) == 128 + SIGKILL)) {
        fail("guard should exit 137 when its command is killed by SIGKILL: " + DescribeResult(r));
      }
    } else if (target == KillTarget::kNone || target == KillTarget::kSealer) {
      if (r.exit_code != 0) fail("the workload did not end well: " + DescribeResult(r));
    } else {
      if (!(WIFSIGNALED(r.wait_status) && WTERMSIG(r.wait_status) == SIGKILL)) {
        fail("guard was not killed by the SIGKILL sent to it: " + DescribeResult(r));
      }
      SessionMeta meta;
      Status s = LoadSessionMeta(meta_path, &meta);
      if (!s.ok()) {
        fail("meta.json after the guard kill: " + s.ToString());
      } else if (meta.state != SessionState::kRunning) {
        fail(std::string("meta.json should still say running after the guard kill, says ") +
             SessionStateName(meta.state));
      }
    }

    // The tree as the kill left it, before anything recovers the session.
    TreeSnapshot stopped = SnapshotTree(ws.tree());
    out.changed_paths = DiffSnapshots(before, stopped).size();
    SessionView journal = SessionView::Load(ws.home(), id);
    for (const Record* op : journal.Operations()) {
      if ((op->flags & kOutsideRoot) || journal.OutcomeOf(op->seq) != nullptr) continue;
      out.interrupted.push_back(std::string(OpKindName(op->kind)) + " " + Printable(op->path) +
                                (op->path2.empty() ? "" : " -> " + Printable(op->path2)));
      out.interrupted_rename = out.interrupted_rename || op->kind == OpKind::kRename || op->kind == OpKind::kExchange;
    }

    if (plan.revert) {
      // As `git checkout` and `git clean` would, or an extraction of a backup:
      // the tree before the session, every file written anew.
      WriteSnapshot(ws.tree(), before);
    }

    if (target == KillTarget::kSealer) {
      // The next command completes the seal: recovery when meta.json still
      // said running, else only the end checkpoint was left.
      std::vector<std::string> args = {"recover"};
      if (plan.recover_by_listing) args = {"sessions", "--json"};
      ProcessResult rec = RunGuardCommand(ws, args);
      std::smatch m;
      static const std::regex kLine(R"(recovered session (\S+), whose guard had stopped:.*\(([0-9.]+) s\))");
      static const std::regex kTorn(R"((\d+) torn journal bytes? dropped)");
      bool recovered = std::regex_search(rec.err, m, kLine) && m[1] == id;
      if (rec.exit_code != 0 || recovered != running_after_seal_kill) {
        fail("guard " + args[0] + (running_after_seal_kill ? " did not recover " : " recovered ") + id +
             " (meta.json said " + (running_after_seal_kill ? "running" : "sealed") + " after the kill): " +
             DescribeResult(rec));
      } else if (recovered) {
        out.recovery_seconds = std::strtod(m[2].str().c_str(), nullptr);
        std::smatch torn;
        out.torn_bytes = std::regex_search(rec.err, torn, kTorn) ? std::strtoull(torn[1].str().c_str(), nullptr, 10) : 0;
      }
      if (PathExists(ws.home() + "/sessions/" + id + "/sealing")) {
        fail("the seal's mark is still there after guard " + args[0] + ": " + DescribeResult(rec));
      }
    }
    if (target == KillTarget::kGuard) {
      // `guard recover`, or any command in the root: it recovers first.
      std::vector<std::string> args = {"recover"};
      if (plan.recover_by_listing) args = {"sessions", "--json"};
      ProcessResult rec = RunGuardCommand(ws, args);
      std::smatch m;
      static const std::regex kLine(R"(recovered session (\S+), whose guard had stopped:.*\(([0-9.]+) s\))");
      static const std::regex kTorn(R"((\d+) torn journal bytes? dropped)");
      if (rec.exit_code != 0 || !std::regex_search(rec.err, m, kLine) || m[1] != id) {
        fail("guard " + args[0] + " did not recover " + id + ": " + DescribeResult(rec));
      } else {
        out.recovery_seconds = std::strtod(m[2].str().c_str(), nullptr);
        std::smatch torn;
        out.torn_bytes = std::regex_search(rec.err, torn, kTorn) ? std::strtoull(torn[1].str().c_str(), nullptr, 10) : 0;
      }
      if (rec.err.find("journal damage") != std::string::npos) {
        fail("recovery found damage in a journal that was only cut short: " + DescribeResult(rec));
      }
    }

    std::string state = SessionStateOf(ws, id);
    std::string want_state = target == KillTarget::kAgent   ? "killed"
                             : target == KillTarget::kGuard ? "recovered"
                             : running_after_seal_kill      ? "recovered"
                                                            : "finished";
    if (state != want_state) fail("guard sessions --json says the session is '" + state + "', not " + want_state);

    if (plan.revert) {
      // The tree is as before the session: replay first, then undo.
      ProcessResult replay = RunGuardCommand(ws, {"replay", "--yes", "--session", id});
      std::vector<std::string> wrong =
          CheckReplayAfterRevert(SessionView::Load(ws.home(), id), before, stopped, SnapshotTree(ws.tree()),
                                 last_old_wall, &out.old_paths, &out.recent_paths);
      out.restore.replay_exact = wrong.empty();
      // Not required: after the revert, a path whose content guard never
      // saved holds the only copy of it, and replay rightly leaves it and
      // exits 1. What replay did is in `wrong`.
      out.restore.replay_clean = true;
      if (!out.restore.replay_exact) {
        out.restore_failures.push_back("replay after the revert did not give back the session's work" +
                                       std::string(wrong.empty() ? " cleanly" : ":\n" + Joined(wrong)) +
                                       "  guard replay: " + DescribeResult(replay));
      }
      // Undo is not checked here: after the revert, the content of a file
      // the later steps renamed before guard saved it lives only where the
      // revert put it back, and undo rightly refuses to guess. The other
      // kills of the series check undo.
      out.restore.undo_exact = out.restore.undo_clean = true;
      std::string agent_out;
      try {
        agent_out = ReadFile(ws.outside() + "/agent.out");
      } catch (const std::exception&) {
      }
      out.context += "  session " + id + "; the kill came during step " + out.reached + "; " +
                     std::to_string(out.old_paths) + " paths changed before the pause, " +
                     std::to_string(out.recent_paths) + " touched after it\n  agent output:\n" +
                     agent_out.substr(0, 2000);
      return out;
    }

    ProcessResult undo = RunGuardCommand(ws, {"undo", "--yes", "--session", id});
    std::vector<std::string> undo_diff = DiffSnapshots(before, SnapshotTree(ws.tree()));
    out.restore.undo_exact = undo_diff.empty();
    out.restore.undo_clean = undo.exit_code == 0;
    if (!out.restore.undo_exact || !out.restore.undo_clean) {
      out.restore_failures.push_back("undo did not give back the tree as it was before the session" +
                                     std::string(undo_diff.empty() ? " cleanly" : ":\n" + Joined(undo_diff)) +
                                     "  guard undo: " + DescribeResult(undo));
    }

    ProcessResult replay = RunGuardCommand(ws, {"replay", "--yes", "--session", id});
    std::vector<std::string> replay_diff = DiffSnapshots(stopped, SnapshotTree(ws.tree()));
    out.restore.replay_exact = replay_diff.empty();
    out.restore.replay_clean = replay.exit_code == 0;
    if (!out.restore.replay_exact || !out.restore.replay_clean) {
      out.restore_failures.push_back("replay did not give back the tree as the kill left it" +
                                     std::string(replay_diff.empty() ? " cleanly" : ":\n" + Joined(replay_diff)) +
                                     "  guard replay: " + DescribeResult(replay));
    }

    std::string agent_out;
    try {
      agent_out = ReadFile(ws.outside() + "/agent.out");
    } catch (const std::exception&) {
    }
    out.context += "  session " + id + "; the kill came during step " + out.reached + "\n  agent output:\n" +
                   agent_out.substr(0, 2000);
  } catch (const std::exception& e) {
    fail(std::string("exception: ") + e.what());
  }
  return out;
}

bool ClassifiedKill::Explained(bool RestoreChecks::*check) const {
  if (outcome.restore.*check) return true;
  for (const KillOutcome& c : controls) {
    if (c.durability_failures.empty() && !(c.restore.*check)) return true;
  }
  return false;
}

bool ClassifiedKill::LostByKill() const {
  return Inexact() || !Explained(&RestoreChecks::undo_clean) || !Explained(&RestoreChecks::replay_clean);
}

bool ClassifiedKill::Inexact() const {
  return !Explained(&RestoreChecks::undo_exact) || !Explained(&RestoreChecks::replay_exact);
}

namespace {

ClassifiedKill Classify(KillOutcome o) {
  ClassifiedKill c;
  c.outcome = std::move(o);
  const KillOutcome& k = c.outcome;
  if (k.restore.all() || k.plan.target == KillTarget::kNone) return c;
  // Control runs: the steps that had begun when the kill came, and one
  // fewer (the kill may have come before that step changed anything).
  size_t begun = k.reached == "done" || k.reached.empty() ? SIZE_MAX
                                                          : std::strtoull(k.reached.c_str(), nullptr, 10) + 1;
  std::vector<size_t> cuts = {begun};
  if (begun != SIZE_MAX && begun > 0) cuts.push_back(begun - 1);
  for (size_t cut : cuts) c.controls.push_back(RunKillScenario(KillTarget::kNone, k.plan.seed, k.plan.mix, cut));
  return c;
}

std::string Indented(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& i : items) out += "\n  " + i;
  return out;
}

std::string ControlReport(const ClassifiedKill& c) {
  std::string out;
  for (const KillOutcome& control : c.controls) {
    std::string cut = control.plan.max_steps == SIZE_MAX ? "all steps"
                                                         : "the first " + std::to_string(control.plan.max_steps) + " steps";
    std::string verdict = control.restore.all() ? "undo and replay exact and clean" : control.restore.Failed();
    out += "\n  control run (" + cut + ", no kill): " + verdict + Indented(control.durability_failures);
  }
  return out;
}

void Report(const KillSeries& series) {
  static std::set<const KillSeries*> reported;
  if (!reported.insert(&series).second) return;
  std::string line = series.Summary();
  BOOST_TEST_MESSAGE(line);
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

}  // namespace

std::string KillSeries::Summary() const {
  int reverted = 0;
  size_t old_paths = 0, recent_paths = 0;
  for (const ClassifiedKill& c : kills) {
    reverted += c.outcome.plan.revert;
    old_paths += c.outcome.old_paths;
    recent_paths += c.outcome.recent_paths;
  }
  int survived = 0, lost = 0, lost_to_rename = 0, unclean = 0, restore_bugs = 0, wrong_end = 0, idle = 0, torn = 0,
      recoveries = 0, in_call = 0;
  double max_recovery = -1, total_recovery = 0;
  std::string max_recovery_plan;
  size_t changed = 0;
  for (const ClassifiedKill& c : kills) {
    const KillOutcome& o = c.outcome;
    survived += o.durability_failures.empty() && !c.LostByKill();
    lost += c.Inexact();
    lost_to_rename += c.Inexact() && o.interrupted_rename;
    unclean += c.LostByKill() && !c.Inexact();
    in_call += !o.interrupted.empty();
    restore_bugs += c.RestoreBug();
    wrong_end += !o.durability_failures.empty();
    idle += o.reached == "done";
    torn += o.torn_bytes > 0;
    changed += o.changed_paths;
    if (o.recovery_seconds >= 0) {
      ++recoveries;
      total_recovery += o.recovery_seconds;
    }
    if (o.recovery_seconds > max_recovery) {
      max_recovery = o.recovery_seconds;
      max_recovery_plan = DescribePlan(o.plan);
    }
  }
  std::ostringstream os;
  os << TargetName(target) << " kills, mix " << WorkloadMixName(mix) << ": " << kills.size() << " kills, " << survived
     << " survived, " << lost << " lost work (undo or replay inexact; " << lost_to_rename
     << " of them after interrupting a rename), " << unclean
     << " restored exactly but exited non-zero, " << wrong_end
     << " ended wrongly (exit, state, survivors, recovery), " << restore_bugs
     << " hit a restore bug that shows without a kill too; " << in_call << " came inside a call; "
     << kills.size() - static_cast<size_t>(idle)
     << " landed mid-workload, " << idle << " after the last step; " << changed
     << " changed paths undone and replayed";
  if (target == KillTarget::kSealer) {
    os << "; " << recoveries << " sealers killed before meta.json (recovered, "
       << (recoveries ? total_recovery / recoveries : 0) << " s on average), " << kills.size() - recoveries
       << " after it (the next command finished the seal)";
  }
  if (target == KillTarget::kGuard) {
    os << "; " << reverted << " trees reverted after the kill and replayed (" << old_paths
       << " paths written 2 s or more before the kill, " << recent_paths << " after)";
    os << "; " << torn << " journals had a torn tail; " << recoveries << " recoveries took "
       << (recoveries ? total_recovery / recoveries : 0) << " s on average, the longest " << max_recovery << " s ("
       << max_recovery_plan << ")";
  }
  return os.str();
}

const KillSeries& RunKillSeries(KillTarget target, WorkloadMix mix, uint64_t first_seed, int count) {
  static std::map<std::tuple<int, int, uint64_t, int>, KillSeries> done;
  auto key = std::make_tuple(static_cast<int>(target), static_cast<int>(mix), first_seed, count);
  if (auto it = done.find(key); it != done.end()) return it->second;

  uint64_t offset = 0;
  if (const char* s = std::getenv("GUARD_DURABILITY_SEED"); s != nullptr && *s != '\0') {
    offset = std::strtoull(s, nullptr, 10);
  }
  int n = count;
  if (const char* s = std::getenv("GUARD_DURABILITY_KILLS"); s != nullptr && *s != '\0') n = std::atoi(s);
  KillSeries& series = done[key];
  series.target = target;
  series.mix = mix;
  if (const char* s = std::getenv("GUARD_DURABILITY_NO_KILL"); s != nullptr && *s == '1') {
    series.target = KillTarget::kNone;
  }
  for (int i = 0; i < n; ++i) {
    uint64_t seed = first_seed + offset + static_cast<uint64_t>(i);
    series.kills.push_back(Classify(RunKillScenario(series.target, seed, mix)));
  }
  return series;
}

void ExpectKillCheck(const KillSeries& series, KillCheck check) {
  for (const ClassifiedKill& c : series.kills) {
    const KillOutcome& o = c.outcome;
    std::string plan = DescribePlan(o.plan);
    if (check == KillCheck::kSessionEnd) {
      BOOST_TEST(o.durability_failures.empty(),
                 plan << ":" << Indented(o.durability_failures) << "\n  context: " << o.context);
      continue;
    }
    bool ok = check == KillCheck::kUndoExact     ? c.Explained(&RestoreChecks::undo_exact)
              : check == KillCheck::kReplayExact ? c.Explained(&RestoreChecks::replay_exact)
                                                 : c.Explained(&RestoreChecks::undo_clean) &&
                                                       c.Explained(&RestoreChecks::replay_clean);
    BOOST_TEST(ok, plan << ": " << o.restore.Failed() << " after the kill" << Indented(o.restore_failures)
                        << ControlReport(c) << "\n  interrupted calls:" << Indented(o.interrupted)
                        << "\n  context: " << o.context);
  }
  Report(series);
}

void ExpectRestoresExactEvenWithoutKills(const KillSeries& series) {
  for (const ClassifiedKill& c : series.kills) {
    const KillOutcome& o = c.outcome;
    BOOST_TEST(o.restore.all(), DescribePlan(o.plan) << ": " << o.restore.Failed() << Indented(o.restore_failures)
                                                     << ControlReport(c) << "\n  interrupted calls:"
                                                     << Indented(o.interrupted) << "\n  context: " << o.context);
  }
  Report(series);
}

}  // namespace guard::e2e
