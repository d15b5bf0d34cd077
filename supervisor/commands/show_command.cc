#include "supervisor/commands/show_command.h"

#include <CLI/CLI.hpp>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/os_calls.h"
#include "supervisor/base/json_schema.h"
#include "supervisor/base/pager.h"
#include "supervisor/base/color.h"
#include "supervisor/review/review_options.h"
#include "supervisor/base/time_format.h"
#include "supervisor/base/path_escape.h"
#include "supervisor/review/review_session.h"
#include "supervisor/commands/subcommand.h"

namespace guard {

const char* const ShowCommand::kSummary =
    "Show a session's timeline, one line per operation";

const char* const ShowCommand::kHelp =
    "One line per operation record, in order, failed calls included (marked [failed: ERRNO];\n"
    "[outcome unknown] when the process or guard died during the call). Columns: the operation's\n"
    "number (1, 2, 3...), its sequence number SEQ (what --to takes), local time, thread id, program, what happened (created, modified,\n"
    "renamed, exchanged, deleted, mkdir, rmdir, symlink, link, chmod, mknod), size before the\n"
    "change (modified, deleted), and the path(s) relative to the root; a path outside the root is\n"
    "shown absolute and marked (outside root). Control characters and bytes that are not UTF-8\n"
    "are shown as \\xNN, a backslash as \\\\. --json: an array with one object per operation: seq,\n"
    "number (1, 2, 3... as the text shows it), time (ISO 8601, UTC), pid, program, syscall, op, path, path2, outside_root,\n"
    "path2_outside_root, target (symlink), new_mode, before and before2 ({type, mode, size,\n"
    "symlink_target}; modes are octal strings), after (or null), result (\"ok\", \"unknown\" or an\n"
    "errno name) and flags. In a string that is not valid UTF-8 each bad byte is written as the\n"
    "four characters \\xNN, and a field NAME_bytes_hex beside it holds all its bytes in hex.\n"
    "A directory renamed out of the root takes what it holds along: guard shows each file and\n"
    "directory below it as deleted or rmdir, marked [left the root with its directory], just\n"
    "before the rename; one renamed into the root shows what it brought as created, mkdir,\n"
    "symlink or mknod, marked [entered the root with its directory], just after the rename\n"
    "(flag \"carried\" in --json). The call itself named only the directory.\n"
    "A write or chmod through one name of a file with several names (hard links) shows each\n"
    "other name inside the root just after it, marked [same file, another name] (flag\n"
    "\"same_inode\" in --json).\n"
    "After the operations, the paths whose end state recovery took from the session's saved work\n"
    "because the tree had been changed after the session ended (a revert after guard was killed;\n"
    "`guard replay` puts the work back), and those changed after the end before guard had saved\n"
    "the session's last work on them.\n"
    "Marks (`guard mark`, an agent's hooks) head the operations that follow them, each on a line\n"
    "of its own: its number @N (what --to takes, as does its label), its time and its label; a step\n"
    "(a mark made with --step, such as after a tool call) is shown indented. In --json a mark is an\n"
    "object with op \"mark\", seq, time, mark (its number), label, step, pid and program, in order\n"
    "among the operations.\n"
    "Read-only: a session that needs recovery is shown as it is, with a warning.";

namespace {

using Json = nlohmann::ordered_json;

std::string ErrnoName(int err) {
  const char* name = os::ErrnoName(err);
  return name != nullptr ? name : "errno " + std::to_string(err);
}

std::string Result(const HistoryOp& h) {
  if (h.not_run) return "not_run";
  if (!h.outcome_known) return "unknown";
  return h.result_errno == 0 ? "ok" : ErrnoName(h.result_errno);
}

std::string Mode(uint32_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", mode & 07777);
  return buf;
}

std::string ShownPath(const std::string& path, bool outside) {
  return EscapeForTerminal(path) + (outside ? " (outside root)" : "");
}

// The path part of a timeline line.
std::string Describe(const HistoryOp& h) {
  const Record& r = h.op;
  std::string p = ShownPath(r.path, !h.inside());
  std::string p2 = ShownPath(r.path2, (r.flags & kOutsideRoot2) != 0);
  switch (r.kind) {
    case OpKind::kRename: {
      std::string s = p + " -> " + p2;
      if (r.before2.type == FileType::kRegular)
        s += " (replaced " + std::to_string(r.before2.size) + " bytes)";
      else if (r.before2.type != FileType::kAbsent && r.before2.type != FileType::kUnknown) {
        s += std::string(" (replaced ") + FileTypeName(r.before2.type) + ")";
      }
      return s;
    }
    case OpKind::kExchange: return p + " <-> " + p2;
    case OpKind::kSymlink: return p + " -> " + EscapeForTerminal(r.target);
    case OpKind::kLink: return p2 + " (hard link to " + p + ")";
    case OpKind::kChmod:
      if (r.before.type == FileType::kUnknown) return p + " -> " + Mode(r.new_mode);
      return p + " " + Mode(r.before.mode) + " -> " + Mode(r.new_mode);
    default: return p;
  }
}

// What a kind of operation does to the tree, in git's colours: makes
// (green), removes (red), changes (yellow).
Hue KindHue(OpKind kind) {
  switch (kind) {
    case OpKind::kCreate:
    case OpKind::kMkdir:
    case OpKind::kSymlink:
    case OpKind::kLink:
    case OpKind::kMknod:
      return Hue::kGreen;
    case OpKind::kDelete:
    case OpKind::kRmdir:
      return Hue::kRed;
    default:
      return Hue::kYellow;
  }
}

std::string Marks(const HistoryOp& h) {
  std::string m;
  if (h.not_run)
    m += "  [outcome unknown: not run, its source is still there]";
  else if (!h.outcome_known)
    m += "  [outcome unknown]";
  else if (h.result_errno != 0)
    m += "  [failed: " + ErrnoName(h.result_errno) + "]";
  if (h.op.flags & kNotCaptured) m += "  [pre-image not saved]";
  if (h.op.flags & kDenied) m += "  [refused by guard]";
  if (h.op.flags & kCarried) {
    bool leaves = h.op.kind == OpKind::kDelete || h.op.kind == OpKind::kRmdir;
    m += leaves ? "  [left the root with its directory]" : "  [entered the root with its directory]";
  }
  if (h.op.flags & kSameInode) m += "  [same file, another name]";
  return m;
}

void PutBytes(Json* j, const std::string& key, const std::string& bytes) {
  bool lossy = false;
  (*j)[key] = Utf8OrEscaped(bytes, &lossy);
  if (lossy) (*j)[key + "_bytes_hex"] = HexBytes(bytes);
}

Json StateJson(const FileState& s) {
  Json j;
  j["type"] = FileTypeName(s.type);
  bool exists = s.type != FileType::kAbsent && s.type != FileType::kUnknown;
  j["mode"] = exists ? Json(Mode(s.mode)) : Json(nullptr);
  j["size"] = exists ? Json(s.size) : Json(nullptr);
  if (s.type == FileType::kSymlink)
    PutBytes(&j, "symlink_target", s.symlink_target);
  else
    j["symlink_target"] = nullptr;
  return j;
}

Json OpJson(const HistoryOp& h, size_t number) {
  const Record& r = h.op;
  Json j;
  j["seq"] = r.seq;
  j["number"] = number;
  j["schema"] = kJsonSchemaVersion;
  j["time"] = FormatIso8601(r.wall_ns);
  j["pid"] = r.pid;
  PutBytes(&j, "program", r.comm);
  PutBytes(&j, "syscall", r.syscall);
  j["op"] = OpKindName(r.kind);
  PutBytes(&j, "path", r.path);
  if (r.path2.empty())
    j["path2"] = nullptr;
  else
    PutBytes(&j, "path2", r.path2);
  j["outside_root"] = (r.flags & kOutsideRoot) != 0;
  j["path2_outside_root"] = r.path2.empty() ? Json(nullptr) : Json((r.flags & kOutsideRoot2) != 0);
  if (r.kind == OpKind::kSymlink) PutBytes(&j, "target", r.target);
  if (r.kind == OpKind::kChmod || r.kind == OpKind::kMkdir || r.kind == OpKind::kCreate ||
      r.kind == OpKind::kMknod) {
    j["new_mode"] = Mode(r.new_mode);
  }
  j["before"] = StateJson(r.before);
  if (!r.path2.empty()) j["before2"] = StateJson(r.before2);
  j["after"] = h.outcome_known && h.result_errno == 0 ? StateJson(h.after) : Json(nullptr);
  j["result"] = Result(h);
  Json flags = Json::array();
  if (r.flags & kNotCaptured) flags.push_back("not_captured");
  if (r.flags & kDenied) flags.push_back("denied");
  if (r.flags & kNoFollow) flags.push_back("no_follow");
  if (r.flags & kCarried) flags.push_back("carried");
  if (r.flags & kSameInode) flags.push_back("same_inode");
  j["flags"] = flags;
  return j;
}

Json MarkJson(const Record& r, size_t number) {
  Json j;
  j["seq"] = r.seq;
  j["time"] = FormatIso8601(r.wall_ns);
  j["op"] = "mark";
  j["schema"] = kJsonSchemaVersion;
  j["mark"] = number;
  PutBytes(&j, "label", r.label);
  j["step"] = (r.flags & kStepMark) != 0;
  j["pid"] = r.pid;
  PutBytes(&j, "program", r.comm);
  return j;
}

std::string MarkLine(const Record& r, size_t number) {
  const bool step = (r.flags & kStepMark) != 0;
  std::string label = r.label.empty() ? "" : "  " + EscapeForTerminal(r.label);
  return std::string(step ? "    -- step @" : "== mark @") + std::to_string(number) + "  " + ShownTime(r.wall_ns) +
         label;
}

// The pre-images kept without a record (format 1.4): an object each in
// --json, after the operations.
Json UnnamedPreImageJson(const Record& r) {
  Json j;
  j["seq"] = r.seq;
  j["time"] = FormatIso8601(r.after.ctime_ns != 0 ? r.after.ctime_ns : r.wall_ns);
  j["op"] = "pre-image-without-record";
  j["size"] = r.after.type == FileType::kRegular ? Json(r.after.size) : Json(nullptr);
  j["key"] = r.key.Hex();
  return j;
}

// One line each: what `guard export --pending` takes, and what it weighs.
void PrintUnnamedPreImages(const SessionHistory& history, const std::string& id) {
  const std::vector<Record>& kept = history.unnamed_pre_images();
  if (kept.empty()) return;
  std::printf("%zu pre-image(s) kept without a record that names them (`guard export --session %s --pending KEY` "
              "writes one's bytes to stdout):\n", kept.size(), id.c_str());
  for (const Record& r : kept) {
    const int64_t at = r.after.ctime_ns != 0 ? r.after.ctime_ns : r.wall_ns;
    const std::string size = r.after.type == FileType::kRegular ? std::to_string(r.after.size) + " bytes" : "size ?";
    std::printf("  pre-image %s  %s  saved %s\n", r.key.Hex().c_str(), size.c_str(), FormatIso8601(at).c_str());
  }
}

Json IncompleteJson(const Record& r) {
  Json j;
  j["seq"] = r.seq;
  j["time"] = FormatIso8601(r.wall_ns);
  j["op"] = "log-incomplete";
  PutBytes(&j, "what", r.label);
  return j;
}

}  // namespace

int ShowCommand::Run() {
  ReviewSession session;
  if (int rc = ReviewSession::Open(options_.session, options_.root, /*with_store=*/false, &session); rc != 0) return rc;
  const SessionHistory& history = session.history;
  if (options_.json) {
    Json array = Json::array();
    size_t next_mark = 0;
    size_t number = 0;
    const std::vector<Record>& marks = history.marks();
    for (const HistoryOp& h : history.all_ops()) {
      for (; next_mark < marks.size() && marks[next_mark].seq < h.op.seq; ++next_mark) {
        array.push_back(MarkJson(marks[next_mark], next_mark + 1));
      }
      array.push_back(OpJson(h, ++number));
    }
    for (; next_mark < marks.size(); ++next_mark) array.push_back(MarkJson(marks[next_mark], next_mark + 1));
    for (const Record& r : history.incomplete()) array.push_back(IncompleteJson(r));
    for (const Record& r : history.unnamed_pre_images()) array.push_back(UnnamedPreImageJson(r));
    std::printf("%s\n", array.dump(2).c_str());
    return 0;
  }
  ColorWhen when = ColorWhen::kAuto;
  if (!ParseColorWhen(options_.color, &when)) {
    std::fprintf(stderr, "guard: --color must be auto, always or never\n");
    return 2;
  }
  // Decided on the terminal, before the pager takes stdout (less -R shows it).
  const bool color = UseColor(when, STDOUT_FILENO);
  Pager pager;
  pager.Start(!options_.no_pager);
  const SessionMeta& m = history.meta();
  const std::vector<Record>& marks = history.marks();
  std::string mark_count = marks.empty() ? "" : ", " + std::to_string(marks.size()) + " mark(s)";
  std::printf("session %s in %s: %zu operation(s)%s, %s\n", Paint(color, Hue::kYellow, session.id).c_str(),
              EscapeForTerminal(m.root).c_str(), history.all_ops().size(), mark_count.c_str(),
              SessionStateName(m.state));
  if (const std::string line = LogIncompleteLine(m); !line.empty()) {
    std::printf("%s\n", Paint(color, Hue::kRed, line).c_str());
  }
  PrintUnnamedPreImages(history, session.id);
  // Watch mode (docs/capture.md, "Watch mode"): no process is known, so
  // whatever changed the tree during the session is in it.
  for (const HistoryOp& h : history.all_ops()) {
    if (h.op.flags & kObserved) {
      std::printf("watched (--mode watch): changes seen after they happened, by anyone; edits made by hand "
                  "during the session are part of it, and undo reverts them too\n");
      break;
    }
  }
  if (history.all_ops().empty() && marks.empty()) return 0;
  std::printf("%5s %6s %-19s %7s %-15s %-9s %8s  %s\n", "#", "SEQ", "TIME", "PID", "PROGRAM", "WHAT", "SIZE",
              "PATH");
  size_t next_mark = 0;
  size_t number = 0;
  for (const HistoryOp& h : history.all_ops()) {
    ++number;
    for (; next_mark < marks.size() && marks[next_mark].seq < h.op.seq; ++next_mark) {
      std::printf("%s\n", Paint(color, Hue::kCyan, MarkLine(marks[next_mark], next_mark + 1)).c_str());
    }
    const Record& r = h.op;
    std::string size;
    if ((r.kind == OpKind::kModify || r.kind == OpKind::kDelete) && r.before.type == FileType::kRegular) {
      size = std::to_string(r.before.size);
    }
    char what[32];
    std::snprintf(what, sizeof what, "%-9s", OpKindPastTense(r.kind));
    const std::string marks_text = Marks(h);
    std::printf("%5zu %6llu %-19s %7d %-15s %s %8s  %s%s\n", number, static_cast<unsigned long long>(r.seq),
                ShownTime(r.wall_ns).c_str(), r.pid,
                (r.flags & kObserved) && r.comm.empty() ? "(watched)" : EscapeForTerminal(r.comm).c_str(),
                Paint(color, KindHue(r.kind), what).c_str(), size.c_str(), Describe(h).c_str(),
                marks_text.empty() ? "" : Paint(color, Hue::kRed, marks_text).c_str());
  }
  for (; next_mark < marks.size(); ++next_mark) {
    std::printf("%s\n", Paint(color, Hue::kCyan, MarkLine(marks[next_mark], next_mark + 1)).c_str());
  }
  // Paths whose tree state at recovery was not the session's (format.md,
  // Part IV, "The session's work").
  for (const auto& [path, flags] : history.final_flags()) {
    if (flags & kChangedAfterEnd) {
      std::printf("%s: changed after the session ended; the session's end is its saved work "
                  "(`guard replay --session %s` puts it back)\n",
                  EscapeForTerminal(path).c_str(), session.id.c_str());
    } else if (flags & kEndNotSaved) {
      std::printf("%s: changed after the session ended, before guard had saved the session's last work on it; "
                  "the end recorded is the tree's\n",
                  EscapeForTerminal(path).c_str());
    }
  }
  return 0;
}

// The command line of `guard show` (subcommand.h).
namespace {

class ShowSubcommand final : public CommandSubcommand<ShowCommand> {
 public:
  void Declare(CLI::App* cmd, SharedOptions* line) override {
    cmd->description(ShowCommand::kSummary)->footer(ShowCommand::kHelp);
    line->AddSession(cmd, &options_.session, kViewSessionHelp)->type_name("ID");
    cmd->add_flag("--json", options_.json, "Print a JSON array, one object per operation");
    cmd->add_flag("--no-pager", options_.no_pager, "Do not page the output on a terminal");
    cmd->add_option("--color", options_.color, "auto (default: colour when stdout is a terminal and NO_COLOR is unset), "
                                               "always, never");
    line->AddRoot(cmd);
  }
};

}  // namespace

std::unique_ptr<Subcommand> MakeShowSubcommand() { return std::make_unique<ShowSubcommand>(); }

}  // namespace guard
