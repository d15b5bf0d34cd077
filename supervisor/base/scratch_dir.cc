#include "supervisor/base/scratch_dir.h"

#include <stdlib.h>
#include <unistd.h>  // mkdtemp on macOS

#include <cerrno>
#include <filesystem>

namespace guard {
namespace {

namespace fs = std::filesystem;

// remove_all, except that a directory the tree gave a mode without owner
// write or search (0555, 0000) is opened up first: what a materialized
// tree holds must not outlive the command.
void RemoveTree(const fs::path& p) {
  std::error_code ec;
  fs::file_status st = fs::symlink_status(p, ec);
  if (ec) return;
  if (fs::is_directory(st)) {
    fs::permissions(p, fs::perms::owner_all, fs::perm_options::add, ec);
    for (const fs::directory_entry& e : fs::directory_iterator(p, ec)) RemoveTree(e.path());
  }
  fs::remove(p, ec);
}

}  // namespace

ScratchDir::~ScratchDir() {
  if (!path_.empty()) RemoveTree(path_);
}

Status ScratchDir::Create(const std::string& prefix) {
  const char* tmp = ::getenv("TMPDIR");
  std::string tmpl = std::string(tmp != nullptr && *tmp == '/' ? tmp : "/tmp") + "/" + prefix + "-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) return Status::FromErrno("temporary directory " + tmpl, errno);
  path_ = tmpl;
  return Status::Ok();
}

}  // namespace guard
