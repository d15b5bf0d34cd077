// The mark channel (session/mark_channel.h, mark_listener.h): requests are
// decoded exactly or refused, a descendant of the listening process gets
// its mark only after the barrier has returned, and a process that is no
// descendant (this test process asking itself) or a failed barrier makes
// no mark. The end-to-end twin: tests/e2e/mark_channel_test.cc.
#define BOOST_TEST_MODULE mark_channel
#include <boost/test/unit_test.hpp>

#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "common/coding.h"
#include "supervisor/session/mark_channel.h"
#include "supervisor/session/mark_listener.h"

namespace guard {
namespace {

std::string Header(const char* magic, uint32_t version, uint32_t flags, uint32_t length) {
  std::string out(magic, 4);
  PutFixed32(&out, version);
  PutFixed32(&out, flags);
  PutFixed32(&out, length);
  return out;
}

struct DecodeCase {
  const char* what;
  std::string bytes;
  bool ok;
  std::string label;
  bool step;
};

// The peer check's walk over a process table (the platform's ParentOf
// on Linux and macOS alike): a parent, a grandparent, not a sibling nor a
// child, a process that is gone, and a table read mid-change that loops.
BOOST_AUTO_TEST_CASE(AncestryIsWalkedOverAProcessTable) {
  const std::map<pid_t, pid_t> table = {{100, 1}, {200, 100}, {300, 200}, {301, 200}, {400, 300},
                                        {500, 600}, {600, 500}};  // 500 and 600: a loop
  auto parent_of = [&table](pid_t pid) {
    auto it = table.find(pid);
    return it == table.end() ? -1 : it->second;
  };
  struct Case {
    pid_t pid, ancestor;
    bool descends;
  };
  const std::vector<Case> cases = {
      {300, 200, true},  {400, 200, true},  {400, 100, true},  {301, 300, false}, {200, 300, false},
      {300, 300, false}, {999, 100, false}, {500, 100, false}, {500, 600, true},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.pid << " from " << c.ancestor) {
      BOOST_TEST(DescendsFrom(c.pid, c.ancestor, parent_of) == c.descends);
    }
  }
}

BOOST_AUTO_TEST_CASE(RequestsDecodeExactlyOrAreRefused) {
  const std::vector<DecodeCase> cases = {
      {"a turn mark", Header("GMK1", 1, 0, 5) + "hello", true, "hello", false},
      {"a step without a label", Header("GMK1", 1, 1, 0), true, "", true},
      {"the longest label", Header("GMK1", 1, 0, 512) + std::string(512, 'x'), true, std::string(512, 'x'), false},
      {"a label too long", Header("GMK1", 1, 0, 513) + std::string(513, 'x'), false, "", false},
      {"another magic", Header("GMK2", 1, 0, 0), false, "", false},
      {"another version", Header("GMK1", 2, 0, 0), false, "", false},
      {"an unknown flag", Header("GMK1", 1, 2, 0), false, "", false},
      {"a short label", Header("GMK1", 1, 0, 5) + "hell", false, "", false},
      {"a byte after it", Header("GMK1", 1, 0, 5) + "hello!", false, "", false},
      {"a short header", std::string("GMK1\1\0\0", 7), false, "", false},
  };
  for (const DecodeCase& c : cases) {
    MarkRequest got;
    Status s = DecodeMarkRequest(c.bytes, &got);
    BOOST_TEST(s.ok() == c.ok, c.what << ": " << s.ToString());
    if (s.ok() && c.ok) {
      BOOST_TEST(got.label == c.label, c.what);
      BOOST_TEST(got.step == c.step, c.what);
    }
    // The size the listener reads is the request's whole size, or 0.
    const size_t size = MarkRequestSize(c.bytes.substr(0, std::min(c.bytes.size(), kMarkRequestHeader)));
    if (c.ok) BOOST_TEST(size == c.bytes.size(), c.what);
  }
  MarkRequest r;
  r.label = "ünïcode label";
  r.step = true;
  MarkRequest back;
  BOOST_REQUIRE(DecodeMarkRequest(EncodeMarkRequest(r), &back).ok());
  BOOST_TEST(back.label == r.label);
  BOOST_TEST(back.step);
}

// The listener with hooks that write down what happened, in order.
struct Recorded {
  std::mutex mu;
  std::vector<std::string> events;
  void Add(const std::string& e) {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back(e);
  }
};

std::shared_ptr<spdlog::logger> NullLog() {
  return std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
}

// Forks a child that asks for a mark; returns its answer, carried by the
// child's exit code as 200 + answer (a mark's number is small, an errno
// below 200).
int ChildAsks(const std::string& label, bool step) {
  pid_t pid = fork();
  if (pid == 0) {
    MarkRequest r;
    r.label = label;
    r.step = step;
    _exit(static_cast<int>(200 + AskForMark(r)));
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) - 200 : -1000;
}

BOOST_AUTO_TEST_CASE(ADescendantGetsItsMarkAfterTheBarrier) {
  Recorded rec;
  long next = 0;
  MarkListener::Hooks hooks;
  hooks.barrier = [&] {
    rec.Add("barrier");
    return Status::Ok();
  };
  hooks.mark = [&](pid_t pid, std::string_view label, bool step) {
    rec.Add("mark " + std::string(label) + (step ? " step" : "") + (pid != getpid() ? " by child" : " by self"));
    return ++next;
  };
  MarkListener listener(std::move(hooks), NullLog());
  BOOST_REQUIRE(listener.Start().ok());
  BOOST_TEST(ChildAsks("first", false) == 1);
  BOOST_TEST(ChildAsks("second", true) == 2);
  listener.Stop();
  std::vector<std::string> expected = {"barrier", "mark first by child", "barrier", "mark second step by child"};
  BOOST_TEST(rec.events == expected);
  BOOST_TEST(listener.marks() == 2u);
}

BOOST_AUTO_TEST_CASE(AProcessThatIsNoDescendantIsRefusedAndNothingIsMarked) {
  Recorded rec;
  MarkListener::Hooks hooks;
  hooks.barrier = [&] {
    rec.Add("barrier");
    return Status::Ok();
  };
  hooks.mark = [&](pid_t, std::string_view, bool) {
    rec.Add("mark");
    return 1L;
  };
  MarkListener listener(std::move(hooks), NullLog());
  BOOST_REQUIRE(listener.Start().ok());
  // This process asks its own socket: it is no descendant of itself.
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string name = MarkSocketName(getpid());
  std::memcpy(addr.sun_path, name.data(), name.size());
  BOOST_REQUIRE(connect(fd, reinterpret_cast<const sockaddr*>(&addr),
                        static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size())) == 0);
  MarkRequest r;
  r.label = "forged";
  const std::string bytes = EncodeMarkRequest(r);
  BOOST_REQUIRE(write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  char answer[8];
  BOOST_REQUIRE(read(fd, answer, sizeof answer) == 8);
  close(fd);
  BOOST_TEST(static_cast<int64_t>(DecodeFixed64(answer)) == -EPERM);
  listener.Stop();
  BOOST_TEST(rec.events.empty());
  BOOST_TEST(listener.refused() == 1u);
}

BOOST_AUTO_TEST_CASE(AFailedBarrierMakesNoMark) {
  Recorded rec;
  MarkListener::Hooks hooks;
  hooks.barrier = [] { return Status::IOError("the ring is stuck"); };
  hooks.mark = [&](pid_t, std::string_view, bool) {
    rec.Add("mark");
    return 1L;
  };
  MarkListener listener(std::move(hooks), NullLog());
  BOOST_REQUIRE(listener.Start().ok());
  BOOST_TEST(ChildAsks("late", false) == -ETIMEDOUT);
  listener.Stop();
  BOOST_TEST(rec.events.empty());
}

BOOST_AUTO_TEST_CASE(WithNobodyListeningTheAskIsNotInsideASession) {
  MarkRequest r;
  r.label = "nobody";
  BOOST_TEST(AskForMark(r) == -ESRCH);
}

}  // namespace
}  // namespace guard
