// DecodeMutation (supervisor/trace/syscall_decoder.h): from the number and
// registers of a stopped call to a MutationRequest. The "tracee" is this
// test process itself: process_vm_readv of one's own pid needs no tracer, so
// the addresses of local strings are readable as a tracee's would be.
#define BOOST_TEST_MODULE syscall_decoder
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits.h>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "common/syscall_table.h"
#include "supervisor/trace/syscall_decoder.h"

namespace guard {

std::ostream& operator<<(std::ostream& os, MutationRequest::Action a) { return os << static_cast<int>(a); }

namespace {

using Action = MutationRequest::Action;

constexpr long kFchmodat2 = 452;
constexpr uint64_t kCwd = static_cast<uint64_t>(AT_FDCWD);

uint64_t Addr(const char* s) { return reinterpret_cast<uint64_t>(s); }
uint64_t Fd(int fd) { return static_cast<uint64_t>(static_cast<int64_t>(fd)); }

const char kPath[] = "dir/file.txt";
const char kPath2[] = "/abs/other name";
const char kTarget[] = "../link target";

struct Row {
  const char* what;
  long nr;
  uint64_t args[6];
  MutationRequest want;  // every field compared
};

MutationRequest Want(Action action, const char* syscall, int dirfd, std::string path, uint64_t flags = 0,
                     uint32_t mode = 0) {
  MutationRequest r;
  r.action = action;
  r.syscall = syscall;
  r.dirfd = dirfd;
  r.path = std::move(path);
  r.flags = flags;
  r.mode = mode;
  return r;
}
MutationRequest With2(MutationRequest r, int dirfd2, std::string path2) {
  r.dirfd2 = dirfd2;
  r.path2 = std::move(path2);
  return r;
}
MutationRequest WithTarget(MutationRequest r, std::string target) {
  r.target = std::move(target);
  return r;
}
MutationRequest WithFd(MutationRequest r, int fd) {
  r.fd = fd;
  return r;
}

void ExpectDecodes(const std::vector<Row>& rows) {
  for (const Row& row : rows) {
    BOOST_TEST_CONTEXT(row.what) {
      MutationRequest got;
      Status s = DecodeMutation(getpid(), row.nr, row.args, &got);
      BOOST_TEST_REQUIRE(s.ok(), s.ToString());
      const MutationRequest& w = row.want;
      BOOST_TEST(got.action == w.action);
      BOOST_TEST(std::string(got.syscall) == std::string(w.syscall));
      BOOST_TEST(got.dirfd == w.dirfd);
      BOOST_TEST(got.path == w.path);
      BOOST_TEST(got.dirfd2 == w.dirfd2);
      BOOST_TEST(got.path2 == w.path2);
      BOOST_TEST(got.target == w.target);
      BOOST_TEST(got.fd == w.fd);
      BOOST_TEST(got.flags == w.flags);
      BOOST_TEST(got.mode == w.mode);
    }
  }
}

BOOST_AUTO_TEST_CASE(OpensDecodeTheirFlagsModeDirfdAndPath) {
  static open_how how{};
  how.flags = O_WRONLY | O_CREAT | O_EXCL;
  how.mode = 0640;
  ExpectDecodes({
      {"open", SYS_open, {Addr(kPath), O_WRONLY | O_TRUNC, 0600},
       Want(Action::kOpen, "open", AT_FDCWD, kPath, O_WRONLY | O_TRUNC, 0600)},
      // creat(p, m) is open(p, O_CREAT|O_WRONLY|O_TRUNC, m).
      {"creat", SYS_creat, {Addr(kPath2), 0755},
       Want(Action::kOpen, "creat", AT_FDCWD, kPath2, O_CREAT | O_WRONLY | O_TRUNC, 0755)},
      {"openat through a dirfd", SYS_openat, {Fd(7), Addr(kPath), O_RDWR | O_CREAT, 0644},
       Want(Action::kOpen, "openat", 7, kPath, O_RDWR | O_CREAT, 0644)},
      {"openat AT_FDCWD", SYS_openat, {kCwd, Addr(kPath2), O_WRONLY},
       Want(Action::kOpen, "openat", AT_FDCWD, kPath2, O_WRONLY)},
      {"openat2 reads its flags and mode from struct open_how", SYS_openat2,
       {Fd(3), Addr(kPath), Addr(reinterpret_cast<const char*>(&how)), sizeof how},
       Want(Action::kOpen, "openat2", 3, kPath, O_WRONLY | O_CREAT | O_EXCL, 0640)},
  });
}

BOOST_AUTO_TEST_CASE(CallsOnNamesDecodeTheirPathsAndFlags) {
  ExpectDecodes({
      {"truncate", SYS_truncate, {Addr(kPath), 3}, Want(Action::kTruncate, "truncate", AT_FDCWD, kPath)},
      {"ftruncate", SYS_ftruncate, {Fd(9), 0}, WithFd(Want(Action::kFtruncate, "ftruncate", AT_FDCWD, ""), 9)},
      {"rename", SYS_rename, {Addr(kPath), Addr(kPath2)},
       With2(Want(Action::kRename, "rename", AT_FDCWD, kPath), AT_FDCWD, kPath2)},
      {"renameat", SYS_renameat, {Fd(4), Addr(kPath), Fd(5), Addr(kPath2)},
       With2(Want(Action::kRename, "renameat", 4, kPath), 5, kPath2)},
      {"renameat2 RENAME_EXCHANGE", SYS_renameat2, {kCwd, Addr(kPath), Fd(6), Addr(kPath2), 2},
       With2(Want(Action::kRename, "renameat2", AT_FDCWD, kPath, 2), 6, kPath2)},
      {"unlink", SYS_unlink, {Addr(kPath)}, Want(Action::kUnlink, "unlink", AT_FDCWD, kPath)},
      {"unlinkat", SYS_unlinkat, {Fd(4), Addr(kPath), 0}, Want(Action::kUnlink, "unlinkat", 4, kPath)},
      {"unlinkat AT_REMOVEDIR is an rmdir", SYS_unlinkat, {Fd(4), Addr(kPath), AT_REMOVEDIR},
       Want(Action::kRmdir, "unlinkat", 4, kPath, AT_REMOVEDIR)},
      {"rmdir", SYS_rmdir, {Addr(kPath)}, Want(Action::kRmdir, "rmdir", AT_FDCWD, kPath)},
      {"mkdir", SYS_mkdir, {Addr(kPath), 0750}, Want(Action::kMkdir, "mkdir", AT_FDCWD, kPath, 0, 0750)},
      {"mkdirat", SYS_mkdirat, {Fd(8), Addr(kPath), 0700}, Want(Action::kMkdir, "mkdirat", 8, kPath, 0, 0700)},
      // symlink(target, linkpath): the path is the link's, the target its text.
      {"symlink", SYS_symlink, {Addr(kTarget), Addr(kPath)},
       WithTarget(Want(Action::kSymlink, "symlink", AT_FDCWD, kPath), kTarget)},
      {"symlinkat", SYS_symlinkat, {Addr(kTarget), Fd(5), Addr(kPath)},
       WithTarget(Want(Action::kSymlink, "symlinkat", 5, kPath), kTarget)},
      // link(existing, new): path is the existing name, path2 the new one.
      {"link", SYS_link, {Addr(kPath), Addr(kPath2)},
       With2(Want(Action::kLink, "link", AT_FDCWD, kPath), AT_FDCWD, kPath2)},
      {"linkat AT_SYMLINK_FOLLOW", SYS_linkat, {Fd(3), Addr(kPath), Fd(4), Addr(kPath2), AT_SYMLINK_FOLLOW},
       With2(Want(Action::kLink, "linkat", 3, kPath, AT_SYMLINK_FOLLOW), 4, kPath2)},
      {"chmod", SYS_chmod, {Addr(kPath), 04755}, Want(Action::kChmod, "chmod", AT_FDCWD, kPath, 0, 04755)},
      {"fchmod", SYS_fchmod, {Fd(11), 0600}, WithFd(Want(Action::kFchmod, "fchmod", AT_FDCWD, "", 0, 0600), 11)},
      // fchmodat has no flags argument (the kernel ignores a fourth register).
      {"fchmodat", SYS_fchmodat, {Fd(3), Addr(kPath), 0640, AT_SYMLINK_NOFOLLOW},
       Want(Action::kChmod, "fchmodat", 3, kPath, 0, 0640)},
      {"fchmodat2", kFchmodat2, {kCwd, Addr(kPath), 0640, AT_SYMLINK_NOFOLLOW},
       Want(Action::kChmod, "fchmodat2", AT_FDCWD, kPath, AT_SYMLINK_NOFOLLOW, 0640)},
      {"mknod", SYS_mknod, {Addr(kPath), S_IFIFO | 0600, 0},
       Want(Action::kMknod, "mknod", AT_FDCWD, kPath, 0, S_IFIFO | 0600)},
      {"mknodat", SYS_mknodat, {Fd(6), Addr(kPath), S_IFREG | 0644, 0},
       Want(Action::kMknod, "mknodat", 6, kPath, 0, S_IFREG | 0644)},
  });
}

// chown clears set-id bits; an access ACL written as an xattr sets the mode
// (its permission bits decoded into `mode`). Other xattr names are no
// mutation: the tracer lets them run at once.
BOOST_AUTO_TEST_CASE(ChownsAndAclWritesDecodeAsModeChanges) {
  static const char kAcl[] = "system.posix_acl_access";
  // version 2; user::rwx, group::r-x, other::--x
  static const uint32_t kMinimal[] = {2, 0x00070001, 0xffffffff, 0x00050004, 0xffffffff, 0x00010020, 0xffffffff};
  // user::rw-, user:12345:rwx, group::rwx, mask::r--, other::---: the mask sets the group bits.
  static const uint32_t kExtended[] = {2,          0x00060001, 0xffffffff, 0x00070002, 12345,
                                       0x00070004, 0xffffffff, 0x00040010, 0xffffffff, 0x00000020,
                                       0xffffffff};
  uint64_t minimal = reinterpret_cast<uint64_t>(kMinimal), extended = reinterpret_cast<uint64_t>(kExtended);
  static const uint64_t kXattrArgs[2] = {reinterpret_cast<uint64_t>(kMinimal), sizeof kMinimal};
  ExpectDecodes({
      {"chown", SYS_chown, {Addr(kPath), 1, 2}, Want(Action::kChown, "chown", AT_FDCWD, kPath)},
      {"lchown", SYS_lchown, {Addr(kPath), 1, 2},
       Want(Action::kChown, "lchown", AT_FDCWD, kPath, AT_SYMLINK_NOFOLLOW)},
      {"fchownat", SYS_fchownat, {Fd(3), Addr(kPath), 1, 2, AT_EMPTY_PATH},
       Want(Action::kChown, "fchownat", 3, kPath, AT_EMPTY_PATH)},
      {"fchown", SYS_fchown, {Fd(12), 1, 2}, WithFd(Want(Action::kFchown, "fchown", AT_FDCWD, ""), 12)},
      {"setxattr of a minimal ACL", SYS_setxattr, {Addr(kPath), Addr(kAcl), minimal, sizeof kMinimal, 0},
       Want(Action::kSetAcl, "setxattr", AT_FDCWD, kPath, 0, 0751)},
      {"lsetxattr of an extended ACL", SYS_lsetxattr, {Addr(kPath), Addr(kAcl), extended, sizeof kExtended, 0},
       Want(Action::kSetAcl, "lsetxattr", AT_FDCWD, kPath, AT_SYMLINK_NOFOLLOW, 0640)},
      {"fsetxattr of an ACL that does not parse", SYS_fsetxattr, {Fd(5), Addr(kAcl), minimal, 5, 0},
       WithFd(Want(Action::kFsetAcl, "fsetxattr", AT_FDCWD, "", 0, kAclModeUnknown), 5)},
      {"setxattrat", 463, {Fd(4), Addr(kPath), AT_SYMLINK_NOFOLLOW, Addr(kAcl),
                           reinterpret_cast<uint64_t>(kXattrArgs), sizeof kXattrArgs},
       Want(Action::kSetAcl, "setxattrat", 4, kPath, AT_SYMLINK_NOFOLLOW, 0751)},
  });
  static const char kUserNote[] = "user.note";
  uint64_t args[6] = {Addr(kPath), Addr(kUserNote), minimal, 1, 0};
  MutationRequest got;
  BOOST_TEST((DecodeMutation(getpid(), SYS_setxattr, args, &got).code() == Status::Code::kUnsupported));
}

// The table (common/syscall_table.h) by construction: every row with an
// action and plain arguments decodes each argument into the field its role
// names, and a row without an action is no mutation. (The rows that read a
// struct from memory, openat2, the setxattr family and bind, have tests of
// their own above and below.)
BOOST_AUTO_TEST_CASE(EveryCallOfTheTableDecodesItsArgumentsByTheirRoles) {
  constexpr uint64_t kFlags = AT_SYMLINK_FOLLOW | 0x10000;
  size_t decoded = 0;
  for (const guard_syscall& call : guard_syscalls) {
    if (call.nr < 0) continue;
    BOOST_TEST_CONTEXT(call.name) {
      std::string roles = call.args;
      uint64_t args[6] = {};
      MutationRequest want;
      want.syscall = call.name;
      want.flags = call.fixed_flags;
      for (size_t i = 0; i < roles.size(); ++i) {
        switch (roles[i]) {
          case 'd': args[i] = Fd(3), want.dirfd = 3; break;
          case 'D': args[i] = Fd(4), want.dirfd2 = 4; break;
          case 'f': args[i] = Fd(5), want.fd = 5; break;
          case 'p': args[i] = Addr(kPath), want.path = kPath; break;
          case 'P': args[i] = Addr(kPath2), want.path2 = kPath2; break;
          case 't': args[i] = Addr(kTarget), want.target = kTarget; break;
          case 'o': args[i] = kFlags, want.flags |= kFlags; break;
          case 'm': args[i] = 0640, want.mode = 0640; break;
          default: args[i] = 0; break;
        }
      }
      MutationRequest got;
      Status s = DecodeMutation(getpid(), call.nr, args, &got);
      if (call.action == GUARD_ACTION_None) {
        BOOST_TEST((s.code() == Status::Code::kUnsupported), s.ToString());
        continue;
      }
      if (roles.find_first_of("xhas") != std::string::npos) continue;
      BOOST_TEST_REQUIRE(s.ok(), s.ToString());
      ++decoded;
      BOOST_TEST(std::string(got.syscall) == call.name);
      BOOST_TEST(got.dirfd == want.dirfd);
      BOOST_TEST(got.dirfd2 == want.dirfd2);
      BOOST_TEST(got.fd == want.fd);
      BOOST_TEST(got.path == want.path);
      BOOST_TEST(got.path2 == want.path2);
      BOOST_TEST(got.target == want.target);
      BOOST_TEST(got.flags == want.flags);
      BOOST_TEST(got.mode == want.mode);
    }
  }
  BOOST_TEST(decoded >= 25u);
}

// The action of each call, written out here rather than read from the table:
// a row given the wrong action fails.
BOOST_AUTO_TEST_CASE(EveryCallOfTheTableDecodesToItsAction) {
  const std::vector<std::pair<std::vector<const char*>, Action>> actions = {
      {{"open", "openat", "creat", "openat2"}, Action::kOpen},
      {{"truncate"}, Action::kTruncate},
      {{"ftruncate"}, Action::kFtruncate},
      {{"rename", "renameat", "renameat2"}, Action::kRename},
      {{"unlink", "unlinkat"}, Action::kUnlink},
      {{"rmdir"}, Action::kRmdir},
      {{"mkdir", "mkdirat"}, Action::kMkdir},
      {{"symlink", "symlinkat"}, Action::kSymlink},
      {{"link", "linkat"}, Action::kLink},
      {{"chmod", "fchmodat", "fchmodat2"}, Action::kChmod},
      {{"fchmod"}, Action::kFchmod},
      {{"mknod", "mknodat", "bind"}, Action::kMknod},
      {{"chown", "lchown", "fchownat"}, Action::kChown},
      {{"fchown"}, Action::kFchown},
      {{"setxattr", "lsetxattr", "setxattrat"}, Action::kSetAcl},
      {{"fsetxattr"}, Action::kFsetAcl},
  };
  size_t named = 0;
  for (const guard_syscall& call : guard_syscalls) {
    if (call.action == GUARD_ACTION_None) continue;
    ++named;
    bool found = false;
    for (const auto& [names, action] : actions) {
      for (const char* name : names) {
        if (std::string(name) != call.name) continue;
        found = true;
        // Decoded from plain arguments (its struct, if any, unreadable):
        // the action is set before anything is read.
        if (call.nr < 0) continue;
        uint64_t args[6] = {};
        std::string roles = call.args;
        for (size_t i = 0; i < roles.size(); ++i) {
          if (roles[i] == 'p' || roles[i] == 'P' || roles[i] == 't') args[i] = Addr(kPath);
        }
        MutationRequest got;
        (void)DecodeMutation(getpid(), call.nr, args, &got);
        BOOST_TEST(got.action == action, call.name);
      }
    }
    BOOST_TEST(found, call.name << ": a call with an action this test does not name");
  }
  BOOST_TEST(named >= 30u);
}

// A dirfd is an int in a 64-bit register: the upper half is not part of it.
BOOST_AUTO_TEST_CASE(ADirfdIsTheLower32BitsSignExtended) {
  uint64_t args[6] = {0xffffffff00000000ull | static_cast<uint32_t>(AT_FDCWD), Addr(kPath), O_WRONLY};
  MutationRequest got;
  BOOST_REQUIRE(DecodeMutation(getpid(), SYS_openat, args, &got).ok());
  BOOST_TEST(got.dirfd == AT_FDCWD);
}

BOOST_AUTO_TEST_CASE(APathEndingJustBeforeAnUnmappedPageIsRead) {
  long page = sysconf(_SC_PAGESIZE);
  char* map = static_cast<char*>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  BOOST_REQUIRE(map != MAP_FAILED);
  BOOST_REQUIRE(munmap(map + page, page) == 0);
  const char name[] = "at-the-end";
  char* start = map + page - sizeof name;
  std::memcpy(start, name, sizeof name);
  uint64_t args[6] = {Addr(start)};
  MutationRequest got;
  Status s = DecodeMutation(getpid(), SYS_unlink, args, &got);
  BOOST_TEST(s.ok(), s.ToString());
  BOOST_TEST(got.path == name);
  munmap(map, page);
}

// A pointer guard cannot read is not "a call guard does not know": it must
// reach capture as a failure (kUnsupported would let the call run).
BOOST_AUTO_TEST_CASE(AnUnreadablePathIsAnErrorButNotUnsupported) {
  long page = sysconf(_SC_PAGESIZE);
  void* map = mmap(nullptr, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  BOOST_REQUIRE(map != MAP_FAILED);
  uint64_t unmapped = reinterpret_cast<uint64_t>(map);
  BOOST_REQUIRE(munmap(map, page) == 0);
  struct Case {
    const char* what;
    long nr;
    uint64_t args[6];
  };
  for (const Case& c : std::vector<Case>{
           {"open of a null path", SYS_open, {0, O_WRONLY}},
           {"openat of an unmapped path", SYS_openat, {kCwd, unmapped, O_WRONLY}},
           {"openat2 of an unmapped open_how", SYS_openat2, {kCwd, Addr(kPath), unmapped, sizeof(open_how)}},
           {"rename of an unmapped second path", SYS_rename, {Addr(kPath), unmapped}},
           {"symlinkat of an unmapped target", SYS_symlinkat, {unmapped, kCwd, Addr(kPath)}},
           {"linkat of an unmapped first path", SYS_linkat, {kCwd, unmapped, kCwd, Addr(kPath2), 0}},
       }) {
    MutationRequest got;
    Status s = DecodeMutation(getpid(), c.nr, c.args, &got);
    BOOST_TEST(!s.ok(), c.what);
    BOOST_TEST((s.code() != Status::Code::kUnsupported), c.what << ": " << s.ToString());
    BOOST_TEST(s.err() == EFAULT, c.what << ": " << s.ToString());
  }
}

// The kernel takes a path of at most PATH_MAX bytes with its NUL, and
// fails a longer one with ENAMETOOLONG; so does the decoder, wherever the
// string lies relative to the pages it is read by.
BOOST_AUTO_TEST_CASE(APathOfPathMaxBytesOrMoreIsAnError) {
  long page = sysconf(_SC_PAGESIZE);
  const size_t span = 4 * PATH_MAX;
  char* map = static_cast<char*>(mmap(nullptr, span + 2 * page, PROT_READ | PROT_WRITE,
                                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  BOOST_REQUIRE(map != MAP_FAILED);
  for (size_t offset : {size_t{0}, size_t{1}, size_t{2048}, static_cast<size_t>(page - 1)}) {
    for (size_t len : {size_t{PATH_MAX - 1}, size_t{PATH_MAX}, size_t{PATH_MAX + 1}, size_t{3 * PATH_MAX}}) {
      BOOST_TEST_CONTEXT("a path of " << len << " bytes at page offset " << offset) {
        std::memset(map + offset, 'a', len);
        map[offset + len] = '\0';
        uint64_t args[6] = {Addr(map + offset)};
        MutationRequest got;
        Status s = DecodeMutation(getpid(), SYS_unlink, args, &got);
        if (len < PATH_MAX) {
          BOOST_TEST(s.ok(), s.ToString());
          BOOST_TEST(got.path.size() == len);
        } else {
          BOOST_TEST((s.code() != Status::Code::kUnsupported));
          BOOST_TEST(s.err() == ENAMETOOLONG, s.ToString());
        }
      }
    }
  }
  munmap(map, span + 2 * page);
}

BOOST_AUTO_TEST_CASE(ACallThatIsNoMutationIsUnsupported) {
  uint64_t args[6] = {Addr(kPath)};
  for (long nr : {static_cast<long>(SYS_getpid), static_cast<long>(SYS_write), static_cast<long>(SYS_stat), 4000L}) {
    MutationRequest got;
    Status s = DecodeMutation(getpid(), nr, args, &got);
    BOOST_TEST((s.code() == Status::Code::kUnsupported), "syscall " << nr << ": " << s.ToString());
  }
}

// The filter stops every openat2 (its flags are out of BPF's reach); one
// that only reads changes nothing and runs.
BOOST_AUTO_TEST_CASE(AReadOnlyOpenat2IsUnsupported) {
  for (uint64_t flags : {static_cast<uint64_t>(O_RDONLY), static_cast<uint64_t>(O_RDONLY | O_DIRECTORY | O_CLOEXEC),
                         static_cast<uint64_t>(O_PATH)}) {
    open_how how{};
    how.flags = flags;
    uint64_t args[6] = {kCwd, Addr(kPath), reinterpret_cast<uint64_t>(&how), sizeof how};
    MutationRequest got;
    Status s = DecodeMutation(getpid(), SYS_openat2, args, &got);
    BOOST_TEST((s.code() == Status::Code::kUnsupported), "flags " << flags << ": " << s.ToString());
  }
  for (uint64_t flags : {static_cast<uint64_t>(O_WRONLY), static_cast<uint64_t>(O_RDWR),
                         static_cast<uint64_t>(O_CREAT), static_cast<uint64_t>(O_TRUNC)}) {
    open_how how{};
    how.flags = flags;
    uint64_t args[6] = {kCwd, Addr(kPath), reinterpret_cast<uint64_t>(&how), sizeof how};
    MutationRequest got;
    Status s = DecodeMutation(getpid(), SYS_openat2, args, &got);
    BOOST_TEST(s.ok(), "flags " << flags << ": " << s.ToString());
    BOOST_TEST(got.path == kPath);
  }
}

// An open_how smaller than today's (an older program's) is read as far as
// it goes; the rest counts as zero.
BOOST_AUTO_TEST_CASE(AShortOpenHowIsReadAsFarAsItGoes) {
  uint64_t flags_only = O_WRONLY | O_CREAT;
  uint64_t args[6] = {kCwd, Addr(kPath), reinterpret_cast<uint64_t>(&flags_only), sizeof flags_only};
  MutationRequest got;
  Status s = DecodeMutation(getpid(), SYS_openat2, args, &got);
  BOOST_TEST_REQUIRE(s.ok(), s.ToString());
  BOOST_TEST(got.flags == flags_only);
  BOOST_TEST(got.mode == 0u);
}

}  // namespace
}  // namespace guard

namespace guard {
namespace {

// bind(2) makes a file only for a unix socket bound to a path: the creation
// of a socket file, with the mode the umask leaves (0777 & ~umask).
BOOST_AUTO_TEST_CASE(ABindToAUnixPathIsTheCreationOfASocketFile) {
  mode_t mask = umask(027);
  umask(mask | 027);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, "run/server.sock");
  uint64_t args[6] = {3, reinterpret_cast<uint64_t>(&addr), sizeof addr, 0, 0, 0};
  MutationRequest r;
  Status s = DecodeMutation(getpid(), SYS_bind, args, &r);
  umask(mask);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  BOOST_TEST((r.action == Action::kMknod));
  BOOST_TEST(std::string(r.syscall) == "bind");
  BOOST_TEST(r.dirfd == AT_FDCWD);
  BOOST_TEST(r.path == "run/server.sock");
  BOOST_TEST(r.mode == (S_IFSOCK | (0777u & ~(mask | 027u))));
}

BOOST_AUTO_TEST_CASE(ABindThatMakesNoFileIsUnsupported) {
  sockaddr_un abstract{};
  abstract.sun_family = AF_UNIX;
  std::strcpy(abstract.sun_path + 1, "abstract");
  sockaddr_in inet{};
  inet.sin_family = AF_INET;
  struct Case {
    const char* what;
    const void* addr;
    uint64_t len;
  } cases[] = {
      {"abstract name", &abstract, sizeof abstract},
      {"autobind", &abstract, sizeof(sa_family_t)},
      {"AF_INET", &inet, sizeof inet},
  };
  for (const Case& c : cases) {
    uint64_t args[6] = {3, reinterpret_cast<uint64_t>(c.addr), c.len, 0, 0, 0};
    MutationRequest r;
    Status s = DecodeMutation(getpid(), SYS_bind, args, &r);
    BOOST_TEST((s.code() == Status::Code::kUnsupported), c.what << ": " << s.ToString());
  }
}

}  // namespace
}  // namespace guard
