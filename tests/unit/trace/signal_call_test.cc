// The decision on a call that could stop or kill guard (signal_call.h),
// table-driven over a fake system: (call, args) -> verdict; and the group
// signal sent to every member but guard. Twin of e2e supervisor_signals_test.
#define BOOST_TEST_MODULE signal_call
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <cerrno>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "supervisor/trace/signal_call.h"

namespace guard {
namespace {

// guard: processes 100 (threads 100, 101, 102) and 90 (the front), in
// group 90 with the command 200 (thread 201) and its child 210; 300 set up
// a group of its own; 400 another user's process in group 400.
class FakeFacts : public ProcessFacts {
 public:
  pid_t ThreadGroupOf(pid_t tid) override {
    auto it = tgid_.find(tid);
    return it == tgid_.end() ? -1 : it->second;
  }
  pid_t GroupOf(pid_t pid) override {
    auto it = pgid_.find(pid);
    return it == pgid_.end() ? -1 : it->second;
  }
  pid_t PidfdTarget(pid_t tid, int fd) override {
    auto it = pidfds_.find({tid, fd});
    return it == pidfds_.end() ? -1 : it->second;
  }
  bool IsGuards(pid_t tgid) override { return tgid == 100 || tgid == 90; }
  std::vector<pid_t> GroupMembers(pid_t pgid) override {
    std::vector<pid_t> members;
    for (auto [pid, group] : pgid_) {
      if (group == pgid) members.push_back(pid);
    }
    // A member forked while the group is read: seen on the next pass.
    if (pgid == 90 && !joined_) {
      joined_ = true;
      tgid_[220] = 220, pgid_[220] = 90;
    }
    return members;
  }
  int Send(pid_t pid, int sig) override {
    sent.emplace_back(pid, sig);
    return pid == 400 ? EPERM : 0;
  }

  std::vector<std::pair<pid_t, int>> sent;

