// The session's own log (sessions/<id>/guard.log): guard's warnings and
// errors, never the agent's terminal. Every line carries the session id.
#pragma once

#include <memory>
#include <string>

#include <spdlog/logger.h>

namespace guard {

std::shared_ptr<spdlog::logger> MakeSessionLogger(const std::string& session_dir,
                                                  const std::string& session_id);

}  // namespace guard
