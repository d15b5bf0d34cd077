#include "supervisor/commands/git_kept_content.h"

#include <spdlog/spdlog.h>

#include "supervisor/session/watch_catch_up.h"

namespace guard {
namespace {

// GitKeptContent owning its BaselineObjects: recovery's, for a dead session.
class OwnedGitKeptContent : public GitKeptContent {
 public:
  explicit OwnedGitKeptContent(std::unique_ptr<BaselineObjects> objects)
      : GitKeptContent(objects.get()), owned_(std::move(objects)) {}

 private:
  std::unique_ptr<BaselineObjects> owned_;
};

}  // namespace

void GitBaseline::Open(const std::string& root, const std::string& state_dir, const std::string& session_id,
                       spdlog::logger& log, WatchedTreeOptions* options) {
  Status opened = BaselineObjects::Open(root, state_dir, session_id, &objects_);
  if (opened.ok()) {
    kept_ = std::make_unique<GitKeptContent>(objects_.get());
    options->kept = kept_.get();
  } else if (!opened.IsNotFound()) {
    log.warn("watch: the baseline copies every file: {}", opened.ToString());
  }
}

void GitBaseline::Unpin(spdlog::logger& log) {
  if (objects_ == nullptr) return;
  if (Status s = objects_->Unpin(); !s.ok()) log.warn("watch: baseline ref: {}", s.ToString());
}

void InstallKeptContentOpener() {
  SetKeptContentOpener([](const SessionMeta& meta, const std::string& state_dir) -> std::unique_ptr<KeptContent> {
    std::unique_ptr<BaselineObjects> objects;
    if (!BaselineObjects::Open(meta.root, state_dir, meta.id, &objects).ok()) return nullptr;
    return std::make_unique<OwnedGitKeptContent>(std::move(objects));
  });
}

}  // namespace guard