 private:
  std::map<pid_t, pid_t> tgid_ = {{100, 100}, {101, 100}, {102, 100}, {90, 90}, {200, 200},
                                  {201, 200}, {210, 210}, {300, 300}, {400, 400}};
  std::map<pid_t, pid_t> pgid_ = {{100, 90}, {90, 90}, {200, 90}, {210, 90}, {300, 300}, {400, 400}};
  std::map<std::pair<pid_t, int>, pid_t> pidfds_ = {{{200, 5}, 100}, {{200, 6}, 210}, {{300, 7}, 300}};
  bool joined_ = false;
};

struct Row {
  const char* what;
  long nr;
  std::vector<uint64_t> args;
  pid_t caller;
  SignalVerdict verdict;
};

uint64_t Neg(int v) { return static_cast<uint64_t>(static_cast<int64_t>(v)); }

BOOST_AUTO_TEST_CASE(EachCallIsDecidedByWhomItReaches) {
  const uint64_t kLimit = 0x1000;  // a pointer: only whether it is NULL counts
  const std::vector<Row> rows = {
      {"kill of the supervisor", SYS_kill, {100, SIGSTOP}, 200, SignalVerdict::kRefuse},
      {"kill of the front", SYS_kill, {90, SIGKILL}, 200, SignalVerdict::kRefuse},
      {"kill of a supervisor's thread id", SYS_kill, {102, SIGSTOP}, 200, SignalVerdict::kRefuse},
      {"kill of the supervisor, high bits set", SYS_kill, {(1ull << 32) | 100, SIGSTOP}, 200, SignalVerdict::kRefuse},
      {"kill of a sibling", SYS_kill, {210, SIGSTOP}, 200, SignalVerdict::kRun},
      {"kill of a pid nobody has", SYS_kill, {12345, SIGKILL}, 200, SignalVerdict::kRun},
      {"kill of every process", SYS_kill, {Neg(-1), SIGKILL}, 200, SignalVerdict::kRefuse},
      {"kill of the caller's group, guard's", SYS_kill, {0, SIGSTOP}, 201, SignalVerdict::kGroupButGuard},
      {"kill of guard's group by number", SYS_kill, {Neg(-90), SIGKILL}, 300, SignalVerdict::kGroupButGuard},
      {"kill of the caller's own group", SYS_kill, {0, SIGKILL}, 300, SignalVerdict::kRun},
      {"kill of another group", SYS_kill, {Neg(-400), SIGKILL}, 200, SignalVerdict::kRun},
      {"tkill of a supervisor's thread", SYS_tkill, {101, SIGSTOP}, 200, SignalVerdict::kRefuse},
      {"tkill of a command's thread", SYS_tkill, {201, SIGSTOP}, 200, SignalVerdict::kRun},
      {"tgkill naming the supervisor", SYS_tgkill, {100, 101, SIGKILL}, 200, SignalVerdict::kRefuse},
      {"tgkill with another group's id", SYS_tgkill, {200, 101, SIGKILL}, 200, SignalVerdict::kRefuse},
      {"tgkill of the command's thread", SYS_tgkill, {200, 201, SIGKILL}, 210, SignalVerdict::kRun},
      {"rt_sigqueueinfo of the supervisor", SYS_rt_sigqueueinfo, {100, SIGSTOP, 0}, 200, SignalVerdict::kRefuse},
      {"rt_sigqueueinfo of a sibling", SYS_rt_sigqueueinfo, {210, SIGSTOP, 0}, 200, SignalVerdict::kRun},
      {"rt_tgsigqueueinfo of a supervisor's thread", SYS_rt_tgsigqueueinfo, {100, 102, SIGKILL, 0}, 200,
       SignalVerdict::kRefuse},
      {"pidfd_send_signal to the supervisor", SYS_pidfd_send_signal, {5, SIGKILL, 0, 0}, 200, SignalVerdict::kRefuse},
      {"pidfd_send_signal to a sibling", SYS_pidfd_send_signal, {6, SIGKILL, 0, 0}, 200, SignalVerdict::kRun},
      {"pidfd_send_signal to a sibling's group (guard's)", SYS_pidfd_send_signal, {6, SIGSTOP, 0, 1u << 2}, 200,
       SignalVerdict::kGroupButGuard},
      {"pidfd_send_signal through no pidfd", SYS_pidfd_send_signal, {9, SIGKILL, 0, 0}, 200, SignalVerdict::kRun},
      {"prlimit64 of the supervisor", SYS_prlimit64, {100, RLIMIT_CPU, kLimit, 0}, 200, SignalVerdict::kRefuse},
      {"prlimit64 of a supervisor's thread", SYS_prlimit64, {101, RLIMIT_FSIZE, kLimit, 0}, 200,
       SignalVerdict::kRefuse},
      {"prlimit64 reading the supervisor's", SYS_prlimit64, {100, RLIMIT_CPU, 0, kLimit}, 200, SignalVerdict::kRun},
      {"prlimit64 of the caller", SYS_prlimit64, {0, RLIMIT_CPU, kLimit, 0}, 200, SignalVerdict::kRun},
      {"prlimit64 of a sibling", SYS_prlimit64, {210, RLIMIT_CPU, kLimit, 0}, 200, SignalVerdict::kRun},
  };
  for (const Row& row : rows) {
    BOOST_TEST_CONTEXT(row.what) {
      FakeFacts facts;
      uint64_t args[6] = {};
      for (size_t i = 0; i < row.args.size(); ++i) args[i] = row.args[i];
      BOOST_TEST(IsGuardReachingCall(row.nr));
      SignalDecision d = DecideSignalCall(row.nr, args, row.caller, facts);
      BOOST_TEST(static_cast<int>(d.verdict) == static_cast<int>(row.verdict));
      if (d.verdict == SignalVerdict::kGroupButGuard) {
        BOOST_TEST(d.group == 90);
        BOOST_TEST(d.sig == static_cast<int>(row.args[1]));
      }
      BOOST_TEST(facts.sent.empty());  // deciding signals nobody
    }
  }
}

BOOST_AUTO_TEST_CASE(OtherCallsAreNotThisDecisions) {
  for (long nr : {SYS_openat, SYS_getpid, SYS_setpriority, SYS_ptrace}) BOOST_TEST(!IsGuardReachingCall(nr));
}

BOOST_AUTO_TEST_CASE(AGroupSignalReachesEveryMemberButGuardOnceEachJoinersIncluded) {
  FakeFacts facts;
  BOOST_TEST(SignalGroupButGuard(90, SIGSTOP, facts) == 0);
  std::set<pid_t> got;
  for (auto [pid, sig] : facts.sent) {
    BOOST_TEST(sig == SIGSTOP);
    BOOST_TEST(got.insert(pid).second, pid << " signalled twice");
  }
  // 220 joined while the group was read; 100 and 90 are guard's.
  BOOST_TEST((got == std::set<pid_t>{200, 210, 220}));
}

BOOST_AUTO_TEST_CASE(AGroupOfGuardAloneOrOfProcessesItMayNotSignalGivesTheirError) {
  FakeFacts facts;
  BOOST_TEST(SignalGroupButGuard(400, SIGKILL, facts) == EPERM);
  BOOST_TEST(SignalGroupButGuard(777, SIGKILL, facts) == EPERM);  // nobody but (here: not even) guard
}

}  // namespace
}  // namespace guard
