#include "supervisor/base/fd_log_sink.h"

#include <fcntl.h>

#include "common/file_io.h"

namespace guard {

Status FdLogSink::Open(const std::string& path, std::shared_ptr<FdLogSink>* out) {
  UniqueFd fd;
  // OpenFile adds O_CLOEXEC.
  GUARD_RETURN_IF_ERROR(OpenFile(path, O_WRONLY | O_CREAT | O_APPEND, 0600, &fd));
  *out = std::make_shared<FdLogSink>(std::move(fd));
  return Status::Ok();
}

void FdLogSink::sink_it_(const spdlog::details::log_msg& msg) {
  spdlog::memory_buf_t line;
  formatter_->format(msg, line);
  // A log line that cannot be written is lost: there is nowhere better to
  // say so (stderr belongs to the command's terminal).
  (void)WriteAll(fd_.get(), line.data(), line.size(), "guard.log");
}

}  // namespace guard
