// A capture core over a temporary tree, for unit tests of the core and of
// the producers above it (capture_core_test, fed_sink_test): a root, a state
// directory, an in-memory log over a real store (fake_capture_log.h), and a
// Capture of the root with a null logger.
#pragma once

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/stat.h>

#include <memory>
#include <string>

#include <boost/test/unit_test.hpp>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "common/file_io.h"
#include "common/unique_fd.h"
#include "supervisor/capture/capture.h"
#include "tests/unit/capture/fake_capture_log.h"
#include "tests/unit/support/temp_dir.h"

namespace guard::testing {

// Writes `data` over `path` in place (O_TRUNC: the same inode, as the calls
// the tests describe leave it).
inline bool WriteStringToFile(const std::string& path, const std::string& data) {
  UniqueFd fd;
  if (!OpenFile(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644, &fd).ok()) return false;
  return WriteAll(fd.get(), data.data(), data.size(), path).ok();
}

// A verdict in one word, for tables: run, watch, settle, retry, wait:TID,
// deny:ERRNO.
inline std::string VerdictWord(const Verdict& v) {
  if (v.deny_errno != 0) return "deny:" + std::to_string(v.deny_errno);
  if (v.wait_for != 0) return "wait:" + std::to_string(v.wait_for);
  if (v.retry_later) return "retry";
  if (v.watch_exit) return "watch";
  if (v.settle_later) return "settle";
  return "run";
}

struct CoreUnderTest {
  explicit CoreUnderTest(const std::string& prefix) : dir(prefix) {
    root = dir.path + "/root";
    state = dir.path + "/state";
    BOOST_REQUIRE(mkdir(root.c_str(), 0755) == 0);
    BOOST_REQUIRE(mkdir(state.c_str(), 0700) == 0);
    log = std::make_unique<FakeCaptureLog>(state + "/store");
    CaptureConfig config;
    config.root = root;
    config.state_dir = state;
    logger = std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
    capture = std::make_unique<Capture>(config, log.get(), logger);
  }
  // The call VERB P [Q] of thread `tid` as a producer describes it (not
  // holdable): unlink, rmdir, mkdir, creat, trunc, chmod, rename,
  // noreplace, exchange, link.
  Mutation Call(pid_t tid, const std::string& verb, const std::string& p, const std::string& q) const {
    Mutation m;
    m.tid = tid;
    m.comm = "test";
    m.abs = Abs(p);
    if (!q.empty()) m.abs2 = Abs(q), m.has2 = true;
    MutationRequest& r = m.req;
    r.syscall = "test";
    r.path = m.abs;
    r.path2 = m.abs2;
    if (verb == "unlink") r.action = MutationRequest::Action::kUnlink;
    if (verb == "rmdir") r.action = MutationRequest::Action::kRmdir;
    if (verb == "mkdir") r.action = MutationRequest::Action::kMkdir, r.mode = 0755;
    if (verb == "creat") r.action = MutationRequest::Action::kOpen, r.flags = O_WRONLY | O_CREAT | O_TRUNC, r.mode = 0644;
    if (verb == "trunc") r.action = MutationRequest::Action::kOpen, r.flags = O_WRONLY | O_TRUNC;
    if (verb == "chmod") r.action = MutationRequest::Action::kChmod, r.mode = 0600;
    if (verb == "rename") r.action = MutationRequest::Action::kRename;
    if (verb == "noreplace") r.action = MutationRequest::Action::kRename, r.flags = RENAME_NOREPLACE;
    if (verb == "exchange") r.action = MutationRequest::Action::kRename, r.flags = RENAME_EXCHANGE;
    if (verb == "link") r.action = MutationRequest::Action::kLink;
    return m;
  }

  // Root-relative `p`, or with a leading '!' relative to guard's state.
  std::string Abs(const std::string& p) const { return p[0] == '!' ? state + "/" + p.substr(1) : root + "/" + p; }

  TempDir dir;
  std::string root, state;
  std::unique_ptr<FakeCaptureLog> log;
  std::shared_ptr<spdlog::logger> logger;
  std::unique_ptr<Capture> capture;
};

}  // namespace guard::testing
