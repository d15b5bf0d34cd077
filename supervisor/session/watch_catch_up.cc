#include "supervisor/session/watch_catch_up.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <set>

#include "common/path_util.h"
#include "supervisor/capture/capture.h"
#include "supervisor/session/watch_baseline.h"
#include "supervisor/watch/watched_tree.h"

namespace guard {
namespace {

// A path's ctime and, where the filesystem keeps one, its birth time (-1
// when it does not), in ns; false when it cannot be read.
bool Times(const std::string& abs, int64_t* ctime_ns, int64_t* birth_ns) {
#if defined(__APPLE__)
  struct stat st;
  if (lstat(abs.c_str(), &st) != 0) return false;
  *ctime_ns = static_cast<int64_t>(st.st_ctimespec.tv_sec) * 1000000000 + st.st_ctimespec.tv_nsec;
  *birth_ns = static_cast<int64_t>(st.st_birthtimespec.tv_sec) * 1000000000 + st.st_birthtimespec.tv_nsec;
#else
  struct statx sx;
  if (statx(AT_FDCWD, abs.c_str(), AT_SYMLINK_NOFOLLOW, STATX_CTIME | STATX_BTIME, &sx) != 0) return false;
  *ctime_ns = static_cast<int64_t>(sx.stx_ctime.tv_sec) * 1000000000 + sx.stx_ctime.tv_nsec;
  *birth_ns = (sx.stx_mask & STATX_BTIME) ? static_cast<int64_t>(sx.stx_btime.tv_sec) * 1000000000 + sx.stx_btime.tv_nsec
                                          : -1;
#endif
  return true;
}

// When `abs` last changed as the comparison sees it: for a directory made
// since the last save, its birth (entries added to it later change its
// ctime, not its making); else its ctime. For a path gone, the ctime of
// the deepest directory still above it (whatever removed it changed that
// one), up to `root`. -1 when nothing can be read.
int64_t ChangedAt(const std::string& root, const ObservedChange& c) {
  int64_t ctime = 0, birth = -1;
  if (c.after.type != FileType::kAbsent) {
    if (!Times(c.abs, &ctime, &birth)) return -1;
    const bool made_dir = c.before.type != FileType::kDirectory && c.after.type == FileType::kDirectory;
    return made_dir && birth >= 0 ? birth : ctime;
  }
  for (std::string dir = ParentDir(c.abs); PathIsUnder(dir, root); dir = ParentDir(dir)) {
    if (Times(dir, &ctime, &birth)) return ctime;
    if (dir == root) break;
  }
  return -1;
}

}  // namespace

namespace {
KeptContentOpener& Opener() {
  static KeptContentOpener opener;
  return opener;
}
}  // namespace

void SetKeptContentOpener(KeptContentOpener opener) { Opener() = std::move(opener); }

Status CatchUpWatchSession(const SessionMeta& meta, const std::string& session_dir, const std::string& state_dir,
                           const std::vector<Record>& records, BlobStore* store, Recorder* recorder,
                           int64_t alive_ns, const std::shared_ptr<spdlog::logger>& log, WatchCatchUp* out) {
  *out = WatchCatchUp();
  std::vector<WatchedTree::SavedPath> baseline;
  WatchedTreeOptions options;
  options.root = meta.root;
  std::vector<std::string> problems;
  Status read = ReadWatchBaseline(session_dir + "/watch_baseline", &baseline, &options.excluded, &problems);
  if (read.IsNotFound()) return Status::Ok();
  GUARD_RETURN_IF_ERROR(read);
  out->had_baseline = true;
  for (const std::string& p : problems) log->warn("watch baseline: {}", p);
  if (!state_dir.empty()) options.excluded.push_back(state_dir);

  // What the session had saved last of each path: the baseline, then each
  // post-image in journal order (an observed change's new state).
  std::map<std::string, WatchedTree::SavedPath> saved;
  for (WatchedTree::SavedPath& p : baseline) {
    std::string rel = p.rel;
    saved[rel] = std::move(p);
  }
  for (const Record& r : records) {
    if (!IsPostImage(r) || (r.flags & kOutsideRoot) || r.path.empty()) continue;
    if (r.after.type == FileType::kAbsent) {
      saved.erase(r.path);
      continue;
    }
    const bool lacks = r.after.type == FileType::kRegular && r.after.blob.kind != BlobRef::Kind::kKey;
    saved[r.path] = WatchedTree::SavedPath{r.path, r.after, lacks};
  }
  std::vector<WatchedTree::SavedPath> last;
  last.reserve(saved.size());
  for (auto& [rel, p] : saved) last.push_back(std::move(p));

  // The paths the session's operations name: a directory above one of
  // them that is gone since (an `rm -rf` after guard died) keeps its saved
  // state as a post-image, so that replay makes it again before what the
  // session left below it (the tracer records the failed `mkdir -p` of such
  // a directory; watch mode sees no call).
  std::set<std::string> named;
  for (const Record& r : records) {
    if (!IsOperation(r.kind) || (r.flags & kOutsideRoot)) continue;
    if (!r.path.empty()) named.insert(r.path);
    if (!r.path2.empty()) named.insert(r.path2);
  }
  auto above_named = [&](const std::string& dir) {
    auto it = named.lower_bound(dir + "/");
    return it != named.end() && PathIsStrictlyUnder(*it, dir);
  };

  // Content the baseline kept by a git blob id: fetched from the
  // repository when a change needs it (the session's pin ref keeps it).
  std::unique_ptr<KeptContent> kept;
  const bool any_kept =
      std::any_of(last.begin(), last.end(), [](const WatchedTree::SavedPath& p) { return !p.kept_id.empty(); });
  if (any_kept && Opener()) kept = Opener()(meta, state_dir);
  if (any_kept && kept == nullptr) log->warn("catch-up: the repository's baseline objects cannot be reached");
  options.kept = kept.get();
  WatchedTree tree(options, store);
  GUARD_RETURN_IF_ERROR(tree.Resume(last));
  CaptureConfig config;
  config.root = meta.root;
  config.state_dir = state_dir;
  // The changes have happened: a pre-image missing now cannot be had by refusing.
  config.on_failure = CaptureFailurePolicy::kAllow;
  Capture capture(config, recorder, log);
  Status first;
  Status caught = tree.Catch({{meta.root, WatchHint::Scope::kAll}}, [&](const ObservedChange& change,
                                                                         bool before_not_captured) {
    const int64_t at = ChangedAt(meta.root, change);
    if (alive_ns != 0 && at > alive_ns) {
      ++out->after_end;
      log->info("catch-up: {} changed after the session's processes stopped: not the session's", change.abs);
      const std::string rel = PathRelativeTo(change.abs, meta.root);
      if (change.before.type != FileType::kDirectory || change.after.type != FileType::kAbsent ||
          !above_named(rel)) {
        return Status::Ok();
      }
      Record p;
      p.kind = OpKind::kFinal;
      p.flags = kPostImage | kObserved;
      p.path = rel;
      p.after = change.before;
      Status s = recorder->Append(&p);
      if (s.ok()) ++out->kept_directories;
      if (!s.ok() && first.ok()) first = s;
      return s;
    }
    ObservedChange c = change;
    c.before_not_captured = before_not_captured;
    Status s = capture.Observed(c);
    if (s.ok()) ++out->recorded;
    if (!s.ok() && first.ok()) first = s;
    return s;
  });
  if (out->recorded > 0 || out->after_end > 0) {
    log->warn("catch-up: {} change(s) made after the watcher's last round recorded, {} made after the session "
              "stopped left out", out->recorded, out->after_end);
  }
  return first.ok() ? caught : first;
}

}  // namespace guard
