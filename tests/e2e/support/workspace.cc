#include "tests/e2e/support/workspace.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "common/file_io.h"
#include "common/unique_fd.h"

namespace guard::e2e {
namespace {

[[noreturn]] void Fail(const std::string& what, int err) {
  throw std::runtime_error(what + ": " + std::strerror(err));
}

std::string TempBase() {
  const char* t = std::getenv("TMPDIR");
  return t != nullptr && *t == '/' ? t : "/tmp";
}

}  // namespace

std::string Printable(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

std::string RealPath(const std::string& path) {
  char buf[PATH_MAX];
  if (realpath(path.c_str(), buf) == nullptr) Fail("realpath " + Printable(path), errno);
  return buf;
}

void WriteFile(const std::string& path, std::string_view content, mode_t mode) {
  UniqueFd fd;
  Status s = OpenFile(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600, &fd);
  if (!s.ok()) throw std::runtime_error(s.ToString());
  s = WriteAll(fd.get(), content.data(), content.size(), path);
  if (!s.ok()) throw std::runtime_error(s.ToString());
  if (fchmod(fd.get(), mode) != 0) Fail("fchmod " + Printable(path), errno);
}

void MakeDir(const std::string& path, mode_t mode) {
  if (mkdir(path.c_str(), 0700) != 0) Fail("mkdir " + Printable(path), errno);
  if (chmod(path.c_str(), mode) != 0) Fail("chmod " + Printable(path), errno);
}

void MakeSymlink(std::string_view target, const std::string& path) {
  if (symlink(std::string(target).c_str(), path.c_str()) != 0) Fail("symlink " + Printable(path), errno);
}

std::string ReadFile(const std::string& path) {
  std::string out;
  Status s = ReadFileToString(path, &out);
  if (!s.ok()) throw std::runtime_error(s.ToString());
  return out;
}

bool PathExists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

Workspace::Workspace() {
  std::string templ = TempBase() + "/guard-e2e-XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) Fail("mkdtemp " + templ, errno);
  dir_ = RealPath(templ);
  tree_ = dir_ + "/tree";
  home_ = dir_ + "/home";
  outside_ = dir_ + "/outside";
  MakeDir(tree_, 0755);
  MakeDir(home_, 0700);
  MakeDir(outside_, 0755);
}

Workspace::~Workspace() {
  if (const char* keep = std::getenv("GUARD_E2E_KEEP"); keep != nullptr && *keep != '\0') {
    std::fprintf(stderr, "guard e2e: kept %s\n", dir_.c_str());
    return;
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
  if (ec) {
    // remove_all works by absolute path; rm(1) copes with trees deeper
    // than PATH_MAX.
    pid_t pid = fork();
    if (pid == 0) {
      execl("/bin/rm", "rm", "-rf", "--", dir_.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    if (pid > 0) waitpid(pid, nullptr, 0);
  }
}

std::string Workspace::Path(std::string_view rel) const {
  return rel.empty() ? tree_ : tree_ + "/" + std::string(rel);
}

void Workspace::Write(std::string_view rel, std::string_view content, mode_t mode) const {
  WriteFile(Path(rel), content, mode);
}
void Workspace::Mkdir(std::string_view rel, mode_t mode) const { MakeDir(Path(rel), mode); }
void Workspace::Symlink(std::string_view target, std::string_view rel) const {
  MakeSymlink(target, Path(rel));
}
std::string Workspace::Read(std::string_view rel) const { return ReadFile(Path(rel)); }
bool Workspace::Exists(std::string_view rel) const { return PathExists(Path(rel)); }

std::vector<std::string> Workspace::SessionIds() const {
  // Listed directly rather than through StateDir::OpenAt, which would create
  // or tighten directories: a test comparing home() before and after a run
  // must see only what guard did.
  std::vector<std::string> ids;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(home_ + "/sessions", ec)) {
    std::string name = e.path().filename().string();
    if (!name.empty() && name[0] != '.' && e.is_directory()) ids.push_back(name);
  }
  if (ec && ec != std::errc::no_such_file_or_directory) {
    throw std::runtime_error("listing sessions in " + home_ + ": " + ec.message());
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace guard::e2e
