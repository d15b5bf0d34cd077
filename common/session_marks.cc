#include "common/session_marks.h"

#include <vector>

#include "common/decimal.h"

namespace guard {

bool IsMarkSpec(const std::string& spec) {
  if (spec.empty()) return true;
  for (char c : spec) {
    if (c < '0' || c > '9') return true;
  }
  return false;
}

Status FindMark(const SessionHistory& history, const std::string& spec, size_t* index) {
  const std::vector<Record>& marks = history.marks();
  if (marks.empty()) return Status::InvalidArgument("the session has no marks (guard mark makes them)");
  if (spec.size() > 1 && spec[0] == '@' && !IsMarkSpec(spec.substr(1))) {
    uint64_t n = 0;
    if (!ParseDecimal(std::string_view(spec).substr(1), marks.size(), &n) || n == 0) {
      return Status::InvalidArgument("mark " + spec + ": the session has marks @1 to @" +
                                     std::to_string(marks.size()));
    }
    *index = static_cast<size_t>(n - 1);
    return Status::Ok();
  }
  std::vector<size_t> found;
  for (size_t i = 0; i < marks.size(); ++i) {
    if (marks[i].label == spec) found.push_back(i);
  }
  if (found.size() == 1) {
    *index = found[0];
    return Status::Ok();
  }
  if (found.empty()) {
    return Status::InvalidArgument("no mark of the session is labelled \"" + spec +
                                   "\" (guard show lists them; @N names one by number)");
  }
  std::string numbers;
  for (size_t i : found) numbers += (numbers.empty() ? "@" : ", @") + std::to_string(i + 1);
  return Status::InvalidArgument("marks " + numbers + " are all labelled \"" + spec + "\": name one by number");
}

Status MarkSeq(const SessionHistory& history, const std::string& spec, uint64_t* seq) {
  size_t i = 0;
  GUARD_RETURN_IF_ERROR(FindMark(history, spec, &i));
  *seq = history.marks()[i].seq;
  return Status::Ok();
}

Status TurnsStartSeq(const SessionHistory& history, uint64_t turns, uint64_t* seq) {
  if (turns == 0) return Status::InvalidArgument("--turns takes a number of turns, 1 or more");
  uint64_t seen = 0;
  const std::vector<Record>& marks = history.marks();
  for (size_t i = marks.size(); i-- > 0;) {
    if (marks[i].flags & kStepMark) continue;
    if (++seen == turns) {
      *seq = marks[i].seq;
      return Status::Ok();
    }
  }
  return Status::InvalidArgument("the session has " + std::to_string(seen) + " marked turn" +
                                 (seen == 1 ? "" : "s") + ", not " + std::to_string(turns) +
                                 " (a turn starts at a `guard mark` without --step)");
}

}  // namespace guard
