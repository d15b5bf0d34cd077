// IndexOids against a real repository written by the git program: the
// blob id of a file git hashed is taken from the index only for the very
// state git saw (same size, mtime, ctime, inode, device, executable bit),
// never for a state read without a signature, never once the file changed
// (even to the same size), and never from an entry the index cannot vouch
// for (racily clean: not older than the index file).
#define BOOST_TEST_MODULE index_oids
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "supervisor/git/index_oids.h"
#include "supervisor/git/work_tree_repo.h"
#include "tests/unit/support/temp_dir.h"

namespace guard {
namespace {

int64_t Ns(const struct timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec; }

void Run(const std::string& cmd) { BOOST_REQUIRE_MESSAGE(std::system(cmd.c_str()) == 0, cmd); }

std::string Output(const std::string& cmd) {
  FILE* p = ::popen(cmd.c_str(), "r");
  BOOST_REQUIRE(p != nullptr);
  std::string out;
  char buf[256];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  BOOST_REQUIRE(::pclose(p) == 0);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

void Write(const std::string& path, const std::string& content) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << content;
  BOOST_REQUIRE(f.good());
}

// The state as guard's seal records it: the lstat it read the file with.
FileState StateOf(const std::string& path) {
  struct stat st;
  BOOST_REQUIRE(::lstat(path.c_str(), &st) == 0);
  FileState s;
  s.type = FileType::kRegular;
  s.mode = st.st_mode & 07777;
  s.size = static_cast<uint64_t>(st.st_size);
  s.mtime_ns = Ns(st.st_mtim);
  s.dev = st.st_dev;
  s.ino = st.st_ino;
  s.ctime_ns = Ns(st.st_ctim);
  return s;
}

// Until the file system's clock has passed `ns` (the ctime of a file made
// now, not a sleep of a guessed length): an index written after this is
// newer than every file changed before it, so its entries are not racy.
void WaitForClockPast(const std::string& dir, int64_t ns) {
  const std::string probe = dir + "/.probe";
  for (;;) {
    Write(probe, "x");
    struct stat st;
    BOOST_REQUIRE(::stat(probe.c_str(), &st) == 0);
    if (Ns(st.st_ctim) > ns) break;
    ::usleep(1000);
  }
  ::unlink(probe.c_str());
}

struct Repo {
  Repo() {
    InitGitLibrary();
    root = tmp.path + "/repo";
    Run("mkdir " + root);
    Write(root + "/a.txt", "alpha\n");
    Write(root + "/b.txt", "bravo\n");
    Write(root + "/run.sh", "#!/bin/sh\n");
    Run("chmod 755 " + root + "/run.sh");
    int64_t newest = 0;
    for (const char* f : {"a.txt", "b.txt", "run.sh"}) newest = std::max(newest, StateOf(root + "/" + f).ctime_ns);
    WaitForClockPast(tmp.path, newest);
    Run("cd " + root + " && git init -q . && git add -A && git -c user.name=t -c user.email=t@t commit -qm one");
    BOOST_REQUIRE(WorkTreeRepo::Open(root, tmp.path + "/state", &repo).ok());
  }
  std::string HashObject(const std::string& f) { return Output("cd " + root + " && git hash-object " + f); }

  testing::TempDir tmp;
  std::string root;
  WorkTreeRepo repo;
};

BOOST_AUTO_TEST_CASE(AFileGitHashedIsNamedByItsIndexEntry) {
  Repo r;
  IndexOids index = IndexOids::Load(r.repo);
  git_oid id;
  BOOST_REQUIRE(index.Find("a.txt", StateOf(r.root + "/a.txt"), &id));
  BOOST_TEST(OidHex(id) == r.HashObject("a.txt"));
  BOOST_REQUIRE(index.Find("run.sh", StateOf(r.root + "/run.sh"), &id));
  BOOST_TEST(OidHex(id) == r.HashObject("run.sh"));
  BOOST_TEST(index.used() == 2u);
}

BOOST_AUTO_TEST_CASE(AnyDifferenceFromWhatGitSawIsHashedInstead) {
  Repo r;
  IndexOids index = IndexOids::Load(r.repo);
  git_oid id;
  // Rewritten after git hashed it, to the same size: its ctime moved.
  Write(r.root + "/b.txt", "BRAVO\n");
  BOOST_TEST(!index.Find("b.txt", StateOf(r.root + "/b.txt"), &id));
  // A state read without its signature (a pre-image) proves nothing.
  FileState plain = StateOf(r.root + "/a.txt");
  plain.ino = 0;
  plain.ctime_ns = 0;
  BOOST_TEST(!index.Find("a.txt", plain, &id));
  // Same stat, another executable bit.
  FileState exec = StateOf(r.root + "/a.txt");
  exec.mode |= 0100;
  BOOST_TEST(!index.Find("a.txt", exec, &id));
  // Another size, or another inode.
  FileState longer = StateOf(r.root + "/a.txt");
  ++longer.size;
  BOOST_TEST(!index.Find("a.txt", longer, &id));
  FileState other = StateOf(r.root + "/a.txt");
  ++other.ino;
  BOOST_TEST(!index.Find("a.txt", other, &id));
  // A path the index does not have, a symlink, an empty file.
  BOOST_TEST(!index.Find("c.txt", StateOf(r.root + "/a.txt"), &id));
  FileState link = StateOf(r.root + "/a.txt");
  link.type = FileType::kSymlink;
  BOOST_TEST(!index.Find("a.txt", link, &id));
  BOOST_TEST(index.used() == 0u);
  // And what was untouched is still found.
  BOOST_TEST(index.Find("a.txt", StateOf(r.root + "/a.txt"), &id));
}

BOOST_AUTO_TEST_CASE(EntriesNotOlderThanTheIndexFileAreNotTrusted) {
  Repo r;
  // The index file dated back to before its entries: every entry is then
  // "racily clean" (it may have changed in the tick the index was written).
  const std::string index_path = r.root + "/.git/index";
  struct timespec times[2] = {{0, UTIME_OMIT}, {1000000000, 0}};
  BOOST_REQUIRE(::utimensat(AT_FDCWD, index_path.c_str(), times, 0) == 0);
  IndexOids index = IndexOids::Load(r.repo);
  git_oid id;
  BOOST_TEST(!index.Find("a.txt", StateOf(r.root + "/a.txt"), &id));
  BOOST_TEST(index.used() == 0u);
}

BOOST_AUTO_TEST_CASE(WithoutAnIndexNothingIsFound) {
  Repo r;
  Run("rm " + r.root + "/.git/index");
  IndexOids index = IndexOids::Load(r.repo);
  git_oid id;
  BOOST_TEST(!index.Find("a.txt", StateOf(r.root + "/a.txt"), &id));
}

}  // namespace
}  // namespace guard
