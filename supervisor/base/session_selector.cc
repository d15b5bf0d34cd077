#include "supervisor/base/session_selector.h"

#include "common/decimal.h"

#include <vector>

#include "common/path_util.h"
#include "common/session_meta.h"
#include "supervisor/base/root_finder.h"

namespace guard {
namespace {

// The sessions of `root` that the user ran (an agent, a command), oldest
// first: guard's own restore sessions are left out, so that `guard replay`
// after `guard undo` means the session undone, not the undo.
Status UserSessionsOfRoot(const StateDir& state, const std::string& root, std::vector<std::string>* out) {
  std::vector<std::string> ids;
  GUARD_RETURN_IF_ERROR(state.ListSessions(&ids));
  for (const std::string& id : ids) {
    SessionMeta m;
    if (LoadSessionMeta(state.session_dir(id) + "/meta.json", &m).ok() && m.root == root && !IsRestoreSession(m)) {
      out->push_back(id);
    }
  }
  return Status::Ok();
}

}  // namespace

Status FindSessionRoot(const StateDir& state, const std::string& explicit_root, std::string* root) {
  if (!explicit_root.empty()) return ResolveRecordedRoot(explicit_root, root);
  std::string cwd;
  bool removed;
  GUARD_RETURN_IF_ERROR(CurrentDirectory(&cwd, &removed));
  std::vector<std::string> ids;
  GUARD_RETURN_IF_ERROR(state.ListSessions(&ids));
  std::string nearest;
  for (const std::string& id : ids) {
    SessionMeta m;
    if (LoadSessionMeta(state.session_dir(id) + "/meta.json", &m).ok() && m.root.size() > nearest.size() &&
        PathIsUnder(cwd, m.root)) {
      nearest = m.root;
    }
  }
  if (!nearest.empty()) {
    *root = nearest;
    return Status::Ok();
  }
  if (removed) {
    *root = cwd;  // no session to find; the error will name it
    return Status::Ok();
  }
  return FindRoot("", root);
}

Status SessionBefore(const StateDir& state, const std::string& root, const std::string& id, std::string* before) {
  std::vector<std::string> ids;
  GUARD_RETURN_IF_ERROR(UserSessionsOfRoot(state, root, &ids));
  for (auto it = ids.rbegin(); it != ids.rend(); ++it) {
    if (*it < id) {
      *before = *it;
      return Status::Ok();
    }
  }
  return Status::NotFound("no session of " + root + " before " + id);
}

Status SelectSession(const StateDir& state, const std::string& spec, const std::string& root,
                     std::string* id) {
  if (spec.empty() || spec == "last" || spec.rfind("last~", 0) == 0) {
    size_t back = 0;
    if (spec.size() > 5) {
      uint64_t n = 0;
      if (!ParseDecimal(std::string_view(spec).substr(5), 999999, &n)) {
        return Status::InvalidArgument("bad session '" + spec + "': use an id, a prefix, last or last~N");
      }
      back = static_cast<size_t>(n);
    }
    std::vector<std::string> ids;
    GUARD_RETURN_IF_ERROR(UserSessionsOfRoot(state, root, &ids));
    if (ids.empty()) return Status::NotFound("no guard session recorded for " + root);
    if (back >= ids.size()) {
      return Status::NotFound("session " + spec + " does not exist: " + root + " has " +
                              std::to_string(ids.size()) + " session(s)");
    }
    *id = ids[ids.size() - 1 - back];
    return Status::Ok();
  }
  std::vector<std::string> all;
  GUARD_RETURN_IF_ERROR(state.ListSessions(&all));
  std::vector<std::string> matches;
  for (const std::string& candidate : all) {
    if (candidate == spec) {
      *id = candidate;
      return Status::Ok();
    }
    if (candidate.rfind(spec, 0) == 0) matches.push_back(candidate);
  }
  // Failing a prefix, the hex suffix alone (the random part of an id, as
  // `guard sessions` prints it last), as a short name is easiest to type.
  if (matches.empty() && spec.find_first_not_of("0123456789abcdef") == std::string::npos) {
    for (const std::string& candidate : all) {
      if (candidate.size() > spec.size() && candidate.compare(candidate.size() - spec.size(), spec.size(), spec) == 0)
        matches.push_back(candidate);
    }
  }
  if (matches.size() == 1) {
    *id = matches[0];
    return Status::Ok();
  }
  if (matches.empty()) return Status::NotFound("unknown session '" + spec + "' (guard sessions --all lists them)");
  std::string names;
  for (size_t i = 0; i < matches.size() && i < 8; ++i) names += (i ? ", " : "") + matches[i];
  if (matches.size() > 8) names += ", ...";
  return Status::InvalidArgument("ambiguous session '" + spec + "': " + names);
}

}  // namespace guard
