#include "supervisor/review/review_options.h"

#include <unistd.h>

#include <charconv>
#include <cstdlib>

#include "common/session_marks.h"
#include "supervisor/base/path_escape.h"
#include "supervisor/review/session_changes.h"

namespace guard {

bool UseColor(ColorWhen when, int fd) {
  if (when != ColorWhen::kAuto) return when == ColorWhen::kAlways;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && *no_color != '\0') return false;
  return ::isatty(fd) == 1;
}

bool ParseColorWhen(const std::string& s, ColorWhen* out) {
  if (s == "auto")
    *out = ColorWhen::kAuto;
  else if (s == "always")
    *out = ColorWhen::kAlways;
  else if (s == "never")
    *out = ColorWhen::kNever;
  else
    return false;
  return true;
}

Status ResolveReviewTo(const SessionHistory& history, const std::string& spec, uint64_t* to_seq,
                       std::string* label) {
  if (spec.empty()) {
    *to_seq = kSessionEnd;
    *label = "at the end";
    return Status::Ok();
  }
  if (!IsMarkSpec(spec)) {
    const char* end = spec.data() + spec.size();
    if (std::from_chars(spec.data(), end, *to_seq).ptr != end || *to_seq == kSessionEnd) {
      return Status::InvalidArgument("--to " + spec + ": not an operation's sequence number");
    }
    *label = "after operation " + spec;
    return Status::Ok();
  }
  size_t index = 0;
  Status s = FindMark(history, spec, &index);
  if (!s.ok()) {
    return Status::InvalidArgument("--to " + EscapeForTerminal(spec) + ": session " + history.meta().id + ": " +
                                   s.message());
  }
  const Record& mark = history.marks()[index];
  *to_seq = mark.seq;
  *label = "at mark @" + std::to_string(index + 1) + " (" + EscapeForTerminal(mark.label) + ")";
  return Status::Ok();
}

}  // namespace guard
