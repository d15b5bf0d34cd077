// FdLogSink: an spdlog sink that appends each formatted line to a file
// descriptor guard owns, opened O_CLOEXEC.
//
// Why not spdlog's basic_file_sink: it opens its file with fopen(3), without
// close-on-exec (SPDLOG_PREVENT_CHILD_FD is a compile-time switch of the
// library, and Debian's packaged spdlog is built without it), so the traced
// command would inherit guard's log as an open fd and could write forged
// lines into it. Every fd guard holds across the launch is close-on-exec.
//
// Each line is one write(2) on an O_APPEND fd: there is no user-space buffer,
// so flush() has nothing to do and a crash loses no line already logged.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include <spdlog/sinks/base_sink.h>

#include "common/status.h"
#include "common/unique_fd.h"

namespace guard {

class FdLogSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  // Opens (creating with mode 0600) `path` for appending, close-on-exec.
  static Status Open(const std::string& path, std::shared_ptr<FdLogSink>* out);
  explicit FdLogSink(UniqueFd fd) : fd_(std::move(fd)) {}

  int fd() const { return fd_.get(); }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override {}

 private:
  UniqueFd fd_;
};

}  // namespace guard
