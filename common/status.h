// Status: the result of an operation that can fail, in place of exceptions.
// Modelled on LevelDB's include/leveldb/status.h. errno is mapped to a code in
// exactly one place (Status::FromErrno).
#pragma once

#include <string>
#include <string_view>

namespace guard {

class [[nodiscard]] Status {
 public:
  enum class Code {
    kOk = 0,
    kNotFound,
    kCorruption,
    kIOError,
    kNoSpace,
    kInvalidArgument,
    kUnsupported,
    kPermissionDenied,
  };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status NotFound(std::string_view msg) { return Status(Code::kNotFound, msg, 0); }
  static Status Corruption(std::string_view msg) { return Status(Code::kCorruption, msg, 0); }
  static Status InvalidArgument(std::string_view msg) {
    return Status(Code::kInvalidArgument, msg, 0);
  }
  static Status Unsupported(std::string_view msg) { return Status(Code::kUnsupported, msg, 0); }
  static Status IOError(std::string_view msg) { return Status(Code::kIOError, msg, 0); }
  // A full disk, said in words the user can act on (errno ENOSPC).
  static Status NoSpace(std::string_view msg) { return Status(Code::kNoSpace, msg, 28 /* ENOSPC */); }
  // Maps errno to a code: ENOENT -> kNotFound, ENOSPC/EDQUOT -> kNoSpace,
  // EACCES/EPERM/EROFS -> kPermissionDenied, anything else -> kIOError.
  // The message reads "<context>: <strerror(err)>".
  static Status FromErrno(std::string_view context, int err);

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsCorruption() const { return code_ == Code::kCorruption; }
  bool IsNoSpace() const { return code_ == Code::kNoSpace; }
  // The errno this status came from, or 0.
  int err() const { return err_; }
  const std::string& message() const { return msg_; }
  std::string ToString() const;

 private:
  Status(Code code, std::string_view msg, int err) : code_(code), msg_(msg), err_(err) {}
  Code code_ = Code::kOk;
  std::string msg_;
  int err_ = 0;
};

}  // namespace guard

// Returns from the enclosing function when `expr` is not ok.
#define GUARD_RETURN_IF_ERROR(expr)          \
  do {                                       \
    ::guard::Status guard_status_ = (expr);  \
    if (!guard_status_.ok()) return guard_status_; \
  } while (0)
