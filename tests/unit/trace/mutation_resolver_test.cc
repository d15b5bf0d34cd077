// ResolveMutation (supervisor/trace/mutation_resolver.h): which calls follow
// their last symlink, the second path of renames and links, calls on fds,
// and which failures to resolve are benign (the call fails by itself) and
// which are capture failures (refuse_errno set).
#define BOOST_TEST_MODULE mutation_resolver
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <filesystem>
#include <string>

#include "supervisor/trace/mutation_resolver.h"
#include "tests/unit/support/parked_process.h"
#include "tests/unit/support/test_history.h"

namespace guard {
namespace {

using testing::ParkedProcess;
using testing::TempDir;
using Action = MutationRequest::Action;

constexpr int kPipeFd = 60, kFileFd = 61, kDeletedFd = 62;

// T/cwd (the tracee's cwd): file, link -> file, gone (open as fd 62, then
// removed); the tracee also holds a pipe (fd 60) and file (fd 61).
struct Tree {
  TempDir tmp;
  std::string cwd = std::filesystem::canonical(tmp.path).string() + "/cwd";

  Tree() {
    BOOST_REQUIRE(mkdir(cwd.c_str(), 0755) == 0);
    for (const char* f : {"/file", "/gone"}) {
      int fd = open((cwd + f).c_str(), O_WRONLY | O_CREAT, 0644);
      BOOST_REQUIRE(fd >= 0);
      close(fd);
    }
    BOOST_REQUIRE(symlink("file", (cwd + "/link").c_str()) == 0);
  }
  std::function<bool()> Setup() const {
    return [this] {
      int pipes[2];
      int file = open((cwd + "/file").c_str(), O_RDWR);
      int gone = open((cwd + "/gone").c_str(), O_RDWR);
      return chdir(cwd.c_str()) == 0 && pipe(pipes) == 0 && dup2(pipes[1], kPipeFd) == kPipeFd && file >= 0 &&
             dup2(file, kFileFd) == kFileFd && gone >= 0 && dup2(gone, kDeletedFd) == kDeletedFd &&
             unlink("gone") == 0;
    };
  }
};

MutationRequest Req(Action action, std::string path, uint64_t flags = 0) {
  MutationRequest r;
  r.action = action;
  r.syscall = "test";
  r.path = std::move(path);
  r.flags = flags;
  return r;
}

Mutation Resolve(pid_t tid, const MutationRequest& req, const Status& decode = Status::Ok()) {
  Mutation m;
  ResolveMutation(tid, req, decode, &m);
  BOOST_TEST(m.tid == tid);
  return m;
}

// Whether `req` on cwd/link acts on the symlink's target (cwd/file).
bool Follows(pid_t tid, const Tree& tree, MutationRequest req) {
  if (req.action == Action::kRename || req.action == Action::kLink) req.path2 = "new-name";
  Mutation m = Resolve(tid, req);
  BOOST_TEST_REQUIRE(m.resolve_error.ok(), m.resolve_error.ToString());
  BOOST_TEST_REQUIRE((m.abs == tree.cwd + "/file" || m.abs == tree.cwd + "/link"), m.abs);
  return m.abs == tree.cwd + "/file";
}

BOOST_AUTO_TEST_CASE(TheLastSymlinkIsFollowedAsEachCallFollowsIt) {
  Tree tree;
  ParkedProcess p(tree.Setup());
  pid_t tid = p.pid();
  BOOST_TEST(Follows(tid, tree, Req(Action::kOpen, "link", O_WRONLY)));
  BOOST_TEST(Follows(tid, tree, Req(Action::kOpen, "link", O_WRONLY | O_CREAT | O_TRUNC)));
  BOOST_TEST(!Follows(tid, tree, Req(Action::kOpen, "link", O_WRONLY | O_NOFOLLOW)));
  // O_CREAT|O_EXCL fails on any existing name, a symlink included.
  BOOST_TEST(!Follows(tid, tree, Req(Action::kOpen, "link", O_WRONLY | O_CREAT | O_EXCL)));
  BOOST_TEST(Follows(tid, tree, Req(Action::kTruncate, "link")));
  BOOST_TEST(Follows(tid, tree, Req(Action::kChmod, "link")));
  BOOST_TEST(!Follows(tid, tree, Req(Action::kChmod, "link", AT_SYMLINK_NOFOLLOW)));
  BOOST_TEST(!Follows(tid, tree, Req(Action::kLink, "link")));
  BOOST_TEST(Follows(tid, tree, Req(Action::kLink, "link", AT_SYMLINK_FOLLOW)));
  for (Action a : {Action::kRename, Action::kUnlink, Action::kRmdir, Action::kMkdir, Action::kSymlink,
                   Action::kMknod}) {
    BOOST_TEST(!Follows(tid, tree, Req(a, "link")), "action " << static_cast<int>(a));
  }
}

BOOST_AUTO_TEST_CASE(ARenameOrLinkResolvesItsSecondPathWithoutFollowingIt) {
  Tree tree;
  ParkedProcess p(tree.Setup());
  for (Action a : {Action::kRename, Action::kLink}) {
    MutationRequest req = Req(a, "file");
    req.path2 = "link";
    Mutation m = Resolve(p.pid(), req);
    BOOST_TEST(m.resolve_error.ok(), m.resolve_error.ToString());
    BOOST_TEST(m.has2);
    BOOST_TEST(m.abs == tree.cwd + "/file");
    BOOST_TEST(m.abs2 == tree.cwd + "/link");
  }
  Mutation single = Resolve(p.pid(), Req(Action::kUnlink, "file"));
  BOOST_TEST(!single.has2);
}

BOOST_AUTO_TEST_CASE(AnEmptyPathIsTheDirfdOnlyForLinkAndChmodWithAtEmptyPath) {
  Tree tree;
  ParkedProcess p(tree.Setup());
  MutationRequest req = Req(Action::kLink, "", AT_EMPTY_PATH);
  req.dirfd = kFileFd;
  req.path2 = "new-name";
  Mutation m = Resolve(p.pid(), req);
  BOOST_TEST(m.resolve_error.ok(), m.resolve_error.ToString());
  BOOST_TEST(m.abs == tree.cwd + "/file");
  BOOST_TEST(m.abs2 == tree.cwd + "/new-name");

  MutationRequest open = Req(Action::kOpen, "", O_WRONLY | AT_EMPTY_PATH);
  open.dirfd = kFileFd;
  Mutation refused = Resolve(p.pid(), open);
  BOOST_TEST(refused.resolve_error.err() == ENOENT, refused.resolve_error.ToString());
  BOOST_TEST(refused.refuse_errno == 0);  // the kernel fails it the same way
}

BOOST_AUTO_TEST_CASE(ACallOnAnFdNamesTheFileTheFdIsOpenOn) {
  Tree tree;
  ParkedProcess p(tree.Setup());
  for (Action a : {Action::kFtruncate, Action::kFchmod}) {
    MutationRequest req = Req(a, "");
    req.fd = kFileFd;
    Mutation m = Resolve(p.pid(), req);
    BOOST_TEST(m.resolve_error.ok(), m.resolve_error.ToString());
    BOOST_TEST(m.abs == tree.cwd + "/file");
  }
}

// A pipe and a deleted file have no name: the call acts on the open file
// itself, which the mutation carries (capture decides). A closed fd fails
// the call with EBADF: nothing to save, nothing to refuse.
BOOST_AUTO_TEST_CASE(AnFdWithoutANameStandsForItsOpenFile) {
  Tree tree;
  ParkedProcess p(tree.Setup());
  for (int fd : {kPipeFd, kDeletedFd}) {
    MutationRequest req = Req(Action::kFtruncate, "");
    req.fd = fd;
    Mutation m = Resolve(p.pid(), req);
    BOOST_TEST(m.resolve_error.ok(), "fd " << fd << ": " << m.resolve_error.ToString());
    BOOST_TEST(m.unnamed, "fd " << fd << ": " << m.abs);
    BOOST_TEST(m.abs == "/proc/" + std::to_string(p.pid()) + "/fd/" + std::to_string(fd));
  }
  MutationRequest deleted = Req(Action::kFchmod, "");
  deleted.fd = kDeletedFd;
  Mutation m = Resolve(p.pid(), deleted);
  BOOST_TEST(S_ISREG(m.unnamed_st.st_mode));
  BOOST_TEST(m.unnamed_st.st_nlink == 0u);

  MutationRequest closed = Req(Action::kFtruncate, "");
  closed.fd = 99;
  Mutation bad = Resolve(p.pid(), closed);
  BOOST_TEST(!bad.resolve_error.ok());
  BOOST_TEST(bad.refuse_errno == 0, bad.resolve_error.ToString());
}

// The text of a deleted file's link ends in " (deleted)"; so may a real
// name. Only the inode tells them apart.
BOOST_AUTO_TEST_CASE(AFileNamedLikeADeletedOneIsNamed) {
  Tree tree;
  std::string named = tree.cwd + "/notes (deleted)";
  int made = open(named.c_str(), O_WRONLY | O_CREAT, 0644);
  BOOST_REQUIRE(made >= 0);
  close(made);
  constexpr int kNamedFd = 63;
  ParkedProcess p([&tree, named, setup = tree.Setup()] {
    int fd = open(named.c_str(), O_RDONLY);
    return setup() && fd >= 0 && dup2(fd, kNamedFd) == kNamedFd;
  });
  MutationRequest req = Req(Action::kFchmod, "");
  req.fd = kNamedFd;
  Mutation m = Resolve(p.pid(), req);
  BOOST_TEST(m.resolve_error.ok(), m.resolve_error.ToString());
  BOOST_TEST(!m.unnamed);
  BOOST_TEST(m.abs == named);
}

// An open of /proc/self/fd/N follows the magic link to the open file, not
// to its text: a name when the file has one, else the file itself.
BOOST_AUTO_TEST_CASE(AnOpenThroughProcSelfFdActsOnTheOpenFile) {
  Tree tree;
  ParkedProcess p(tree.Setup());
  Mutation named = Resolve(p.pid(), Req(Action::kOpen, "/proc/self/fd/" + std::to_string(kFileFd), O_WRONLY));
  BOOST_TEST(named.resolve_error.ok(), named.resolve_error.ToString());
  BOOST_TEST(!named.unnamed);
  BOOST_TEST(named.abs == tree.cwd + "/file");

  Mutation gone = Resolve(p.pid(), Req(Action::kOpen, "/proc/self/fd/" + std::to_string(kDeletedFd), O_WRONLY));
  BOOST_TEST(gone.resolve_error.ok(), gone.resolve_error.ToString());
  BOOST_TEST(gone.unnamed);
  BOOST_TEST(gone.unnamed_st.st_nlink == 0u);
  BOOST_TEST(gone.abs == "/proc/" + std::to_string(p.pid()) + "/fd/" + std::to_string(kDeletedFd));
}

BOOST_AUTO_TEST_CASE(AMissingParentIsBenign) {
  Tree tree;
  ParkedProcess p(tree.Setup());
  Mutation m = Resolve(p.pid(), Req(Action::kOpen, "absent/x", O_WRONLY | O_CREAT));
  BOOST_TEST(m.resolve_error.err() == ENOENT, m.resolve_error.ToString());
  BOOST_TEST(m.refuse_errno == 0);
}

// Arguments guard could not read: it cannot tell what the call would
// change, a capture failure whatever the reason.
BOOST_AUTO_TEST_CASE(ARequestThatCouldNotBeReadIsACaptureFailure) {
  Tree tree;
  ParkedProcess p(tree.Setup());
  struct Case {
    int decode_errno;
    int refuse_errno;
  };
  for (Case c : {Case{EFAULT, EFAULT}, Case{ENAMETOOLONG, ENAMETOOLONG}, Case{ESRCH, EIO}, Case{EPERM, EIO}}) {
    Mutation m = Resolve(p.pid(), Req(Action::kUnlink, "file"), Status::FromErrno("reading", c.decode_errno));
    BOOST_TEST(!m.resolve_error.ok());
    BOOST_TEST(m.refuse_errno == c.refuse_errno, "decode errno " << c.decode_errno);
    BOOST_TEST(m.abs.empty());
  }
}

// guard names files by absolute path: a cwd deeper than PATH_MAX leaves a
// short relative path the kernel accepts but guard cannot name. That is a
// capture failure (refused with ENAMETOOLONG), not a call failing by itself.
// A component longer than NAME_MAX fails in the kernel too: benign.
BOOST_AUTO_TEST_CASE(AnAbsoluteFormLongerThanPathMaxIsACaptureFailure) {
  Tree tree;
  const std::string level(200, 'd');
  const int depth = PATH_MAX / 200 + 2;
  ParkedProcess p(
      [&] {
        if (chdir(tree.cwd.c_str()) != 0) return false;
        for (int i = 0; i < depth; ++i) {
          if (mkdir(level.c_str(), 0755) != 0 || chdir(level.c_str()) != 0) return false;
        }
        int fd = open("f", O_WRONLY | O_CREAT, 0644);
        return fd >= 0 && close(fd) == 0;
      },
      [&] {  // only the tracee, inside it, can take the deep tree apart
        if (unlink("f") != 0) return;
        for (int i = 0; i < depth; ++i) {
          if (chdir("..") != 0 || rmdir(level.c_str()) != 0) return;
        }
      });
  for (MutationRequest req : {Req(Action::kOpen, "f", O_WRONLY), Req(Action::kUnlink, "f"),
                              Req(Action::kMkdir, "new")}) {
    Mutation m = Resolve(p.pid(), req);
    BOOST_TEST(m.resolve_error.err() == ENAMETOOLONG, m.resolve_error.ToString());
    BOOST_TEST(m.refuse_errno == ENAMETOOLONG);
  }
  MutationRequest rename = Req(Action::kRename, tree.cwd + "/file");
  rename.path2 = "f";
  Mutation m = Resolve(p.pid(), rename);
  BOOST_TEST(m.refuse_errno == ENAMETOOLONG, "the second path of a rename: " << m.resolve_error.ToString());

  Mutation overlong = Resolve(p.pid(), Req(Action::kOpen, std::string(NAME_MAX + 1, 'n') + "/f", O_WRONLY));
  BOOST_TEST(overlong.resolve_error.err() == ENAMETOOLONG, overlong.resolve_error.ToString());
  BOOST_TEST(overlong.refuse_errno == 0);
}

}  // namespace
}  // namespace guard
