// ResolveTraceePath (supervisor/trace/path_resolver.h): a tracee's path
// argument to the absolute path of the object the kernel will act on. The
// tracee is a parked child with its own cwd and a dirfd (fd 50), so that
// guard's own cwd, fds and /proc/self never give the right answer by chance.
#define BOOST_TEST_MODULE path_resolver
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <filesystem>
#include <string>
#include <vector>

#include "supervisor/trace/path_resolver.h"
#include "supervisor/trace/tracee_views.h"
#include "tests/unit/support/parked_process.h"
#include "tests/unit/support/test_history.h"

namespace guard {
namespace {

using testing::ParkedProcess;
using testing::TempDir;

constexpr int kDirfd = 50;

// T/cwd is the tracee's cwd, T/dirfd its fd 50:
//   cwd/file  cwd/sub/  cwd/up -> ../real  cwd/abs -> T/real
//   cwd/deep -> ../real/inner  cwd/last -> file  cwd/chain1 -> chain2 -> file
//   cwd/dangling -> new-target  cwd/dirlink -> sub  cwd/selfcwd -> /proc/self/cwd
//   cwd/loop1 -> loop2 -> loop1  real/inner/  dirfd/
struct Tree {
  TempDir tmp;
  std::string t = std::filesystem::canonical(tmp.path).string();
  std::string cwd = t + "/cwd", dirfd = t + "/dirfd", real = t + "/real";

  Tree() {
    for (const std::string& d : {cwd, dirfd, real, real + "/inner", cwd + "/sub"}) BOOST_REQUIRE(mkdir(d.c_str(), 0755) == 0);
    int fd = open((cwd + "/file").c_str(), O_WRONLY | O_CREAT, 0644);
    BOOST_REQUIRE(fd >= 0);
    close(fd);
    Link("../real", "up");
    Link(real, "abs");
    Link("../real/inner", "deep");
    Link("file", "last");
    Link("chain2", "chain1");
    Link("file", "chain2");
    Link("new-target", "dangling");
    Link("sub", "dirlink");
    Link("/proc/self/cwd", "selfcwd");
    Link("loop2", "loop1");
    Link("loop1", "loop2");
  }
  void Link(const std::string& target, const std::string& name) {
    BOOST_REQUIRE(symlink(target.c_str(), (cwd + "/" + name).c_str()) == 0);
  }
  // The tracee: in T/cwd, with T/dirfd open as fd 50.
  std::function<bool()> Setup() const {
    return [this] {
      int fd = open(dirfd.c_str(), O_RDONLY | O_DIRECTORY);
      return chdir(cwd.c_str()) == 0 && fd >= 0 && dup2(fd, kDirfd) == kDirfd;
    };
  }
};

std::string Resolve(pid_t tid, int dirfd, const std::string& path, bool follow_last, Status* s = nullptr,
                    bool empty_ok = false) {
  std::string out;
  Status st = ResolveTraceePath(tid, dirfd, path, follow_last, empty_ok, &out);
  if (s != nullptr) *s = st;
  else BOOST_TEST(st.ok(), path << ": " << st.ToString());
  return out;
}

BOOST_AUTO_TEST_CASE(ARelativePathIsRelativeToTheTraceesCwd) {
  Tree tree;
  ParkedProcess p(tree.Setup());
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "file", false) == tree.cwd + "/file");
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "not-yet", false) == tree.cwd + "/not-yet");
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "sub/new", true) == tree.cwd + "/sub/new");
}

BOOST_AUTO_TEST_CASE(ARelativePathWithADirfdIsRelativeToThatDirectory) {
  Tree tree;
  ParkedProcess p(tree.Setup());
  BOOST_TEST(Resolve(p.pid(), kDirfd, "x", false) == tree.dirfd + "/x");
  // An absolute path ignores the dirfd.
  BOOST_TEST(Resolve(p.pid(), kDirfd, tree.cwd + "/file", false) == tree.cwd + "/file");
}

