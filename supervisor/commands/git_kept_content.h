// The git layer's BaselineObjects (supervisor/git/baseline_objects.h) as
// the watch layer's KeptContent (supervisor/watch/watched_tree.h): watch
// mode's baseline keeps a clean tracked file by its blob id. Here, in the
// commands layer, because the git layer sits above the watch and session
// layers.
#pragma once

#include <memory>
#include <string>

#include "supervisor/git/baseline_objects.h"
#include "supervisor/watch/watched_tree.h"

namespace spdlog {
class logger;
}  // namespace spdlog

namespace guard {

class GitKeptContent : public KeptContent {
 public:
  explicit GitKeptContent(BaselineObjects* objects) : objects_(objects) {}
  bool Find(const std::string& rel, const FileState& st, std::string* id) override {
    return objects_->Find(rel, st, id);
  }
  Status Fetch(const std::string& id, BlobStore* store, BlobKey* key, uint64_t* size) override {
    return objects_->Fetch(id, store, key, size);
  }
  Status Pin() override { return objects_->Pin(); }
  void AttributeFilesUnderRoot(bool any) override { objects_->AttributeFilesUnderRoot(any); }

 private:
  BaselineObjects* objects_;
};

// The baseline's git half as both watch sessions hold it (Linux's Session,
// macOS's WatchLaunch): opened before the baseline is read, its pin ref
// deleted once the last round has stored every pre-image the session needs.
class GitBaseline {
 public:
  // In a git work tree, points options->kept at its clean tracked files;
  // elsewhere leaves the options as they are. Any failure but "no work
  // tree" is logged: the baseline then copies every file.
  void Open(const std::string& root, const std::string& state_dir, const std::string& session_id,
            spdlog::logger& log, WatchedTreeOptions* options);
  // After the last round (nothing when Open found no work tree).
  void Unpin(spdlog::logger& log);

 private:
  std::unique_ptr<BaselineObjects> objects_;
  std::unique_ptr<GitKeptContent> kept_;
};

// Lets recovery's catch-up of a dead watch session fetch what its baseline
// kept by git blob id (session/watch_catch_up.h), through the session's
// repository (its pin ref keeps the blobs). Called once, at start.
void InstallKeptContentOpener();

}  // namespace guard
