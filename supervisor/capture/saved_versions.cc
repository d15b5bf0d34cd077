#include "supervisor/capture/saved_versions.h"

#include "common/blob_append_format.h"

namespace guard {

void SavedVersions::Note(const std::string& rel, const FileState& state) {
  if (state.type != FileType::kRegular || state.blob.kind != BlobRef::Kind::kKey) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (state.size < kAppendMinBase) {
    latest_.erase(rel);  // the file is small again: nothing to chain on
    return;
  }
  latest_[rel] = SavedVersion{state.blob.key, state.size};
}

bool SavedVersions::Latest(const std::string& rel, SavedVersion* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = latest_.find(rel);
  if (it == latest_.end()) return false;
  *out = it->second;
  return true;
}

}  // namespace guard