BOOST_AUTO_TEST_CASE(AnEmptyPathNamesTheDirfdOnlyWhereTheCallAllowsIt) {
  Tree tree;
  ParkedProcess p(tree.Setup());
  Status s;
  BOOST_TEST(Resolve(p.pid(), kDirfd, "", false, &s, /*empty_ok=*/true) == tree.dirfd);
  BOOST_TEST(s.ok(), s.ToString());
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "", false, &s, /*empty_ok=*/true) == tree.cwd);
  BOOST_TEST(s.ok(), s.ToString());
  Resolve(p.pid(), kDirfd, "", false, &s, /*empty_ok=*/false);
  BOOST_TEST(s.err() == ENOENT, s.ToString());
}

BOOST_AUTO_TEST_CASE(SymlinksInTheMiddleAreFollowed) {
  Tree tree;
  ParkedProcess p(tree.Setup());
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "up/x", false) == tree.real + "/x");
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "abs/x", false) == tree.real + "/x");
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "up/inner/x", false) == tree.real + "/inner/x");
  BOOST_TEST(Resolve(p.pid(), kDirfd, "../cwd/up/x", false) == tree.real + "/x");
}

BOOST_AUTO_TEST_CASE(TheLastComponentIsFollowedOnlyWhenAsked) {
  Tree tree;
  ParkedProcess p(tree.Setup());
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "last", false) == tree.cwd + "/last");
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "last", true) == tree.cwd + "/file");
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "chain1", true) == tree.cwd + "/file");
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "chain1", false) == tree.cwd + "/chain1");
  // open(O_CREAT) through a dangling symlink creates its target.
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "dangling", true) == tree.cwd + "/new-target");
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "up", false) == tree.cwd + "/up");
}

BOOST_AUTO_TEST_CASE(ATrailingSlashFollowsTheLastComponent) {
  Tree tree;
  ParkedProcess p(tree.Setup());
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "dirlink/", false) == tree.cwd + "/sub");
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "dirlink//", false) == tree.cwd + "/sub");
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "sub/", false) == tree.cwd + "/sub");
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "dirlink", false) == tree.cwd + "/dirlink");
}

BOOST_AUTO_TEST_CASE(DotDotGoesUpFromWhereASymlinkLed) {
  Tree tree;
  ParkedProcess p(tree.Setup());
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "sub/../file", false) == tree.cwd + "/file");
  // deep -> ../real/inner: its .. is real, not cwd (as the kernel walks it).
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "deep/../x", false) == tree.real + "/x");
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "./sub/./x", false) == tree.cwd + "/sub/x");
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "..", false) == tree.t);
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, ".", false) == tree.cwd);
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "/..", false) == "/");
}

// In a chroot the kernel stops `..` at the jail's root, and an absolute
// symlink starts there too.
BOOST_AUTO_TEST_CASE(DotDotStopsAtAChrootsRoot) {
  if (geteuid() != 0) {
    BOOST_TEST_MESSAGE("SKIPPED: chroot needs root");
    return;
  }
  Tree tree;
  ParkedProcess p([&tree] { return chroot(tree.cwd.c_str()) == 0 && chdir("/") == 0; });
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "/../../file", false) == tree.cwd + "/file");
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "../../new", false) == tree.cwd + "/new");
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "sub/../../x", false) == tree.cwd + "/x");
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "/..", false) == tree.cwd);
}

// /proc/self is whoever looks: guard resolving it would get its own entries.
BOOST_AUTO_TEST_CASE(ProcSelfMeansTheTracee) {
  Tree tree;
  ParkedProcess p(tree.Setup());
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "/proc/self/cwd/x", false) == tree.cwd + "/x");
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "/proc/thread-self/cwd/x", false) == tree.cwd + "/x");
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "/proc/self/fd/50/x", false) == tree.dirfd + "/x");
  // /dev/fd -> /proc/self/fd: through a symlink, too.
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "/dev/fd/50/x", false) == tree.dirfd + "/x");
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "selfcwd/x", false) == tree.cwd + "/x");
  // The fd's own entry, not followed, is the tracee's.
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "/proc/self/fd/50", false) == "/proc/" + std::to_string(p.pid()) + "/fd/50");
  BOOST_TEST(Resolve(p.pid(), AT_FDCWD, "/proc/self/fd/50", true) == tree.dirfd);
}

BOOST_AUTO_TEST_CASE(TraceeFdPathNamesWhatTheTraceesFdIsOpenOn) {
  Tree tree;
  ParkedProcess p(tree.Setup());
  std::string out;
  BOOST_TEST(TraceeFdPath(p.pid(), kDirfd, &out).ok());
  BOOST_TEST(out == tree.dirfd);
  BOOST_TEST(!TraceeFdPath(p.pid(), 77, &out).ok());
}

