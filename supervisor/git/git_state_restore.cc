#include "supervisor/git/git_state_restore.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <set>

#include "common/file_io.h"
#include "common/os_calls.h"
#include "common/path_util.h"
#include "common/unique_fd.h"
#include "supervisor/base/scratch_dir.h"
#include "supervisor/base/tree_walk.h"
#include "supervisor/git/git_handles.h"

namespace guard {
namespace {

using Entries = GitStateRestore::Entries;
using EntryMap = std::map<std::string, Entries>;

std::string Short(const std::string& value) {
  if (value.empty()) return "(none)";
  if (value.compare(0, 5, "ref: ") == 0) return value.substr(5);
  return value.substr(0, 7);
}

// "git" or "git -C sub" for the repository of `git_dir` ("sub/.git"), run
// from the root.
std::string GitIn(const std::string& git_dir) {
  if (git_dir == ".git") return "git";
  return "git -C " + git_dir.substr(0, git_dir.size() - 5);
}

// The command that sets ref `name` to `value` by hand.
std::string RefCommand(const std::string& git_dir, const std::string& name, const std::string& value) {
  std::string git = GitIn(git_dir);
  if (value.empty()) return git + " update-ref -d " + name;
  if (value.compare(0, 5, "ref: ") == 0) return git + " symbolic-ref " + name + " " + value.substr(5);
  return git + (name == "HEAD" ? " update-ref --no-deref HEAD " : " update-ref " + name + " ") + value;
}

// The ref's value now: "", "ref: NAME" or the hex id.
Status CurrentValue(git_repository* repo, const std::string& name, std::string* value) {
  git_reference* raw = nullptr;
  int rc = git_reference_lookup(&raw, repo, name.c_str());
  if (rc == GIT_ENOTFOUND) {
    value->clear();
    return Status::Ok();
  }
  if (rc < 0) return GitError(rc, name);
  GitReference ref(raw);
  if (git_reference_type(ref.get()) == GIT_REFERENCE_SYMBOLIC) {
    *value = std::string("ref: ") + git_reference_symbolic_target(ref.get());
  } else {
    *value = OidHex(*git_reference_target(ref.get()));
  }
  return Status::Ok();
}

Status ReadEntries(const std::string& index_path, EntryMap* out) {
  git_index* raw = nullptr;
  int rc = git_index_open(&raw, index_path.c_str());
  if (rc < 0) return GitError(rc, "reading the index");
  GitIndex index(raw);
  for (size_t i = 0, n = git_index_entrycount(index.get()); i < n; ++i) {
    const git_index_entry* e = git_index_get_byindex(index.get(), i);
    GitStateRestore::Entry entry;
    entry.stage = git_index_entry_stage(e);
    entry.mode = e->mode;
    entry.oid = OidHex(e->id);
    (*out)[e->path].push_back(entry);
  }
  return Status::Ok();
}

// The entries of an index state recorded in the journal.
Status EntriesOf(const FileState& st, const BlobStore& store, const std::string& scratch, EntryMap* out) {
  out->clear();
  if (st.type == FileType::kAbsent) return Status::Ok();
  std::string path = scratch + "/index";
  unlink(path.c_str());
  UniqueFd fd;
  GUARD_RETURN_IF_ERROR(OpenFile(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600, &fd));
  uint64_t size = 0;
  GUARD_RETURN_IF_ERROR(store.ReadTo(st.blob, fd.get(), &size));
  fd.reset();
  return ReadEntries(path, out);
}

const Entries& At(const EntryMap& m, const std::string& path) {
  static const Entries kNone;
  auto it = m.find(path);
  return it == m.end() ? kNone : it->second;
}

std::string DescribeEntries(const Entries& e) {
  if (e.empty()) return "not staged";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%06o %s", e[0].mode, e[0].oid.substr(0, 7).c_str());
  return e.size() == 1 ? buf : std::string(buf) + " (+" + std::to_string(e.size() - 1) + " stages)";
}

std::string EntryCommand(const std::string& git_dir, const std::string& path, const Entries& target) {
  std::string git = GitIn(git_dir);
  if (target.empty()) return git + " rm --cached -q -- " + path;
  if (target.size() == 1 && target[0].stage == 0) {
    char mode[16];
    std::snprintf(mode, sizeof mode, "%06o", target[0].mode);
    return git + " update-index --add --cacheinfo " + mode + "," + target[0].oid + "," + path;
  }
  return git + " checkout -m -- " + path;
}

// Tells the restore's session (restore/restore_session.h) of each file
// libgit2 is about to change, as SafeTree does for its own changes, so that
// its pre-image is saved first and the session's end records what it holds.
class Announcer {
 public:
  Announcer(MutationSink* sink, const std::string& root) : sink_(sink), root_(root), tid_(os::ThreadId()) {}
  // `rel` is about to be written (or removed); false when the sink refused
  // it (its pre-image could not be saved). After() follows once it is done.
  bool Before(const std::string& rel, bool remove) {
    if (sink_ == nullptr) return true;
    std::string abs = PathJoin(root_, rel);
    Mutation m;
    m.tid = tid_;
    m.abs = abs;
    m.req.action = remove ? MutationRequest::Action::kUnlink : MutationRequest::Action::kOpen;
    m.req.syscall = remove ? "unlinkat" : "openat";
    m.req.flags = remove ? 0 : O_WRONLY | O_CREAT;
    m.req.mode = remove ? 0 : 0644;
    m.req.path = abs;
    return sink_->Before(m).deny_errno == 0;
  }
  void After(bool ok) {
    if (sink_ != nullptr) sink_->After(tid_, ok ? 0 : -EIO);
  }
  // A file the same libgit2 call changes besides the one announced last
  // (a reflog, packed-refs): its pre-image is saved now; what it holds
  // after is read from the tree when the session ends.
  bool Beside(const std::string& rel, bool remove) {
    struct stat st;
    if (remove && lstat(PathJoin(root_, rel).c_str(), &st) != 0) return true;  // nothing to remove
    if (!Before(rel, remove)) return false;
    After(true);
    return true;
  }

