/* mode_side_effects CALL PATH [MODE]: changes PATH's permission bits
 * without chmod, the ways the kernel allows, one raw call each:
 *
 *   setxattr, lsetxattr, fsetxattr MODE   set system.posix_acl_access to the
 *       ACL equivalent to octal MODE (user::, group::, other:: only): the
 *       kernel stores no xattr then and sets the mode instead, as it does
 *       for GNU `cp -a`;
 *   setxattr-named MODE                   the same plus a named-user entry
 *       (user 12345) and a mask: an extended ACL, whose mask sets the
 *       group bits;
 *   setxattr-other                        set user.note, which changes no
 *       mode (guard must let it through);
 *   chown, lchown, fchown, fchownat       set the owner to what it is: the
 *       kernel still clears the set-uid bit (and set-gid with group
 *       execute) of a non-directory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ACL_ACCESS "system.posix_acl_access"

/* The kernel's xattr form of a POSIX ACL (include/uapi/linux/posix_acl_xattr.h). */
struct acl_entry {
  uint16_t tag, perm;
  uint32_t id;
};
enum { kUserObj = 1, kUser = 2, kGroupObj = 4, kMask = 0x10, kOther = 0x20 };

static size_t BuildAcl(unsigned mode, int named, unsigned char* buf) {
  uint32_t version = 2;
  struct acl_entry e[5];
  size_t n = 0;
  e[n++] = (struct acl_entry){kUserObj, (mode >> 6) & 7, UINT32_MAX};
  if (named) e[n++] = (struct acl_entry){kUser, 7, 12345};
  e[n++] = (struct acl_entry){kGroupObj, (mode >> 3) & 7, UINT32_MAX};
  if (named) e[n++] = (struct acl_entry){kMask, (mode >> 3) & 7, UINT32_MAX};
  e[n++] = (struct acl_entry){kOther, mode & 7, UINT32_MAX};
  memcpy(buf, &version, sizeof version);
  memcpy(buf + sizeof version, e, n * sizeof e[0]);
  return sizeof version + n * sizeof e[0];
}

static int Fail(const char* call, const char* path) {
  fprintf(stderr, "mode_side_effects %s %s: %s\n", call, path, strerror(errno));
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: mode_side_effects CALL PATH [MODE]\n");
    return 2;
  }
  const char* call = argv[1];
  const char* path = argv[2];
  unsigned mode = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 8) : 0;
  unsigned char acl[64];
  long rc;
  if (strcmp(call, "setxattr") == 0 || strcmp(call, "setxattr-named") == 0) {
    size_t len = BuildAcl(mode, strcmp(call, "setxattr-named") == 0, acl);
    rc = syscall(SYS_setxattr, path, ACL_ACCESS, acl, len, 0);
  } else if (strcmp(call, "lsetxattr") == 0) {
    size_t len = BuildAcl(mode, 0, acl);
    rc = syscall(SYS_lsetxattr, path, ACL_ACCESS, acl, len, 0);
  } else if (strcmp(call, "fsetxattr") == 0) {
    size_t len = BuildAcl(mode, 0, acl);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return Fail("open", path);
    rc = syscall(SYS_fsetxattr, fd, ACL_ACCESS, acl, len, 0);
  } else if (strcmp(call, "setxattr-other") == 0) {
    rc = syscall(SYS_setxattr, path, "user.note", "x", 1, 0);
  } else {
    struct stat st;
    if (lstat(path, &st) != 0) return Fail("lstat", path);
    if (strcmp(call, "chown") == 0) {
      rc = syscall(SYS_chown, path, st.st_uid, st.st_gid);
    } else if (strcmp(call, "lchown") == 0) {
      rc = syscall(SYS_lchown, path, st.st_uid, st.st_gid);
    } else if (strcmp(call, "fchown") == 0) {
      int fd = open(path, O_RDONLY);
      if (fd < 0) return Fail("open", path);
      rc = syscall(SYS_fchown, fd, st.st_uid, st.st_gid);
    } else if (strcmp(call, "fchownat") == 0) {
      rc = syscall(SYS_fchownat, AT_FDCWD, path, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW);
    } else {
      fprintf(stderr, "mode_side_effects: unknown call %s\n", call);
      return 2;
    }
  }
  if (rc != 0) return Fail(call, path);
  return 0;
}
