#include "supervisor/base/git_dir_path.h"
#include "supervisor/review/change_trees.h"

#include <set>

#include "common/file_io.h"
#include "supervisor/review/git_tree_diff.h"
#include "supervisor/base/path_escape.h"
#include "supervisor/review/tree_materializer.h"

namespace guard {
namespace {

bool IsSpecial(const FileState& s) { return s.type == FileType::kOther || s.type == FileType::kUnknown; }

}  // namespace

Status ChangeTrees::Build(const SessionChanges& changes, const BlobStore* store, const std::string& scratch,
                          Options options, ChangeTrees* out) {
  out->scratch_ = scratch;
  out->after_paths_.clear();
  out->unknown_.clear();
  out->skipped_.clear();
  out->git_dir_paths_ = 0;
  out->git_dir_users_.clear();
  TreeMaterializer::Options mo;
  mo.owner_can_read = options.for_git;
  TreeMaterializer before, after;
  if (options.before) {
    GUARD_RETURN_IF_ERROR(MakeDirs(out->before_dir(), 0700));
    GUARD_RETURN_IF_ERROR(TreeMaterializer::Open(out->before_dir(), store, mo, &before));
  }
  GUARD_RETURN_IF_ERROR(MakeDirs(out->after_dir(), 0700));
  GUARD_RETURN_IF_ERROR(TreeMaterializer::Open(out->after_dir(), store, mo, &after));

  // A failure is about content (or an inconsistent history): the path is
  // reported and left out. Anything else (disk full in /tmp) ends the build.
  auto content_problem = [](const Status& s) {
    return s.IsNotFound() || s.IsCorruption() || s.code() == Status::Code::kInvalidArgument;
  };
  std::set<std::string> failed;
  std::vector<const PathChange*> candidates;
  for (const PathChange& c : changes.paths()) {
    if (options.skip_git_dirs && PathHasGitDir(c.path)) {
      ++out->git_dir_paths_;
      GitDirPath g;
      if (ParseGitDirPath(c.path, &g) && GitDirPathIsUsers(g)) out->git_dir_users_.push_back(c.path);
      continue;
    }
    if (!c.before_known || !c.after_known) {
      out->unknown_.push_back(EscapeForTerminal(c.path) + ": state " +
                              (c.before_known ? options.after_label : "before the session") +
                              " not recorded");
      continue;
    }
    if ((options.before && IsSpecial(c.before)) || IsSpecial(c.after)) {
      out->skipped_.push_back(EscapeForTerminal(c.path) + ": fifo, socket or device node, not reproduced");
    }
    candidates.push_back(&c);
  }
  size_t total = candidates.size() * (options.before ? 2 : 1), done = 0;
  auto step = [&] {
    if (options.progress) options.progress(++done, total);
  };
  if (options.before) {
    for (const PathChange* c : candidates) {
      step();
      if (IsSpecial(c->before)) continue;
      Status s = before.Put(c->path, c->before);
      if (s.ok()) continue;
      if (!content_problem(s)) return s;
      out->unknown_.push_back(EscapeForTerminal(s.message()) + " (before the session)");
      failed.insert(c->path);
    }
  }
  for (const PathChange* c : candidates) {
    step();
    if (failed.count(c->path) || IsSpecial(c->after)) continue;
    Status s = after.Put(c->path, c->after);
    if (s.ok()) {
      if (c->after.type != FileType::kAbsent && c->path != ".") out->after_paths_.push_back(c->path);
      continue;
    }
    if (!content_problem(s)) return s;
    out->unknown_.push_back(EscapeForTerminal(s.message()) + " (" + options.after_label + ")");
    if (options.before) GUARD_RETURN_IF_ERROR(before.Remove(c->path));
  }
  if (!options.for_git) {
    if (options.before) GUARD_RETURN_IF_ERROR(before.Finish());
    GUARD_RETURN_IF_ERROR(after.Finish());
  }
  return Status::Ok();
}

}  // namespace guard
