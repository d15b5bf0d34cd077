#include "supervisor/git/session_tree.h"

#include <sys/stat.h>

#include <map>
#include <set>

#include "common/path_util.h"

namespace guard {
namespace {

struct Update {
  git_tree_update_t action;
  git_oid id{};
  git_filemode_t mode = GIT_FILEMODE_BLOB;
  char kind = 'D';  // TreeChange::kind
  bool base_is_tree = false;
};

// The entry of `base` at repository path `path`, if any.
bool BaseEntry(const git_tree* base, const std::string& path, git_filemode_t* mode, git_oid* id) {
  if (base == nullptr) return false;
  git_tree_entry* e = nullptr;
  if (git_tree_entry_bypath(&e, base, path.c_str()) != 0) return false;
  GitTreeEntry owned(e);
  *mode = git_tree_entry_filemode(e);
  git_oid_cpy(id, git_tree_entry_id(e));
  return true;
}

// The git blob id of regular file state `st`, never holding its content
// whole: the id git's index proves for this very state (the content in the
// store is then that blob's), else the one the session's cache names for
// its store blob, else the content streamed from the store and hashed.
// `blob` says where the pack will stream it from.
Status FileBlobId(const std::string& path, const FileState& st, const BlobStore& store, const TreeOptions& options,
                  git_oid* id, StoredBlob* blob) {
  blob->ref = st.blob;
  if (options.index != nullptr && options.index->Find(path, st, id)) {
    blob->size = st.size;
  } else if (options.ids == nullptr || !options.ids->Find(st.blob, id, &blob->size)) {
    if (Status s = HashStoredBlob(store, st.blob, st.size, id, &blob->size); !s.ok()) {
      return Status::IOError(path + ": saved content: " + s.ToString());
    }
    if (options.ids != nullptr) options.ids->Add(st.blob, *id, blob->size);
  }
  git_oid_cpy(&blob->id, id);
  return Status::Ok();
}

Status WriteBlob(git_repository* repo, const BlobStore& store, const std::string& path, const FileState& st,
                 git_oid* id) {
  std::string data;
  if (st.type == FileType::kSymlink) {
    data = st.symlink_target;
  } else if (Status s = store.ReadToString(st.blob, &data); !s.ok()) {
    return Status::IOError(path + ": saved content: " + s.ToString());
  }
  int rc = git_blob_create_from_buffer(id, repo, data.data(), data.size());
  if (rc < 0) return GitError(rc, path);
  return Status::Ok();
}

// Whether a directory above repository path `path` is a gitlink (a
// submodule) in `base`; `*at` names it. `cache`: answers by directory.
bool BelowGitlink(const git_tree* base, const std::string& path, std::map<std::string, bool>* cache,
                  std::string* at) {
  if (base == nullptr) return false;
  return ForEachAncestor(path, [&](const std::string& dir) {
    auto it = cache->find(dir);
    if (it == cache->end()) {
      git_filemode_t mode;
      git_oid id;
      it = cache->emplace(dir, BaseEntry(base, dir, &mode, &id) && mode == GIT_FILEMODE_COMMIT).first;
    }
    if (it->second) *at = dir;
    return it->second;
  });
}

// The commit the submodule at repository path `path` has checked out, or
// false when it has none to tell (not cloned, unborn, unreadable).
bool SubmoduleHead(const WorkTreeRepo& repo, const std::string& path, git_oid* out) {
  git_repository* sub = nullptr;
  std::string dir = repo.work_tree() + "/" + path;
  if (git_repository_open_ext(&sub, dir.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0) return false;
  GitRepository owned(sub);
  return git_reference_name_to_id(out, sub, "HEAD") == 0;
}

// Whether `path`, which the base does not hold, is one `git add` leaves
// out: ignored and not in git's index.
bool IgnoredAndUntracked(git_repository* repo, const std::string& path, GitIndex* index, bool* index_read) {
  int ignored = 0;
  if (git_ignore_path_is_ignored(&ignored, repo, path.c_str()) != 0 || ignored == 0) return false;
  if (!*index_read) {
    *index_read = true;
    git_index* idx = nullptr;
    if (git_repository_index(&idx, repo) == 0) index->reset(idx);
  }
  return *index == nullptr || git_index_get_bypath(index->get(), path.c_str(), 0) == nullptr;
}

bool HasAncestorIn(const std::string& path, const std::map<std::string, Update>& updates) {
  return ForEachAncestor(path, [&](const std::string& dir) { return updates.count(dir) > 0; });
}

}  // namespace

Status SessionTree::Build(const WorkTreeRepo& repo, const git_tree* base, const SessionChanges& changes,
                          const BlobStore& store, SessionTree* out, const TreeOptions& options) {
  *out = SessionTree();
  std::map<std::string, Update> updates;  // by repository path
  std::map<std::string, bool> gitlink_dirs;
  std::set<std::string> submodules;  // gitlinks of the base with touched paths below
  GitIndex git_index;
  bool index_loaded = false;
  for (const PathChange& c : changes.paths()) {
    std::string path;
    if (!repo.RepoPath(c.path, &path)) {
      if (c.path != ".") ++out->excluded;
      continue;
    }
    std::string submodule;
    if (BelowGitlink(base, path, &gitlink_dirs, &submodule)) {
      out->in_submodule.push_back(path);
      submodules.insert(submodule);
      continue;
    }
    const FileState& st = c.after;
    bool content_known = st.type != FileType::kRegular || st.blob.kind != BlobRef::Kind::kNone;
    if (!c.after_known || st.type == FileType::kUnknown || !content_known) {
      ++out->unknown;
      continue;
    }
    git_filemode_t base_mode = GIT_FILEMODE_UNREADABLE;
    git_oid base_id;
    bool in_base = BaseEntry(base, path, &base_mode, &base_id);
    if (!in_base && options.leave_out_ignored && (st.type == FileType::kRegular || st.type == FileType::kSymlink) &&
        IgnoredAndUntracked(repo.get(), path, &git_index, &index_loaded)) {
      out->ignored.push_back(path);
      continue;
    }
    Update u;
    StoredBlob blob;
    u.base_is_tree = in_base && base_mode == GIT_FILEMODE_TREE;
    switch (st.type) {
      case FileType::kRegular:
      case FileType::kSymlink:
        u.action = GIT_TREE_UPDATE_UPSERT;
        u.mode = st.type == FileType::kSymlink ? GIT_FILEMODE_LINK
                 : (st.mode & S_IXUSR)        ? GIT_FILEMODE_BLOB_EXECUTABLE
                                              : GIT_FILEMODE_BLOB;
        if (st.type == FileType::kSymlink) {
          GUARD_RETURN_IF_ERROR(WriteBlob(repo.get(), store, path, st, &u.id));
        } else {
          GUARD_RETURN_IF_ERROR(FileBlobId(path, st, store, options, &u.id, &blob));
        }
        if (in_base && base_mode == u.mode && git_oid_equal(&base_id, &u.id)) break;  // as in the base
        u.kind = in_base ? 'M' : 'A';
        updates[path] = u;
        out->new_objects.push_back(u.id);
        if (st.type == FileType::kRegular) out->stored.push_back(blob);
        break;
      case FileType::kDirectory:
        // Its content is touched paths of its own, or untouched and in the
        // base already (a submodule's too); only a file the base has at its
        // name must go.
        if (in_base && base_mode != GIT_FILEMODE_TREE && base_mode != GIT_FILEMODE_COMMIT) {
          u.action = GIT_TREE_UPDATE_REMOVE;
          updates[path] = u;
        }
        break;
      default:  // absent, or a fifo, socket or device node git cannot hold
        if (in_base) {
          u.action = GIT_TREE_UPDATE_REMOVE;
          updates[path] = u;
        }
        break;
    }
  }
  // A submodule the session worked in: its gitlink follows its HEAD, as
  // `git commit -a` would record it (the commit is the submodule's object,
  // not one this repository's pack carries).
  for (const std::string& sub : submodules) {
    git_filemode_t mode;
    git_oid base_id, head;
    if (updates.count(sub) > 0 || !BaseEntry(base, sub, &mode, &base_id) || !SubmoduleHead(repo, sub, &head) ||
        git_oid_equal(&head, &base_id)) {
      continue;
    }
    Update u;
    u.action = GIT_TREE_UPDATE_UPSERT;
    u.id = head;
    u.mode = GIT_FILEMODE_COMMIT;
    u.kind = 'M';
    updates[sub] = u;
  }
  // A removal below a path that is itself replaced or removed is part of
  // that update; given separately it would name a directory that is gone.
  std::vector<git_tree_update> list;
  std::vector<std::string> names;
  for (const auto& [path, u] : updates) {
    if (u.action == GIT_TREE_UPDATE_REMOVE && HasAncestorIn(path, updates)) continue;
    names.push_back(path);
  }
  for (const std::string& path : names) {
    const Update& u = updates[path];
    git_tree_update t{};
    t.action = u.action;
    t.id = u.id;
    t.filemode = u.mode;
    t.path = path.c_str();
    list.push_back(t);
    if (u.action == GIT_TREE_UPDATE_REMOVE) ++out->removed; else ++out->written;
    out->changes.push_back({path, u.kind, u.base_is_tree});
  }
  git_repository* r = repo.get();
  if (list.empty() && base != nullptr) {
    git_oid_cpy(&out->tree, git_tree_id(base));
    return Status::Ok();
  }
  int rc;
  // git_tree_create_updated refuses to put a file where the base has a
  // directory or to descend through a file (a D/F conflict), whatever the
  // order of the updates: everything that goes, or changes between file
  // and directory, is removed first, over which the upserts then apply.
  std::vector<git_tree_update> removals, upserts;
  for (const git_tree_update& u : list) {
    if (u.action == GIT_TREE_UPDATE_REMOVE) {
      removals.push_back(u);
      continue;
    }
    upserts.push_back(u);
    git_filemode_t mode;
    git_oid id;
    if (BaseEntry(base, u.path, &mode, &id) && mode == GIT_FILEMODE_TREE) {
      git_tree_update r = u;
      r.action = GIT_TREE_UPDATE_REMOVE;
      removals.push_back(r);
    }
  }
  GitTree start;
  if (base != nullptr) {
    git_tree* copy = nullptr;
    rc = git_tree_dup(&copy, const_cast<git_tree*>(base));
    if (rc < 0) return GitError(rc, "the base tree");
    start.reset(copy);
  } else {
    // git_tree_create_updated needs a baseline: the empty tree.
    git_treebuilder* tb = nullptr;
    rc = git_treebuilder_new(&tb, r, nullptr);
    if (rc < 0) return GitError(rc, "empty tree");
    git_oid empty;
    rc = git_treebuilder_write(&empty, tb);
    git_treebuilder_free(tb);
    if (rc < 0) return GitError(rc, "empty tree");
    git_tree* t = nullptr;
    rc = git_tree_lookup(&t, r, &empty);
    if (rc < 0) return GitError(rc, "empty tree");
    start.reset(t);
  }
  if (!removals.empty()) {
    git_oid removed;
    rc = git_tree_create_updated(&removed, r, start.get(), removals.size(), removals.data());
    if (rc < 0) return GitError(rc, "building the tree (removals)");
    git_tree* t = nullptr;
    rc = git_tree_lookup(&t, r, &removed);
    if (rc < 0) return GitError(rc, "building the tree (removals)");
    start.reset(t);
  }
  rc = git_tree_create_updated(&out->tree, r, start.get(), upserts.size(), upserts.data());
  if (rc < 0) return GitError(rc, "building the tree");
  // The trees above every changed path are new: list them for the pack.
  git_tree* root = nullptr;
  rc = git_tree_lookup(&root, r, &out->tree);
  if (rc < 0) return GitError(rc, "the new tree");
  GitTree owned_root(root);
  std::set<std::string> dirs;
  for (const std::string& path : names) {
    for (size_t slash = path.find('/'); slash != std::string::npos; slash = path.find('/', slash + 1)) {
      dirs.insert(path.substr(0, slash));
    }
  }
  for (const std::string& d : dirs) {
    git_tree_entry* e = nullptr;
    if (git_tree_entry_bypath(&e, root, d.c_str()) != 0) continue;  // removed with its content
    GitTreeEntry owned(e);
    if (git_tree_entry_type(e) == GIT_OBJECT_TREE) out->new_objects.push_back(*git_tree_entry_id(e));
  }
  out->new_objects.push_back(out->tree);
  return Status::Ok();
}

}  // namespace guard
