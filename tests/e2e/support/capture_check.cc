#include "tests/e2e/support/capture_check.h"

#include <cstdio>
#include <map>

#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

// What the model knows of one path.
struct Slot {
  // Untouched since the snapshot: holds before.entries[origin] (origin
  // differs from the path once a rename has moved it).
  bool known = false;
  bool mode_known = false;  // false after a chmod: content known, mode not
  std::string origin;
};
using Model = std::map<std::string, Slot>;

bool IsUnder(const std::string& path, const std::string& dir) {
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/');
}

// Removes `dir` and everything under it, returning them keyed by the part
// after `dir` ("" for `dir` itself).
std::map<std::string, Slot> Extract(Model* m, const std::string& dir) {
  std::map<std::string, Slot> out;
  for (auto it = m->lower_bound(dir); it != m->end() && it->first.compare(0, dir.size(), dir) == 0;) {
    if (IsUnder(it->first, dir)) {
      out.emplace(it->first.substr(dir.size()), it->second);
      it = m->erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

void Insert(Model* m, const std::string& dir, const std::map<std::string, Slot>& subtree) {
  for (const auto& [rest, slot] : subtree) (*m)[dir + rest] = slot;
}

void MarkChanged(Model* m, const std::string& path) {
  Extract(m, path);
  (*m)[path] = Slot();
}

std::string Mode(uint32_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", mode);
  return buf;
}

class Checker {
 public:
  Checker(const SessionView& s, const TreeSnapshot& before, PreImageReport* report)
      : session_(s), before_(before), report_(report) {
    for (const auto& [path, e] : before.entries) model_[path] = Slot{true, true, path};
  }

  void Run() {
    for (const Record* r : session_.OpsThatMayHaveHappened()) {
      CheckOp(*r);
      Apply(*r);
    }
  }

 private:
  void Error(const Record& r, const std::string& which, const std::string& what) {
    report_->errors.push_back("op " + std::to_string(r.seq) + " " + OpKindName(r.kind) + " " + Printable(r.path) +
                              (r.path2.empty() ? "" : " -> " + Printable(r.path2)) + ": " + which + ": " + what);
  }

  void CheckState(const Record& r, const char* which, const std::string& path, bool outside,
                  const FileState& state, bool content_required) {
    if (outside) {
      // By name only: type unknown, no mode, no content. An operation that
      // creates the path may say it was absent (docs/format.md, the table
      // of operations).
      bool creates = r.kind == OpKind::kCreate || r.kind == OpKind::kMkdir || r.kind == OpKind::kSymlink ||
                     r.kind == OpKind::kMknod;
      bool type_ok = state.type == FileType::kUnknown || (creates && state.type == FileType::kAbsent);
      if (!type_ok || state.mode != 0 || state.blob.kind != BlobRef::Kind::kNone) {
        Error(r, which, "outside the root, yet a state was recorded (" + std::string(FileTypeName(state.type)) + ")");
      }
      return;
    }
    if (path == ".") return;
    content_required = content_required && state.type == FileType::kRegular;
    if (content_required && state.blob.kind == BlobRef::Kind::kNone) {
      Error(r, which, "no pre-image was captured");
      return;
    }
    auto it = model_.find(path);
    if (it == model_.end()) {
      if (state.type != FileType::kAbsent) {
        Error(r, which, std::string("recorded as ") + FileTypeName(state.type) + " but nothing was there");
      }
      return;
    }
    std::string content;
    bool has_content = state.blob.kind != BlobRef::Kind::kNone;
    if (has_content) {
      Status s = session_.ReadBlob(state.blob, &content);
      if (!s.ok()) {
        Error(r, which, "pre-image cannot be read: " + s.ToString());
        return;
      }
      if (content.size() != state.size) {
        Error(r, which, "pre-image holds " + std::to_string(content.size()) + " bytes, size says " +
                            std::to_string(state.size));
      }
    }
    const Slot& slot = it->second;
    if (!slot.known) return;  // changed earlier in this session: nothing to compare with
    const TreeEntry& e = before_.entries.at(slot.origin);
    ++report_->states_compared;
    std::string from = slot.origin == path ? "" : " (was " + Printable(slot.origin) + ")";
    if (state.type != e.type) {
      Error(r, which, std::string("type ") + FileTypeName(state.type) + ", before the run " + FileTypeName(e.type) + from);
      return;
    }
    if (slot.mode_known && state.mode != e.mode) {
      Error(r, which, "mode " + Mode(state.mode) + ", before the run " + Mode(e.mode) + from);
    }
    if (e.type == FileType::kSymlink) {
      if (state.symlink_target != e.target) {
        Error(r, which, "symlink target \"" + Printable(state.symlink_target) + "\", before the run \"" +
                            Printable(e.target) + "\"" + from);
      } else {
        report_->verified.insert(slot.origin);
      }
    }
    if (e.type == FileType::kRegular && has_content) {
      if (content != e.content) {
        TreeEntry got;
        got.type = FileType::kRegular;
        got.mode = state.mode;
        got.content = content;
        Error(r, which, "pre-image " + Describe(got) + ", before the run " + Describe(e) + from);
      } else {
        report_->verified.insert(slot.origin);
      }
    }
  }

  void CheckOp(const Record& r) {
    bool out1 = (r.flags & kOutsideRoot) != 0, out2 = (r.flags & kOutsideRoot2) != 0;
    switch (r.kind) {
      case OpKind::kModify:
      case OpKind::kDelete:
        CheckState(r, "before", r.path, out1, r.before, true);
        break;
      case OpKind::kRename:
        CheckState(r, "before", r.path, out1, r.before, out2);
        CheckState(r, "before2", r.path2, out2, r.before2, true);
        break;
      case OpKind::kExchange:
        CheckState(r, "before", r.path, out1, r.before, out2);
        CheckState(r, "before2", r.path2, out2, r.before2, out1);
        break;
      case OpKind::kLink:  // path2 is absent, or the call would fail
        CheckState(r, "before", r.path, out1, r.before, false);
        break;
      default:
        CheckState(r, "before", r.path, out1, r.before, false);
        break;
    }
  }

  void Apply(const Record& r) {
    bool out1 = (r.flags & kOutsideRoot) != 0, out2 = (r.flags & kOutsideRoot2) != 0;
    switch (r.kind) {
      case OpKind::kCreate:
      case OpKind::kModify:
      case OpKind::kMkdir:
      case OpKind::kSymlink:
      case OpKind::kMknod:
        if (!out1) MarkChanged(&model_, r.path);
        break;
      case OpKind::kDelete:
      case OpKind::kRmdir:
        if (!out1) Extract(&model_, r.path);
        break;
      case OpKind::kChmod:
        if (!out1) {
          if (auto it = model_.find(r.path); it != model_.end()) it->second.mode_known = false;
        }
        break;
      case OpKind::kLink:
        // Both names now share an inode: a write through either changes the
        // other, so neither is known any more.
        if (!out1) {
          if (auto it = model_.find(r.path); it != model_.end()) it->second = Slot();
        }
        if (!out2) MarkChanged(&model_, r.path2);
        break;
      case OpKind::kRename: {
        std::map<std::string, Slot> moved;
        if (!out1) moved = Extract(&model_, r.path);
        if (out2) break;
        Extract(&model_, r.path2);
        if (out1) model_[r.path2] = Slot();
        else Insert(&model_, r.path2, moved);
        break;
      }
      case OpKind::kExchange: {
        if (out1 || out2) {
          if (!out1) MarkChanged(&model_, r.path);
          if (!out2) MarkChanged(&model_, r.path2);
          break;
        }
        auto a = Extract(&model_, r.path);
        auto b = Extract(&model_, r.path2);
        Insert(&model_, r.path, b);
        Insert(&model_, r.path2, a);
        break;
      }
      default:
        break;
    }
  }

  const SessionView& session_;
  const TreeSnapshot& before_;
  PreImageReport* report_;
  Model model_;
};

}  // namespace

PreImageReport CheckPreImages(const SessionView& session, const TreeSnapshot& before) {
  PreImageReport report;
  Checker(session, before, &report).Run();
  return report;
}

std::vector<std::string> CheckFinalStates(const SessionView& session, const TreeSnapshot& after) {
  std::vector<std::string> errors;
  for (const Record& r : session.records()) {
    if (r.kind != OpKind::kFinal || IsPostImage(r)) continue;  // post-images: states while it ran
    if (r.path == ".") continue;  // the root itself is not in a snapshot
    std::string where = "final state of " + Printable(r.path) + ": ";
    const TreeEntry* e = after.Find(r.path);
    if (e == nullptr) {
      if (r.after.type != FileType::kAbsent) {
        errors.push_back(where + "recorded " + FileTypeName(r.after.type) + ", but the path is absent");
      }
      continue;
    }
    if (r.after.type != e->type) {
      errors.push_back(where + "recorded " + FileTypeName(r.after.type) + ", the tree holds " + Describe(*e));
      continue;
    }
    if (r.after.mode != e->mode) {
      errors.push_back(where + "mode " + Mode(r.after.mode) + ", the tree holds " + Describe(*e));
    }
    if (e->type == FileType::kSymlink && r.after.symlink_target != e->target) {
      errors.push_back(where + "target " + Printable(r.after.symlink_target) + ", the tree holds " + Describe(*e));
    }
    if (e->type == FileType::kRegular) {
      std::string content;
      Status s = session.ReadBlob(r.after.blob, &content);
      if (!s.ok()) errors.push_back(where + "content cannot be read: " + s.ToString());
      else if (content != e->content) errors.push_back(where + "content differs from " + Describe(*e));
    }
  }
  return errors;
}

}  // namespace guard::e2e
