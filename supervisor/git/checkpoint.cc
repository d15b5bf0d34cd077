#include "supervisor/git/checkpoint.h"

#include <limits.h>
#include <stdlib.h>

#include "common/session_marks.h"
#include "supervisor/git/checkpoint_failure.h"
#include "supervisor/git/git_test_pause.h"
#include "supervisor/git/head_file.h"
#include "supervisor/git/git_handles.h"
#include "supervisor/git/object_pack.h"
#include "supervisor/git/session_tree.h"
#include "supervisor/git/commit_signature.h"
#include "supervisor/git/work_tree_repo.h"

namespace guard {

std::string CheckpointRef(const std::string& session_id) { return "refs/guard/" + session_id; }

std::string SessionSummaryLine(const SessionMeta& meta) {
  std::string cmd;
  for (const std::string& a : meta.argv) {
    if (!cmd.empty()) cmd += ' ';
    cmd += a;
  }
  constexpr size_t kMax = 60;
  if (cmd.size() > kMax) cmd = cmd.substr(0, kMax - 3) + "...";
  return "guard session " + meta.id + ": " + cmd;
}

std::string SessionMarksLines(const SessionHistory& history, uint64_t to_seq) {
  constexpr size_t kMaxListed = 20;
  std::string lines;
  size_t listed = 0, more = 0;
  const std::vector<Record>& marks = history.marks();
  for (size_t i = 0; i < marks.size(); ++i) {
    const Record& m = marks[i];
    if (m.seq > to_seq) break;
    if (m.flags & kStepMark) continue;
    if (listed == kMaxListed) {
      ++more;
      continue;
    }
    // One line each: a label's own newlines would break the list.
    std::string label = m.label;
    for (char& c : label) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    lines += "  @" + std::to_string(i + 1) + " " + label + "\n";
    ++listed;
  }
  if (lines.empty()) return "";
  if (more > 0) lines += "  ... and " + std::to_string(more) + " more\n";
  return "Marks:\n" + lines;
}

bool TakesAutomaticCheckpoints(const SessionMeta& meta) {
  return !(meta.argv.size() > 1 && meta.argv[1] == "__restore");
}

std::string GitHeadAt(const std::string& root, const std::string& state_dir) {
  // At every session's start: the files first, libgit2 only when they are
  // not the common layout (head_file.h).
  std::string hex;
  switch (ReadHeadFile(root, &hex)) {
    case HeadFile::kCommit: return hex;
    case HeadFile::kUnborn:
    case HeadFile::kNone: return "";
    case HeadFile::kUnknown: break;
  }
  WorkTreeRepo repo;
  if (!WorkTreeRepo::Open(root, state_dir, &repo).ok()) return "";
  git_oid head;
  if (!repo.HeadCommit(&head).ok()) return "";
  return OidHex(head);
}

bool InGitWorkTree(const std::string& root, const std::string& state_dir) {
  WorkTreeRepo repo;
  // Any other failure is WriteCheckpoint's to report.
  return !WorkTreeRepo::Open(root, state_dir, &repo).IsNotFound();
}

Status WriteCheckpoint(const CheckpointRequest& request, CheckpointResult* out) {
  *out = CheckpointResult();
  const SessionMeta& meta = request.history->meta();
  WorkTreeRepo repo;
  if (Status s = WorkTreeRepo::Open(meta.root, request.state_dir, &repo); !s.ok()) {
    if (!s.IsNotFound()) return s;
    out->no_repository = true;
    return Status::Ok();
  }
  git_repository* r = repo.get();
  const std::string ref = CheckpointRef(meta.id);

  // The parent: the last checkpoint, else HEAD at the session's start.
  git_oid parent_id;
  bool ref_exists = git_reference_name_to_id(&parent_id, r, ref.c_str()) == 0;
  bool has_parent = ref_exists;
  if (!ref_exists && !meta.git_head.empty()) {
    if (git_oid_fromstr(&parent_id, meta.git_head.c_str()) != 0) {
      return Status::Corruption("session " + meta.id + ": git_head is not a commit id: " + meta.git_head);
    }
    has_parent = true;
  }
  GitCommit parent;
  GitTree base;
  if (has_parent) {
    git_commit* c = nullptr;
    int rc = git_commit_lookup(&c, r, &parent_id);
    if (rc < 0) return GitError(rc, "the checkpoint's parent " + OidHex(parent_id));
    parent.reset(c);
    git_tree* t = nullptr;
    rc = git_commit_tree(&t, c);
    if (rc < 0) return GitError(rc, "the tree of " + OidHex(parent_id));
    base.reset(t);
    out->parent = OidHex(parent_id);
  }

  ObjectPack pack;
  GUARD_RETURN_IF_ERROR(pack.Attach(r));
  // At a mark, the parent may hold later states of paths the session went
  // on to touch: every touched path is written as it was at the mark.
  SessionChanges changes = request.to_seq == kSessionEnd
                               ? SessionChanges::Collect(*request.history, kSessionEnd, {})
                               : SessionChanges::CollectEveryPathAt(*request.history, request.to_seq);
  // git's index names the blobs of the files git itself wrote (a checkout,
  // a merge): those are not read back and hashed (index_oids.h).
  IndexOids index = IndexOids::Load(repo);
  SessionTree tree;
  TreeOptions options;
  options.index = &index;
  BlobIdCache ids = BlobIdCache::Load(request.blob_ids);
  if (!request.blob_ids.empty()) options.ids = &ids;
  GUARD_RETURN_IF_ERROR(SessionTree::Build(repo, base.get(), changes, *request.store, &tree, options));
  out->in_submodule = tree.in_submodule.size();
  // The ids hold whatever becomes of this checkpoint: kept for the next.
  (void)ids.Save();
  out->paths = tree.changes.size();
  out->unknown = tree.unknown;
  if (base != nullptr && git_oid_equal(&tree.tree, git_tree_id(base.get()))) {
    if (ref_exists) out->commit = OidHex(parent_id);
    return Status::Ok();
  }

  git_tree* t = nullptr;
  int rc = git_tree_lookup(&t, r, &tree.tree);
  if (rc < 0) return GitError(rc, "the checkpoint's tree");
  GitTree new_tree(t);
  GitSignature sig;
  GUARD_RETURN_IF_ERROR(CommitSignature(r, &sig));
  std::string message = request.message;
  if (message.empty()) {
    message = SessionSummaryLine(meta) + "\n\nCheckpoint of guard session " + meta.id + ": " +
              std::to_string(tree.changes.size()) + " path(s) changed since its parent.\n";
    if (!request.at_label.empty()) message += "At mark " + request.at_label + ".\n";
    if (std::string marks = SessionMarksLines(*request.history, request.to_seq); !marks.empty()) {
      message += "\n" + marks;
    }
  } else if (message.back() != '\n') {
    message += '\n';
  }
  const git_commit* parents[1] = {parent.get()};
  git_oid commit_id;
  rc = git_commit_create(&commit_id, r, nullptr, sig.get(), sig.get(), nullptr, message.c_str(), new_tree.get(),
                         has_parent ? 1 : 0, parents);
  if (rc < 0) return GitError(rc, "the checkpoint commit");
  tree.new_objects.insert(tree.new_objects.begin(), commit_id);
  GUARD_RETURN_IF_ERROR(pack.Write(tree.new_objects, tree.stored, request.store));
  // The pack is kept from git gc until the ref below names it (pack_writer.h).
  GitTestPause("checkpoint-ref");

  // Moved only from the parent this checkpoint was built on: two writers
  // (the session's own timer, `guard checkpoint`) never drop a link.
  git_reference* written = nullptr;
  std::string log = "guard checkpoint: " + meta.id;
  rc = ref_exists ? git_reference_create_matching(&written, r, ref.c_str(), &commit_id, 1, &parent_id, log.c_str())
                  : git_reference_create(&written, r, ref.c_str(), &commit_id, 0, log.c_str());
  if (rc < 0) return GitError(rc, ref);
  git_reference_free(written);
  out->written = true;
  out->commit = OidHex(commit_id);
  return Status::Ok();
}

Status CheckpointSession(const StateDir& state, const std::string& id, uint64_t to_seq,
                         const std::string& message, CheckpointResult* out, const std::string& at_mark) {
  SessionHistory history;
  GUARD_RETURN_IF_ERROR(SessionHistory::Load(state, id, &history));
  std::string at_label;
  if (!at_mark.empty()) {
    size_t index;
    GUARD_RETURN_IF_ERROR(FindMark(history, at_mark, &index));
    GUARD_RETURN_IF_ERROR(MarkSeq(history, at_mark, &to_seq));
    at_label = "@" + std::to_string(index + 1) + " " + history.marks()[index].label;
  }
  std::unique_ptr<BlobStore> store;
  GUARD_RETURN_IF_ERROR(BlobStore::Open(state.store_dir(), &store));
  char real[PATH_MAX];
  std::string state_dir = ::realpath(state.path().c_str(), real) != nullptr ? real : state.path();
  CheckpointRequest request;
  request.history = &history;
  request.store = store.get();
  request.state_dir = state_dir;
  request.to_seq = to_seq;
  request.message = message;
  request.at_label = at_label;
  request.blob_ids = state.session_dir(id) + "/git-blob-ids";
  // Once more on failure: what fails a checkpoint is mostly something beside
  // it that is over by then (a `git gc --prune=now` removing the pack
  // directory or a temporary pack under it, a ref locked for a moment).
  // Written from scratch: the first attempt left nothing a ref names.
  Status s = WriteCheckpoint(request, out);
  if (!s.ok()) s = WriteCheckpoint(request, out);
  NoteCheckpointOutcome(state, id, s);
  return s;
}

}  // namespace guard