// The resolution hands on the lstat it made of the name it gives (capture
// makes no other): it must be that name's.
BOOST_AUTO_TEST_CASE(TheLstatThatComesWithANameIsThatNames) {
  Tree tree;
  ParkedProcess p(tree.Setup());
  TraceeViews views;
  ResolveContext ctx;
  ctx.views = &views;
  struct Case {
    int dirfd;
    std::string path;
    bool follow;
  };
  for (const Case& c : std::vector<Case>{{AT_FDCWD, "file", false},
                                         {AT_FDCWD, "not-yet", false},
                                         {AT_FDCWD, "last", false},
                                         {AT_FDCWD, "last", true},
                                         {AT_FDCWD, "chain1", true},
                                         {AT_FDCWD, "up/inner", false},
                                         {AT_FDCWD, "sub/../file", false},
                                         {AT_FDCWD, "file/x", false},
                                         {kDirfd, "x", false},
                                         {kDirfd, "../cwd/sub", false},
                                         {kDirfd, tree.cwd + "/dirlink", false}}) {
    ResolvedPath r;
    Status s = ResolveTraceePath(p.pid(), c.dirfd, c.path, c.follow, false, ctx, &r);
    BOOST_TEST_REQUIRE(s.ok(), c.path << ": " << s.ToString());
    BOOST_TEST_REQUIRE(r.lstat.made, c.path);
    struct stat st;
    int err = lstat(r.abs.c_str(), &st) == 0 ? 0 : errno;
    BOOST_TEST(r.lstat.err == err, c.path << " -> " << r.abs);
    if (err == 0) {
      BOOST_TEST((r.lstat.st.st_ino == st.st_ino && r.lstat.st.st_dev == st.st_dev &&
                  r.lstat.st.st_mode == st.st_mode),
                 c.path << " -> " << r.abs);
    }
  }
  BOOST_TEST(views.kept() == 1u);
}

// The kernel's name for a cwd is taken as it reads, unexamined, except
// that of a directory since removed, which names nothing (" (deleted)").
BOOST_AUTO_TEST_CASE(ARemovedCwdNamesNothingButADirectoryNamedLikeOneIsNamed) {
  Tree tree;
  std::string gone = tree.t + "/gone", like = tree.t + "/like (deleted)";
  BOOST_REQUIRE(mkdir(gone.c_str(), 0755) == 0);
  BOOST_REQUIRE(mkdir(like.c_str(), 0755) == 0);
  ParkedProcess p([&] {
    int fd = open(like.c_str(), O_RDONLY | O_DIRECTORY);
    return chdir(gone.c_str()) == 0 && fd >= 0 && dup2(fd, kDirfd) == kDirfd;
  });
  BOOST_REQUIRE(rmdir(gone.c_str()) == 0);
  Status s;
  Resolve(p.pid(), AT_FDCWD, "x", false, &s);
  BOOST_TEST(s.err() == ENOENT, s.ToString());
  BOOST_TEST(Resolve(p.pid(), kDirfd, "x", false) == like + "/x");
}

BOOST_AUTO_TEST_CASE(PathsTheKernelWouldRefuseAreErrors) {
  Tree tree;
  ParkedProcess p(tree.Setup());
  Status s;
  Resolve(p.pid(), AT_FDCWD, "loop1", true, &s);
  BOOST_TEST(s.err() == ELOOP, s.ToString());
  Resolve(p.pid(), AT_FDCWD, "loop1/x", false, &s);
  BOOST_TEST(s.err() == ELOOP, s.ToString());
  // (file/x, below a file, is taken as it reads: the kernel fails the call
  // with ENOTDIR, so it changes nothing either way.)
  Resolve(p.pid(), AT_FDCWD, "file/x/y", false, &s);
  BOOST_TEST(s.err() == ENOTDIR, s.ToString());
  Resolve(p.pid(), AT_FDCWD, "absent/x", false, &s);
  BOOST_TEST(s.err() == ENOENT, s.ToString());
  Resolve(p.pid(), 77, "x", false, &s);  // no such fd
  BOOST_TEST(!s.ok());
}

}  // namespace
}  // namespace guard
