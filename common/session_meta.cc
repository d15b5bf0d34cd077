#include "common/session_meta.h"

#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "common/file_io.h"
#include "common/os_calls.h"
#include "common/path_util.h"
#include "common/state_dir.h"

namespace guard {

namespace {

// ordered_json keeps the fields in the order written, which is the order a
// person reading meta.json expects.
using Json = nlohmann::ordered_json;

constexpr int64_t kNsPerSec = 1000000000;

struct StateName {
  SessionState state;
  const char* name;
};
constexpr StateName kStateNames[] = {
    {SessionState::kRunning, "running"},     {SessionState::kFinished, "finished"},
    {SessionState::kKilled, "killed"},       {SessionState::kCrashed, "crashed"},
    {SessionState::kRecovered, "recovered"},
};

uint32_t RandomU32() {
  uint32_t v = 0;
  if (os::Random(&v, sizeof v, /*nonblock=*/true) == static_cast<ssize_t>(sizeof v)) return v;
  // No entropy yet (very early boot): time and pid still differ between runs.
  struct timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint32_t>(ts.tv_nsec) ^ (static_cast<uint32_t>(::getpid()) << 8);
}

Status Missing(const std::string& path, const char* field) {
  return Status::Corruption(path + ": field '" + field + "' is missing or has the wrong type");
}

// Each reader accepts only the JSON type SaveSessionMeta writes.
Status ReadString(const Json& j, const char* field, const std::string& path, std::string* out) {
  auto it = j.find(field);
  if (it == j.end() || !it->is_string()) return Missing(path, field);
  *out = it->get<std::string>();
  return Status::Ok();
}

Status ReadInt(const Json& j, const char* field, const std::string& path, int64_t* out) {
  auto it = j.find(field);
  if (it == j.end() || !it->is_number_integer()) return Missing(path, field);
  *out = it->get<int64_t>();
  return Status::Ok();
}

Status ReadUint(const Json& j, const char* field, const std::string& path, uint64_t* out) {
  auto it = j.find(field);
  if (it == j.end() || !it->is_number_unsigned()) return Missing(path, field);
  *out = it->get<uint64_t>();
  return Status::Ok();
}

// A field that is null while unknown; null reads as `if_null`.
Status ReadNullableInt(const Json& j, const char* field, const std::string& path, int64_t if_null,
                       int64_t* out) {
  auto it = j.find(field);
  if (it != j.end() && it->is_null()) {
    *out = if_null;
    return Status::Ok();
  }
  return ReadInt(j, field, path, out);
}

Status ReadBool(const Json& j, const char* field, const std::string& path, bool* out) {
  auto it = j.find(field);
  if (it == j.end() || !it->is_boolean()) return Missing(path, field);
  *out = it->get<bool>();
  return Status::Ok();
}

Status ReadRestore(const Json& j, const std::string& path, RestoreOf* r) {
  if (!j.is_object()) return Missing(path, "restore");
  GUARD_RETURN_IF_ERROR(ReadString(j, "verb", path, &r->verb));
  GUARD_RETURN_IF_ERROR(ReadString(j, "of", path, &r->of));
  GUARD_RETURN_IF_ERROR(ReadUint(j, "from", path, &r->from));
  GUARD_RETURN_IF_ERROR(ReadUint(j, "boundary", path, &r->boundary));
  GUARD_RETURN_IF_ERROR(ReadUint(j, "turns", path, &r->turns));
  auto paths = j.find("paths");
  if (paths == j.end() || !paths->is_array()) return Missing(path, "restore.paths");
  for (const Json& p : *paths) {
    if (!p.is_string()) return Missing(path, "restore.paths");
    r->paths.push_back(p.get<std::string>());
  }
  GUARD_RETURN_IF_ERROR(ReadBool(j, "interrupted", path, &r->interrupted));
  GUARD_RETURN_IF_ERROR(ReadUint(j, "planned", path, &r->planned));
  GUARD_RETURN_IF_ERROR(ReadUint(j, "done", path, &r->done));
  return Status::Ok();
}

Status FromJson(const Json& j, const std::string& path, SessionMeta* m) {
  if (!j.is_object()) return Status::Corruption(path + ": not a JSON object");
  int64_t version = 0;
  GUARD_RETURN_IF_ERROR(ReadInt(j, "format_version", path, &version));
  if (version > SessionMeta::kFormatVersion) {
    return Status::Unsupported(path + ": session metadata version " + std::to_string(version) +
                               " is newer than this guard understands (" +
                               std::to_string(SessionMeta::kFormatVersion) + ")");
  }
  if (version < 1) return Status::Corruption(path + ": invalid format_version");

  GUARD_RETURN_IF_ERROR(ReadString(j, "id", path, &m->id));
  GUARD_RETURN_IF_ERROR(ReadString(j, "root", path, &m->root));
  auto argv = j.find("argv");
  if (argv == j.end() || !argv->is_array()) return Missing(path, "argv");
  m->argv.clear();
  for (const Json& a : *argv) {
    if (!a.is_string()) return Missing(path, "argv");
    m->argv.push_back(a.get<std::string>());
  }
  GUARD_RETURN_IF_ERROR(ReadInt(j, "started_ns", path, &m->started_ns));
  GUARD_RETURN_IF_ERROR(ReadNullableInt(j, "ended_ns", path, 0, &m->ended_ns));
  std::string state;
  GUARD_RETURN_IF_ERROR(ReadString(j, "state", path, &state));
  if (!ParseSessionState(state, &m->state)) {
    return Status::Corruption(path + ": unknown session state '" + state + "'");
  }
  int64_t v = 0;
  GUARD_RETURN_IF_ERROR(ReadNullableInt(j, "exit_code", path, -1, &v));
  m->exit_code = static_cast<int>(v);
  GUARD_RETURN_IF_ERROR(ReadInt(j, "signal", path, &v));
  m->signal = static_cast<int>(v);
  GUARD_RETURN_IF_ERROR(ReadUint(j, "ops", path, &m->ops));
  GUARD_RETURN_IF_ERROR(ReadUint(j, "files", path, &m->files));
  auto sup = j.find("supervisor");
  if (sup == j.end() || !sup->is_object()) return Missing(path, "supervisor");
  GUARD_RETURN_IF_ERROR(ReadInt(*sup, "pid", path, &v));
  m->supervisor_pid = static_cast<pid_t>(v);
  GUARD_RETURN_IF_ERROR(ReadUint(*sup, "start_ticks", path, &m->supervisor_start_ticks));
  GUARD_RETURN_IF_ERROR(ReadString(j, "guard_version", path, &m->guard_version));
  m->git_head.clear();
  if (j.contains("git_head")) GUARD_RETURN_IF_ERROR(ReadString(j, "git_head", path, &m->git_head));
  m->ring.clear();
  if (j.contains("ring")) GUARD_RETURN_IF_ERROR(ReadString(j, "ring", path, &m->ring));
  m->incomplete_ns = 0;
  m->incomplete_what.clear();
  if (auto inc = j.find("log_incomplete"); inc != j.end()) {
    if (!inc->is_object()) return Missing(path, "log_incomplete");
    GUARD_RETURN_IF_ERROR(ReadInt(*inc, "from_ns", path, &m->incomplete_ns));
    GUARD_RETURN_IF_ERROR(ReadString(*inc, "what", path, &m->incomplete_what));
  }
  m->restore = RestoreOf();
  if (j.contains("restore")) GUARD_RETURN_IF_ERROR(ReadRestore(j.at("restore"), path, &m->restore));
  return Status::Ok();
}

}  // namespace

const char* SessionStateName(SessionState s) {
  for (const StateName& n : kStateNames) {
    if (n.state == s) return n.name;
  }
  return "unknown";
}

bool ParseSessionState(const std::string& s, SessionState* out) {
  for (const StateName& n : kStateNames) {
    if (s == n.name) {
      *out = n.state;
      return true;
    }
  }
  return false;
}

std::string NewSessionId() {
  // Milliseconds, then a counter that starts at a random value and grows by
  // one per id: ids sort by start time to the millisecond; two guards
  // starting in the same millisecond collide with odds of about 2^-16 (the
  // O_EXCL mkdir of the session directory catches that), and ids made by one
  // process never collide unless it makes 65536 in one millisecond.
  static std::atomic<uint32_t> next{RandomU32()};
  uint32_t suffix = next.fetch_add(1, std::memory_order_relaxed) & 0xffff;
  struct timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  ::gmtime_r(&ts.tv_sec, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d%02d%02d-%02d%02d%02d-%03ld%04x", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, suffix);
  return buf;
}

std::string FormatIso8601(int64_t wall_ns) {
  // Floor division, so that instants before 1970 still print correctly.
  int64_t secs = wall_ns / kNsPerSec;
  int64_t rem = wall_ns % kNsPerSec;
  if (rem < 0) {
    rem += kNsPerSec;
    secs -= 1;
  }
  time_t t = static_cast<time_t>(secs);
  struct tm tm;
  if (::gmtime_r(&t, &tm) == nullptr) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(rem / 1000000));
  return buf;
}

std::string SessionMetaToJson(const SessionMeta& m) {
  Json j;
  j["format_version"] = SessionMeta::kFormatVersion;
  j["id"] = m.id;
  j["root"] = m.root;
  j["argv"] = m.argv;
  // The ISO strings are for people; the _ns fields are what guard reads back.
  j["started"] = FormatIso8601(m.started_ns);
  j["started_ns"] = m.started_ns;
  j["ended"] = m.ended_ns != 0 ? Json(FormatIso8601(m.ended_ns)) : Json(nullptr);
  j["ended_ns"] = m.ended_ns != 0 ? Json(m.ended_ns) : Json(nullptr);
  j["state"] = SessionStateName(m.state);
  j["exit_code"] = m.exit_code != -1 ? Json(m.exit_code) : Json(nullptr);
  j["signal"] = m.signal;
  j["ops"] = m.ops;
  j["files"] = m.files;
  j["supervisor"] = {{"pid", m.supervisor_pid}, {"start_ticks", m.supervisor_start_ticks}};
  j["guard_version"] = m.guard_version;
  if (!m.git_head.empty()) j["git_head"] = m.git_head;
  if (!m.ring.empty()) j["ring"] = m.ring;
  if (m.incomplete_ns != 0) {
    j["log_incomplete"] = {{"from", FormatIso8601(m.incomplete_ns)}, {"from_ns", m.incomplete_ns},
                           {"what", m.incomplete_what}};
  }
  if (!m.restore.verb.empty()) {
    const RestoreOf& r = m.restore;
    j["restore"] = {{"verb", r.verb},         {"of", r.of},       {"from", r.from},
                    {"boundary", r.boundary}, {"turns", r.turns}, {"paths", r.paths},
                    {"interrupted", r.interrupted}, {"planned", r.planned}, {"done", r.done}};
  }
  // Replace, not throw, on invalid UTF-8: argv and root are bytes from the
  // user's system and need not be UTF-8.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string LogIncompleteLine(const SessionMeta& m) {
  if (m.incomplete_ns == 0) return "";
  return "log incomplete from " + FormatIso8601(m.incomplete_ns) + ": " + m.incomplete_what +
         "; changes made after that time may be missing from this session";
}

Status SaveSessionMeta(const std::string& path, const SessionMeta& m) {
  Status s = WriteFileAtomic(path, SessionMetaToJson(m) + "\n", 0600);
  // <state>/sessions/<id>/meta.json: a full disk is the state directory's,
  // not the temporary file's the error would name.
  return StateDirWriteError(ParentDir(ParentDir(ParentDir(path))), s);
}

Status LoadSessionMeta(const std::string& path, SessionMeta* m) {
  std::string text;
  GUARD_RETURN_IF_ERROR(ReadFileToString(path, &text));
  SessionMeta loaded;
  // nlohmann reports malformed input by exception; none may leave here.
  try {
    Json j = Json::parse(text);
    GUARD_RETURN_IF_ERROR(FromJson(j, path, &loaded));
  } catch (const nlohmann::json::exception& e) {
    return Status::Corruption(path + ": malformed JSON: " + e.what());
  }
  *m = std::move(loaded);
  return Status::Ok();
}

uint64_t ProcessStartTicks(pid_t pid) { return pid <= 0 ? 0 : os::ProcessStartTicks(pid); }

bool IsRestoreSession(const SessionMeta& m) {
  return !m.restore.verb.empty() || (m.argv.size() >= 2 && m.argv[1] == "__restore");
}

RestoreOf RestoreOfSession(const SessionMeta& m) {
  if (!m.restore.verb.empty() || !IsRestoreSession(m)) return m.restore;
  // Recorded by an outer guard (or by an older guard): its command line,
  // `guard __restore VERB --session ID ...`, is all there is.
  RestoreOf r;
  r.verb = m.argv.size() > 2 ? m.argv[2] : "restore";
  for (size_t i = 3; i + 1 < m.argv.size(); ++i) {
    if (m.argv[i] == "--session") r.of = m.argv[i + 1];
  }
  return r;
}

bool SupervisorAlive(const SessionMeta& m) {
  if (m.supervisor_pid <= 0) return false;
  uint64_t ticks = ProcessStartTicks(m.supervisor_pid);
  if (ticks == 0) return false;
  // Without a recorded start time the pid is all there is to go on; assuming
  // alive is the safe side (recovery of a live session would be worse).
  if (m.supervisor_start_ticks == 0) return true;
  return ticks == m.supervisor_start_ticks;
}

Status CreateSessionDir(const std::string& sessions_dir, SessionMeta* meta, std::string* dir) {
  for (int attempt = 0; attempt < 16; ++attempt) {
    meta->id = NewSessionId();
    *dir = sessions_dir + "/" + meta->id;
    if (mkdir(dir->c_str(), 0700) == 0) return Status::Ok();
    if (errno != EEXIST) return StateDirWriteError(ParentDir(sessions_dir), Status::FromErrno(*dir, errno));
  }
  return Status::IOError("cannot create a unique session directory");
}

}  // namespace guard
