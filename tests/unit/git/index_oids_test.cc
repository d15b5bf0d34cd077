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
  // The id of the file's own bytes (what guard's store holds), not of what
  // git's clean filters would make of them.
  std::string HashObject(const std::string& f) {
    return Output("cd " + root + " && git hash-object --no-filters " + f);
  }

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
  // Any one field of the signature off by one.
  for (int field = 0; field < 5; ++field) {
    FileState off = StateOf(r.root + "/a.txt");
    switch (field) {
      case 0: ++off.size; break;
      case 1: ++off.ino; break;
      case 2: ++off.dev; break;
      case 3: ++off.mtime_ns; break;
      case 4: ++off.ctime_ns; break;
    }
    BOOST_TEST(!index.Find("a.txt", off, &id), "field " << field);
  }
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

BOOST_AUTO_TEST_CASE(AnEntryRacyByItsCtimeAloneIsNotTrusted) {
  Repo r;
  // a.txt's mtime is old, its ctime (set by that very utimensat) recent;
  // re-added, its entry carries both. The index file then dated between
  // the two: older than the entry's ctime only.
  struct timespec old_times[2] = {{0, UTIME_OMIT}, {1000000000, 0}};
  BOOST_REQUIRE(::utimensat(AT_FDCWD, (r.root + "/a.txt").c_str(), old_times, 0) == 0);
  const FileState st = StateOf(r.root + "/a.txt");
  WaitForClockPast(r.tmp.path, st.ctime_ns);
  Run("cd " + r.root + " && git add a.txt");
  const int64_t between = st.ctime_ns - 1;
  struct timespec index_times[2] = {{0, UTIME_OMIT}, {between / 1000000000, between % 1000000000}};
  BOOST_REQUIRE(::utimensat(AT_FDCWD, (r.root + "/.git/index").c_str(), index_times, 0) == 0);
  IndexOids index = IndexOids::Load(r.repo);
  git_oid id;
  BOOST_TEST(!index.Find("a.txt", StateOf(r.root + "/a.txt"), &id));
}

// The index names the blob after git's clean filters; guard's store holds
// the file's bytes. A file converted on the way in (CRLF to LF) has a blob
// of another size; a path any filter applies to is hashed even when the
// filter changed nothing, and so is one with a filter driver libgit2 does
// not know (git-lfs, git-crypt: it would not run them either).
BOOST_AUTO_TEST_CASE(PathsGitFiltersAreHashedNotTakenFromTheIndex) {
  testing::TempDir tmp;
  InitGitLibrary();
  const std::string root = tmp.path + "/repo";
  Run("mkdir " + root);
  Write(root + "/.gitattributes", "*.crlf text eol=crlf\n*.id ident\n*.lfs filter=nosuchdriver\n");
  Write(root + "/a.crlf", "one\r\ntwo\r\n");
  Write(root + "/b.id", "no keyword here\n");
  Write(root + "/c.lfs", "large\n");
  Write(root + "/d.txt", "plain\n");
  int64_t newest = 0;
  for (const char* f : {"a.crlf", "b.id", "c.lfs", "d.txt"}) newest = std::max(newest, StateOf(root + "/" + f).ctime_ns);
  WaitForClockPast(tmp.path, newest);
  Run("cd " + root + " && git init -q . && git add -A");
  WorkTreeRepo repo;
  BOOST_REQUIRE(WorkTreeRepo::Open(root, tmp.path + "/state", &repo).ok());
  IndexOids index = IndexOids::Load(repo);
  git_oid id;
  BOOST_TEST(!index.Find("a.crlf", StateOf(root + "/a.crlf"), &id));
  BOOST_TEST(!index.Find("b.id", StateOf(root + "/b.id"), &id));
  BOOST_TEST(!index.Find("c.lfs", StateOf(root + "/c.lfs"), &id));
  // The control: the same repository, a path no filter applies to.
  BOOST_REQUIRE(index.Find("d.txt", StateOf(root + "/d.txt"), &id));
  BOOST_TEST(OidHex(id) == Output("cd " + root + " && git hash-object --no-filters d.txt"));
}

BOOST_AUTO_TEST_CASE(EmptyFilesAndEntriesGitMarkedAreHashed) {
  Repo r;
  Write(r.root + "/empty", "");
  WaitForClockPast(r.tmp.path, StateOf(r.root + "/empty").ctime_ns);
  Run("cd " + r.root + " && git add empty && git update-index --assume-unchanged b.txt && "
      "git update-index --skip-worktree run.sh");
  IndexOids index = IndexOids::Load(r.repo);
  git_oid id;
  BOOST_TEST(!index.Find("empty", StateOf(r.root + "/empty"), &id));
  BOOST_TEST(!index.Find("b.txt", StateOf(r.root + "/b.txt"), &id));
  BOOST_TEST(!index.Find("run.sh", StateOf(r.root + "/run.sh"), &id));
  BOOST_TEST(index.Find("a.txt", StateOf(r.root + "/a.txt"), &id));
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
