#include "supervisor/commands/git_kept_content.h"

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

void InstallKeptContentOpener() {
  SetKeptContentOpener([](const SessionMeta& meta, const std::string& state_dir) -> std::unique_ptr<KeptContent> {
    std::unique_ptr<BaselineObjects> objects;
    if (!BaselineObjects::Open(meta.root, state_dir, meta.id, &objects).ok()) return nullptr;
    return std::make_unique<OwnedGitKeptContent>(std::move(objects));
  });
}

}  // namespace guard
