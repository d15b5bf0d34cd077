#include "tests/e2e/support/store_checks.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>
#include <stdexcept>

#include "common/clock.h"
#include "tests/e2e/support/session_view.h"

namespace guard::e2e {

std::vector<std::string> UnreadableBlobs(const std::string& guard_home, const std::string& id) {
  std::vector<std::string> out;
  SessionView view = SessionView::Load(guard_home, id);
  for (const Record& r : view.records()) {
    for (const FileState* s : {&r.before, &r.before2, &r.after}) {
      if (s->blob.kind == BlobRef::Kind::kNone) continue;
      std::string content;
      Status st = view.ReadBlob(s->blob, &content);
      if (!st.ok()) {
        std::string name = s->blob.kind == BlobRef::Kind::kKey ? s->blob.key.Hex() : "pending " + s->blob.pending;
        out.push_back("seq " + std::to_string(r.seq) + " " + r.path + ": " + name + ": " + st.ToString());
      }
    }
  }
  return out;
}

void AgeStore(const std::string& guard_home, int seconds) {
  int64_t t = WallNowNs() - static_cast<int64_t>(seconds) * 1000000000;
  struct timespec times[2] = {{t / 1000000000, t % 1000000000}, {t / 1000000000, t % 1000000000}};
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(guard_home + "/store", ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec)) continue;
    if (::utimensat(AT_FDCWD, it->path().c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) {
      throw std::runtime_error("utimensat " + it->path().string());
    }
  }
}

size_t CountObjects(const std::string& guard_home) {
  size_t n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(guard_home + "/store/objects", ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec)) ++n;
  }
  return n;
}

}  // namespace guard::e2e
