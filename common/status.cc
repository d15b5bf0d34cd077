#include "common/status.h"

#include <cerrno>
#include <cstring>

namespace guard {

Status Status::FromErrno(std::string_view context, int err) {
  Code code = Code::kIOError;
  switch (err) {
    case ENOENT: code = Code::kNotFound; break;
    case ENOSPC:
    case EDQUOT: code = Code::kNoSpace; break;
    case EACCES:
    case EPERM:
    case EROFS: code = Code::kPermissionDenied; break;
    default: break;
  }
  std::string msg(context);
  msg += ": ";
  msg += std::strerror(err);
  return Status(code, msg, err);
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return msg_;
}

}  // namespace guard
