// Workspace: a fresh temporary directory for one end-to-end test, holding the
// tree guard protects and, beside it (never inside), guard's state directory
// and a directory outside the root:
//
//   $TMPDIR/guard-e2e-XXXXXX/
//     tree/      the root, passed to guard as --root
//     home/      GUARD_HOME for every guard run of this workspace
//     outside/   a place outside the root, for writes guard records by name only
//
// All paths are canonical (realpath), as guard records them. The whole
// directory is removed at destruction unless GUARD_E2E_KEEP is set in the
// environment (then its path is printed, for reading the journal by hand).
//
// Setup helpers throw std::runtime_error: a test that cannot build its
// fixture has nothing to say, and Boost.Test reports the exception.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

namespace guard::e2e {

class Workspace {
 public:
  Workspace();
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  const std::string& dir() const { return dir_; }
  const std::string& tree() const { return tree_; }
  const std::string& home() const { return home_; }
  const std::string& outside() const { return outside_; }

  // tree()/rel ("" gives the tree itself).
  std::string Path(std::string_view rel) const;

  // Shorthands for building the tree before a run; `rel` is relative to tree().
  void Write(std::string_view rel, std::string_view content, mode_t mode = 0644) const;
  void Mkdir(std::string_view rel, mode_t mode = 0755) const;
  void Symlink(std::string_view target, std::string_view rel) const;
  std::string Read(std::string_view rel) const;
  bool Exists(std::string_view rel) const;

  // Ids of the sessions in home(), sorted.
  std::vector<std::string> SessionIds() const;

 private:
  std::string dir_, tree_, home_, outside_;
};

// File helpers on absolute paths. Modes are set exactly (the umask does not
// apply). They throw std::runtime_error on failure.
void WriteFile(const std::string& path, std::string_view content, mode_t mode = 0644);
void MakeDir(const std::string& path, mode_t mode = 0755);
void MakeSymlink(std::string_view target, const std::string& path);
std::string ReadFile(const std::string& path);
bool PathExists(const std::string& path);  // lstat succeeds
// Canonical form of an existing path.
std::string RealPath(const std::string& path);

// `s` with every byte outside printable ASCII (and the backslash) escaped as
// \xNN, for messages about paths that hold newlines or invalid UTF-8.
std::string Printable(std::string_view s);

}  // namespace guard::e2e
