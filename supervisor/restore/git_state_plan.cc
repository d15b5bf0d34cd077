#include "supervisor/restore/git_state_plan.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/file_io.h"
#include "common/path_util.h"
#include "supervisor/base/git_dir_path.h"
#include "supervisor/restore/restore.h"
#include "supervisor/restore/safe_tree.h"

namespace guard {
namespace {

bool IsHex(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

// The ref value a recorded state of a loose ref file of `git_dir` stands
// for at `at`, or false when the journal cannot say (content not captured,
// not a file).
bool RefValueOf(const SessionHistory& history, const BlobStore& store, const std::string& git_dir,
                const std::string& name, uint64_t at, const FileState& st, std::string* value) {
  if (st.type == FileType::kAbsent) {
    FileState packed;
    if (!history.StateAfter(git_dir + "/packed-refs", at, &packed)) {
      *value = kRefInPackedRefs;  // untouched by the session: as it is now
      return true;
    }
    std::string content;
    if (packed.type == FileType::kRegular &&
        (packed.blob.kind == BlobRef::Kind::kNone || !store.ReadToString(packed.blob, &content).ok())) {
      return false;
    }
    *value = PackedRefValue(content, name);
    return true;
  }
  if (st.type != FileType::kRegular || st.blob.kind == BlobRef::Kind::kNone) return false;
  std::string content;
  if (!store.ReadToString(st.blob, &content).ok()) return false;
  return ParseLooseRef(content, value);
}

// Whether the repository of `git_dir` is there now and was there at the
// target: else its .git is restored as any directory (a session that ran
// `git init` is undone by removing the repository it made).
bool RepositoryKept(const SessionHistory& history, const SafeTree& tree, uint64_t boundary,
                    const std::string& git_dir) {
  FileState now;
  if (!tree.Stat(git_dir, &now).ok() || now.type != FileType::kDirectory) return false;
  FileState then;
  if (history.StateAfter(git_dir, boundary, &then) && then.type != FileType::kDirectory) return false;
  FileState head;
  return !history.StateAfter(git_dir + "/HEAD", boundary, &head) || head.type == FileType::kRegular;
}

// Whether reflog `c` has only gained lines since a state the tree may be in
// now (a ref moved since, an earlier restore's own entry): then it is no
// conflict. Restored as it was, the lines it loses are saved in the
// restore's own session.
bool OnlyAppendedTo(const SessionHistory& history, const SafeTree& tree, const BlobStore& store,
                    const std::vector<uint64_t>& expected_at, const RestoreItem& c) {
  constexpr uint64_t kMaxReflog = 64 << 20;
  if (c.current.type != FileType::kRegular || c.current.size > kMaxReflog) return false;
  std::string now;
  if (!ReadFileToString(PathJoin(tree.root(), c.path), &now).ok()) return false;
  for (uint64_t at : expected_at) {
    FileState st;
    std::string then;
    if (!history.StateAfter(c.path, at, &st) || st.type != FileType::kRegular || st.blob.kind == BlobRef::Kind::kNone ||
        !store.ReadToString(st.blob, &then).ok()) {
      continue;
    }
    if (now.size() >= then.size() && now.compare(0, then.size(), then) == 0) return true;
  }
  return false;
}

}  // namespace

std::string PackedRefValue(const std::string& packed, const std::string& name) {
  size_t pos = 0;
  while (pos < packed.size()) {
    size_t end = packed.find('\n', pos);
    if (end == std::string::npos) end = packed.size();
    std::string line = packed.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty() || line[0] == '#' || line[0] == '^') continue;
    size_t space = line.find(' ');
    if (space != std::string::npos && line.compare(space + 1, std::string::npos, name) == 0) return line.substr(0, space);
  }
  return "";
}

bool ParseLooseRef(const std::string& content, std::string* value) {
  std::string line = content.substr(0, content.find('\n'));
  if (line.compare(0, 5, "ref: ") == 0 && line.size() > 5) {
    *value = line;
    return true;
  }
  if ((line.size() == 40 || line.size() == 64) && IsHex(line)) {
    *value = line;
    return true;
  }
  return false;
}

Status PlanGitState(const SessionHistory& history, const SafeTree& tree, const BlobStore& store,
                    const std::vector<uint64_t>& expected_at, RestorePlan* plan) {
  GitStatePlan& git = plan->git;
  std::map<std::string, bool> kept;  // git_dir -> RepositoryKept
  auto repo_kept = [&](const std::string& git_dir) {
    auto it = kept.find(git_dir);
    if (it == kept.end()) it = kept.emplace(git_dir, RepositoryKept(history, tree, plan->boundary, git_dir)).first;
    return it->second;
  };
  std::set<std::string> drop;
  // Refs and the index: every one with a target, changed or not (the file
  // may match while the ref it stands for does not, through packed-refs).
  for (const RestoreItem& c : plan->targets) {
    GitDirPath g;
    if (!ParseGitDirPath(c.path, &g) || !repo_kept(g.git_dir)) continue;
    if (g.part == GitDirPart::kRef) {
      drop.insert(c.path);
      if (c.target.type == FileType::kDirectory) continue;  // refs/heads/: git makes and removes them
      GitRefGoal goal;
      goal.git_dir = g.git_dir;
      goal.name = g.inner;
      std::string value;
      if (!RefValueOf(history, store, g.git_dir, g.inner, plan->boundary, c.target, &value)) {
        git.left.push_back(c.path + ": the journal does not say which commit it named then; left as it is");
        continue;
      }
      goal.target = value;
      for (uint64_t at : expected_at) {
        FileState st;
        if (history.StateAfter(c.path, at, &st) && RefValueOf(history, store, g.git_dir, g.inner, at, st, &value)) {
          goal.expected.push_back(value);
        }
      }
      git.refs.push_back(std::move(goal));
    } else if (g.part == GitDirPart::kIndex) {
      drop.insert(c.path);
      if (c.target.type != FileType::kRegular && c.target.type != FileType::kAbsent) continue;
      GitIndexGoal goal;
      goal.git_dir = g.git_dir;
      goal.target = c.target;
      for (uint64_t at : expected_at) {
        FileState st;
        if (history.StateAfter(c.path, at, &st) &&
            (st.type == FileType::kAbsent || (st.type == FileType::kRegular && st.blob.kind != BlobRef::Kind::kNone))) {
          goal.expected.push_back(st);
        }
      }
      git.indexes.push_back(std::move(goal));
    } else if (g.part == GitDirPart::kObject) {
      // Written back when missing (exact: the content is the name), never
      // removed, never written over.
      bool write_back = c.current.type == FileType::kAbsent && c.target.type != FileType::kAbsent;
      if (!write_back) {
        drop.insert(c.path);
        if (!c.matched) ++git.objects_kept;
      }
    }
  }
  for (RestoreItem& c : plan->changes) {
    GitDirPath g;
    if (!ParseGitDirPath(c.path, &g) || !repo_kept(g.git_dir) || drop.count(c.path)) continue;
    if (g.part == GitDirPart::kObject) {
      c.conflict = false;  // an object is what its name says
    } else if (g.part == GitDirPart::kRunsCode && c.conflict) {
      c.conflict = false;
      plan->notes.push_back(c.path + ": restored although it changed since the session: git runs it or obeys it "
                                     "(what it holds now is saved in the restore's own session)");
    } else if (c.conflict && g.inner.compare(0, 5, "logs/") == 0 && OnlyAppendedTo(history, tree, store, expected_at, c)) {
      c.conflict = false;
    } else if (c.conflict) {
      drop.insert(c.path);
      git.left.push_back(c.path + ": changed since the session; left as it is");
    }
  }
  auto dropped = [&](const RestoreItem& c) { return drop.count(c.path) > 0; };
  plan->targets.erase(std::remove_if(plan->targets.begin(), plan->targets.end(), dropped), plan->targets.end());
  plan->changes.erase(std::remove_if(plan->changes.begin(), plan->changes.end(), dropped), plan->changes.end());
  return Status::Ok();
}

}  // namespace guard
