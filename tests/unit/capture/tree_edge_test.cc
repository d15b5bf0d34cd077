// ParentLeavesTheTree: a path below a symlinked or non-directory ancestor
// leads out of the tree; one below absent or real directories does not;
// and a sandbox that refuses openat2 still gets the right answer (the walk).
#define BOOST_TEST_MODULE tree_edge
#include <boost/test/unit_test.hpp>

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "supervisor/capture/tree_edge.h"

namespace guard {
namespace {

namespace fs = std::filesystem;

struct Tree {
  std::string dir, root, outside;
  Tree() {
    char tmpl[] = "/tmp/guard-tree-edge-XXXXXX";
    BOOST_REQUIRE(mkdtemp(tmpl) != nullptr);
    dir = fs::canonical(tmpl).string();
    root = dir + "/root";
    outside = dir + "/outside";
    fs::create_directories(root + "/a/b");
    fs::create_directories(outside + "/x");
    std::ofstream(outside + "/x/secret") << "not the tree's\n";
    std::ofstream(root + "/file") << "a file\n";
    fs::create_directory_symlink(outside + "/x", root + "/link");
    fs::create_directory_symlink(outside, root + "/a/deep");
  }
  ~Tree() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

// All the cases, in this process as it is.
void CheckAll(const Tree& t, bool* ok) {
  *ok = !ParentLeavesTheTree(t.root, "top") && !ParentLeavesTheTree(t.root, "a/b/c") &&
        !ParentLeavesTheTree(t.root, "a/absent/c") && !ParentLeavesTheTree(t.root, "link") &&
        ParentLeavesTheTree(t.root, "link/secret") && ParentLeavesTheTree(t.root, "a/deep/x/secret") &&
        ParentLeavesTheTree(t.root, "file/below");
}

BOOST_FIXTURE_TEST_CASE(SymlinkedAndFileAncestorsLeaveAbsentAndRealOnesDoNot, Tree) {
  BOOST_TEST(!ParentLeavesTheTree(root, "top"));           // a name in the root itself
  BOOST_TEST(!ParentLeavesTheTree(root, "a/b/c"));         // real directories
  BOOST_TEST(!ParentLeavesTheTree(root, "a/absent/c"));    // absent: the lstat of the path says so
  BOOST_TEST(!ParentLeavesTheTree(root, "link"));          // the symlink itself is in the tree
  BOOST_TEST(ParentLeavesTheTree(root, "link/secret"));    // below a symlink
  BOOST_TEST(ParentLeavesTheTree(root, "a/deep/x/secret"));
  BOOST_TEST(ParentLeavesTheTree(root, "file/below"));     // below a file
}

// A container's seccomp profile that answers openat2 with EPERM: the check
// must fall back to the walk, not take the refusal for "beneath".
BOOST_FIXTURE_TEST_CASE(ASandboxThatRefusesOpenat2GetsTheWalksAnswer, Tree) {
  pid_t pid = fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {static_cast<unsigned short>(sizeof code / sizeof code[0]), code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
      _exit(3);
    }
    if (syscall(SYS_openat2, AT_FDCWD, "/", nullptr, 0) != -1 || errno != EPERM) _exit(4);
    bool ok = false;
    CheckAll(*this, &ok);
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  BOOST_REQUIRE(waitpid(pid, &status, 0) == pid);
  BOOST_REQUIRE(WIFEXITED(status));
  BOOST_TEST(WEXITSTATUS(status) == 0, "child exit " << WEXITSTATUS(status) << " (1: a wrong answer, 3/4: no filter)");
}

}  // namespace
}  // namespace guard
