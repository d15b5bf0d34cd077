#include "supervisor/base/session_logger.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/null_sink.h>

#include <cstdlib>

namespace guard {

std::shared_ptr<spdlog::logger> MakeSessionLogger(const std::string& session_dir,
                                                  const std::string& session_id) {
  std::shared_ptr<spdlog::logger> log;
  try {
    auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(session_dir + "/guard.log");
    log = std::make_shared<spdlog::logger>("guard", sink);
  } catch (const spdlog::spdlog_ex&) {
    log = std::make_shared<spdlog::logger>("guard", std::make_shared<spdlog::sinks::null_sink_mt>());
  }
  log->set_pattern("[%Y-%m-%dT%H:%M:%S.%e] [%l] [session " + session_id + "] %v");
  log->set_level(getenv("GUARD_DEBUG") ? spdlog::level::debug : spdlog::level::info);
  if (getenv("GUARD_DEBUG")) log->flush_on(spdlog::level::debug);
  log->flush_on(spdlog::level::warn);
  return log;
}

}  // namespace guard