 private:
  MutationSink* sink_;
  std::string root_;
  pid_t tid_;
};

// libgit2 follows symlinks: every directory it writes in (`dirs`,
// root-relative) must be a real directory beneath the root, as SafeTree
// holds its own writes (a process left running may have swapped one for a
// symlink out of the tree since the plan). Each is checked just before.
Status Beneath(const std::string& root, const std::vector<std::string>& dirs) {
  UniqueFd root_fd;
  GUARD_RETURN_IF_ERROR(OpenFile(root, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, &root_fd));
  for (const std::string& d : dirs) {
    UniqueFd dir;
    Status s = OpenDirBeneath(root_fd.get(), d, O_PATH, &dir);
    if (!s.ok() && s.err() != ENOENT) return Status::InvalidArgument("refusing " + d + ": " + s.ToString());
  }
  return Status::Ok();
}

std::string DirOf(const std::string& rel) { return rel.substr(0, rel.rfind('/')); }

}  // namespace

Status GitStateRestore::Prepare(const std::string& root, const GitStatePlan& plan, const BlobStore& store,
                                GitStateRestore* out) {
  *out = GitStateRestore();
  out->root_ = root;
  if (plan.refs.empty() && plan.indexes.empty()) return Status::Ok();
  InitGitLibrary();
  std::map<std::string, GitRepository> repos;
  auto open = [&](const std::string& git_dir, git_repository** repo) -> Status {
    auto it = repos.find(git_dir);
    if (it == repos.end()) {
      git_repository* raw = nullptr;
      std::string path = PathJoin(root, git_dir);
      int rc = git_repository_open_ext(&raw, path.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr);
      if (rc < 0) return GitError(rc, "opening " + git_dir);
      it = repos.emplace(git_dir, GitRepository(raw)).first;
    }
    *repo = it->second.get();
    return Status::Ok();
  };

  for (const GitRefGoal& goal : plan.refs) {
    std::string rel = goal.git_dir + "/" + goal.name;
    git_repository* repo = nullptr;
    std::string current;
    Status s = open(goal.git_dir, &repo);
    if (s.ok()) s = CurrentValue(repo, goal.name, &current);
    if (!s.ok()) {
      out->conflicts_.push_back(rel + ": " + s.ToString() + "; left as it is");
      continue;
    }
    // No loose ref: the value packed-refs holds now (the session left it
    // untouched, or the file-level restore puts it back as it was).
    std::string packed;
    auto resolve = [&](const std::string& v) {
      if (v != kRefInPackedRefs) return v;
      if (packed.empty()) {
        if (!ReadFileToString(PathJoin(root, goal.git_dir + "/packed-refs"), &packed).ok()) packed = "\n";
      }
      return PackedRefValue(packed, goal.name);
    };
    std::string target = resolve(goal.target);
    if (current == target) {
      struct stat loose;
      if (!target.empty() && goal.target != kRefInPackedRefs && lstat(PathJoin(root, rel).c_str(), &loose) != 0) {
        out->refs_.push_back({goal.git_dir, goal.name, current, target, /*packed_only=*/true});
      }
      continue;
    }
    bool expected = false;
    for (const std::string& e : goal.expected) expected = expected || resolve(e) == current;
    if (!expected) {
      out->conflicts_.push_back(rel + ": moved since the session (it is " + Short(current) + " now); `" +
                                RefCommand(goal.git_dir, goal.name, target) + "` finishes it");
      continue;
    }
    out->refs_.push_back({goal.git_dir, goal.name, current, target});
    std::string action = target.empty()                         ? "delete ref"
                         : target.compare(0, 5, "ref: ") == 0   ? "point ref"
                         : current.empty()                      ? "create ref"
                                                                : "move ref";
    out->changes_.push_back({action, rel, Short(current) + " -> " + Short(target)});
  }

  for (const GitIndexGoal& goal : plan.indexes) {
    std::string rel = goal.git_dir + "/index";
    ScratchDir scratch;
    EntryMap now, target;
    Status s = scratch.Create("guard-index");
    std::string index_path = PathJoin(root, rel);
    struct stat st;
    if (s.ok() && lstat(index_path.c_str(), &st) == 0) s = ReadEntries(index_path, &now);
    if (s.ok()) s = EntriesOf(goal.target, store, scratch.path(), &target);
    // The session's paths: those whose entries differ between the target
    // and a state the tree may be in now.
    std::set<std::string> paths;
    std::vector<EntryMap> expected;
    for (const FileState& e : goal.expected) {
      EntryMap then;
      if (!s.ok() || !EntriesOf(e, store, scratch.path(), &then).ok()) continue;
      for (const auto& [p, entries] : then)
        if (At(target, p) != entries) paths.insert(p);
      for (const auto& [p, entries] : target)
        if (At(then, p) != entries) paths.insert(p);
      expected.push_back(std::move(then));
    }
    if (!s.ok() || expected.empty()) {
      out->conflicts_.push_back(rel + ": " + (s.ok() ? "the journal does not say what the session left in it" : s.ToString()) +
                                "; left as it is");
      continue;
    }
    IndexStep step;
    step.git_dir = goal.git_dir;
    std::string listed;
    for (const std::string& p : paths) {
      const Entries& cur = At(now, p);
      const Entries& want = At(target, p);
      if (cur == want) continue;
      bool moved_since = true;
      for (const EntryMap& then : expected) moved_since = moved_since && At(then, p) != cur;
      if (moved_since) {
        out->conflicts_.push_back(rel + ": the entry of " + p + " was staged since the session (" +
                                  DescribeEntries(cur) + "); `" + EntryCommand(goal.git_dir, p, want) +
                                  "` finishes it");
        continue;
      }
      step.current[p] = cur;
      step.target[p] = want;
      listed += (listed.empty() ? "" : ", ") + p;
    }
    if (step.target.empty()) continue;
    out->changes_.push_back({"restore entries", rel, std::to_string(step.target.size()) + " path(s): " + listed});
    out->indexes_.push_back(std::move(step));
  }
  return Status::Ok();
}

size_t GitStateRestore::Apply(MutationSink* sink, const std::string& message, std::vector<std::string>* failed) {
  if (refs_.empty() && indexes_.empty()) return 0;
  InitGitLibrary();
  Announcer announce(sink, root_);
  size_t changed = 0;
  for (const RefStep& r : refs_) {
    std::string rel = r.git_dir + "/" + r.name;
    git_repository* raw = nullptr;
    int rc = git_repository_open_ext(&raw, PathJoin(root_, r.git_dir).c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr);
    if (rc < 0) {
      failed->push_back(rel + ": " + GitError(rc, "opening " + r.git_dir).ToString());
      continue;
    }
    GitRepository repo(raw);
    std::string now;
    Status s = CurrentValue(repo.get(), r.name, &now);
    // Already there: the file-level restore put packed-refs back, which
    // held the ref's target value.
    if (s.ok() && now == r.target) continue;
    // Gone with packed-refs: written back as the loose ref it was.
    const std::string current = r.packed_only && now.empty() ? std::string() : r.current;
    if (s.ok() && now != current) {
      conflicts_.push_back(rel + ": moved while the restore ran (it is " + Short(now) + " now); `" +
                           RefCommand(r.git_dir, r.name, r.target) + "` finishes it");
      continue;
    }
    // The files git changes beside the ref: its reflog, HEAD's reflog (of
    // a branch HEAD points at), packed-refs (a deletion rewrites it).
    bool refused = !announce.Beside(r.git_dir + "/logs/" + r.name, r.target.empty());
    if (r.name != "HEAD") refused = refused || !announce.Beside(r.git_dir + "/logs/HEAD", false);
    struct stat packed;
    if (r.target.empty() && lstat(PathJoin(root_, r.git_dir + "/packed-refs").c_str(), &packed) == 0) {
      refused = refused || !announce.Beside(r.git_dir + "/packed-refs", false);
    }
    struct stat st;
    bool loose = lstat(PathJoin(root_, rel).c_str(), &st) == 0;
    bool announced = !refused && (r.target.empty() && !loose ? true : announce.Before(rel, r.target.empty()));
    if (!announced) {
      failed->push_back(rel + ": not changed: its pre-image could not be saved");
      continue;
    }
    if (s.ok()) s = Beneath(root_, {r.git_dir, DirOf(rel), DirOf(r.git_dir + "/logs/" + r.name)});
    // refs/stash's reflog is the stash list itself (`git stash list`): the
    // file-level restore has put it back as it was at the target, and the
    // move must not add an entry of its own to it (a second stash@{0} that
    // names the restore). Its content is written back after the move.
    const std::string reflog = PathJoin(root_, r.git_dir + "/logs/" + r.name);
    std::string stash_list;
    struct stat stash_st;
    const bool keep_stash_list = s.ok() && r.name == "refs/stash" && !r.target.empty() &&
                                 lstat(reflog.c_str(), &stash_st) == 0 && S_ISREG(stash_st.st_mode) &&
                                 ReadFileToString(reflog, &stash_list).ok();
    git_reference* out = nullptr;
    if (s.ok() && r.target.empty()) {
      rc = git_reference_lookup(&out, repo.get(), r.name.c_str());
      GitReference ref(out);
      if (rc == 0) rc = git_reference_delete(ref.get());
      if (rc < 0) s = GitError(rc, "deleting " + r.name);
    } else if (s.ok() && r.target.compare(0, 5, "ref: ") == 0) {
      bool was_symbolic = current.compare(0, 5, "ref: ") == 0;
      rc = git_reference_symbolic_create_matching(&out, repo.get(), r.name.c_str(), r.target.c_str() + 5, 1,
                                                  was_symbolic ? current.c_str() + 5 : nullptr, message.c_str());
      GitReference ref(out);
      if (rc < 0) s = GitError(rc, "pointing " + r.name + " at " + r.target.substr(5));
    } else if (s.ok()) {
      git_oid id, current_id;
      bool was_direct = !current.empty() && current.compare(0, 5, "ref: ") != 0 &&
                        git_oid_fromstr(&current_id, current.c_str()) == 0;
      rc = git_oid_fromstr(&id, r.target.c_str());
      if (rc == 0) {
        rc = git_reference_create_matching(&out, repo.get(), r.name.c_str(), &id, 1, was_direct ? &current_id : nullptr,
                                           message.c_str());
      }
      GitReference ref(out);
      if (rc < 0) s = GitError(rc, "moving " + r.name + " to " + r.target);
    }
    if (s.ok() && keep_stash_list) {
      Status kept = WriteFileAtomic(reflog, stash_list, stash_st.st_mode & 07777);
      if (!kept.ok()) failed->push_back(r.git_dir + "/logs/" + r.name + ": " + kept.ToString());
    }
    if (!(r.target.empty() && !loose)) announce.After(s.ok());
    if (rc == GIT_EMODIFIED) {
      conflicts_.push_back(rel + ": moved while the restore ran; `" + RefCommand(r.git_dir, r.name, r.target) +
                           "` finishes it");
    } else if (!s.ok()) {
      failed->push_back(rel + ": " + s.ToString());
    } else {
      ++changed;
    }
  }

  for (const IndexStep& step : indexes_) {
    std::string rel = step.git_dir + "/index";
    git_index* raw = nullptr;
    int rc = git_index_open(&raw, PathJoin(root_, rel).c_str());
    if (rc < 0) {
      failed->push_back(rel + ": " + GitError(rc, "reading the index").ToString());
      continue;
    }
    GitIndex index(raw);
    EntryMap now;
    for (size_t i = 0, n = git_index_entrycount(index.get()); i < n; ++i) {
      const git_index_entry* e = git_index_get_byindex(index.get(), i);
      if (step.current.count(e->path)) now[e->path].push_back({git_index_entry_stage(e), e->mode, OidHex(e->id)});
    }
    size_t set = 0;
    Status s;
    for (const auto& [path, want] : step.target) {
      if (At(now, path) != step.current.at(path)) {
        conflicts_.push_back(rel + ": the entry of " + path + " was staged while the restore ran; `" +
                             EntryCommand(step.git_dir, path, want) + "` finishes it");
        continue;
      }
      for (const Entry& e : At(now, path)) git_index_remove(index.get(), path.c_str(), e.stage);
      for (const Entry& e : want) {
        // No stat data: git compares the file's content once and refreshes it.
        git_index_entry entry{};
        entry.mode = e.mode;
        entry.flags = static_cast<uint16_t>((e.stage << GIT_INDEX_ENTRY_STAGESHIFT) & GIT_INDEX_ENTRY_STAGEMASK);
        entry.path = path.c_str();
        git_oid_fromstr(&entry.id, e.oid.c_str());
        rc = git_index_add(index.get(), &entry);
        if (rc < 0 && s.ok()) s = GitError(rc, "setting the entry of " + path);
      }
      ++set;
    }
    if (!s.ok()) {
      failed->push_back(rel + ": " + s.ToString() + "; left as it is");
      continue;
    }
    if (set == 0) continue;
    if (Status beneath = Beneath(root_, {step.git_dir}); !beneath.ok()) {
      failed->push_back(rel + ": " + beneath.ToString());
      continue;
    }
    if (!announce.Before(rel, false)) {
      failed->push_back(rel + ": not changed: its pre-image could not be saved");
      continue;
    }
    rc = git_index_write(index.get());
    announce.After(rc == 0);
    if (rc < 0) {
      failed->push_back(rel + ": " + GitError(rc, "writing the index").ToString() + "; left as it is");
      continue;
    }
    ++changed;
  }
  return changed;
}

}  // namespace guard
