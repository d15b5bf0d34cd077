#include "supervisor/base/session_logger.h"

#include <spdlog/sinks/null_sink.h>

#include <cstdlib>

#include "supervisor/base/fd_log_sink.h"

namespace guard {

std::shared_ptr<spdlog::logger> MakeSessionLogger(const std::string& session_dir,
                                                  const std::string& session_id) {
  std::shared_ptr<spdlog::logger> log;
  // Not spdlog's file sink: its fd would leak into the command (fd_log_sink.h).
  std::shared_ptr<FdLogSink> sink;
  if (FdLogSink::Open(session_dir + "/guard.log", &sink).ok()) {
    log = std::make_shared<spdlog::logger>("guard", sink);
  } else {
    log = std::make_shared<spdlog::logger>("guard", std::make_shared<spdlog::sinks::null_sink_mt>());
  }
  log->set_pattern("[%Y-%m-%dT%H:%M:%S.%e] [%l] [session " + session_id + "] %v");
  log->set_level(getenv("GUARD_DEBUG") ? spdlog::level::debug : spdlog::level::info);
  if (getenv("GUARD_DEBUG")) log->flush_on(spdlog::level::debug);
  log->flush_on(spdlog::level::warn);
  return log;
}

}  // namespace guard
