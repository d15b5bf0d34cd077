/* The ways an fd reaches another number or another process besides dup,
 * dup2 and dup3 (fd_calls.c): fcntl's F_DUPFD and F_DUPFD_CLOEXEC (Python's
 * os.dup; also by glibc's public name __fcntl), and a unix socket's SCM_RIGHTS (sendmsg, sendmmsg). The copy
 * shares the open file but not its mark, so a pending capture is made
 * before the copy exists (fd_change.h): a write through the copy, or in the
 * process that receives it, would otherwise change the file unseen. */
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "interpose/fd_marks.h"
#include "interpose/linux/fd_change.h"
#include "interpose/linux/interposer.h"

SHIM_REAL_SLOT(fcntl);
SHIM_REAL_SLOT(fcntl64);
SHIM_REAL_SLOT(sendmsg);
SHIM_REAL_SLOT(sendmmsg);

/* fcntl is frequent (F_GETFL, F_SETFD, locks): one compare of the command
 * before the real function. Its third argument is read as a pointer-sized
 * word, as glibc's own fcntl reads it. */
static int dup_command(int cmd) { return cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC; }

static int copy_blocked(const char* entry, int fd) {
  int err = shim_fd_copying(entry, fd);
  if (err != 0) errno = err;
  return err;
}

/* fcntl, its glibc names fcntl64 and __fcntl: the same function. */
static int fcntl_any(const char* entry, __typeof__(&fcntl) real, int fd, int cmd, void* arg) {
  if (dup_command(cmd) && shim_fd_is_pending(fd) && copy_blocked(entry, fd) != 0) return -1;
  return real != NULL ? real(fd, cmd, arg) : (int)shim_raw6(SYS_fcntl, SHIM_LONGS6(fd, cmd, (long)arg));
}

#define SHIM_FCNTL_ARG(cmd, arg) \
  va_list ap_;                   \
  va_start(ap_, cmd);            \
  void* arg = va_arg(ap_, void*); \
  va_end(ap_)

SHIM_EXPORT int fcntl(int fd, int cmd, ...) {
  SHIM_FCNTL_ARG(cmd, arg);
  return fcntl_any("fcntl", SHIM_REAL(fcntl), fd, cmd, arg);
}

SHIM_EXPORT int fcntl64(int fd, int cmd, ...) {
  SHIM_FCNTL_ARG(cmd, arg);
  return fcntl_any("fcntl64", SHIM_REAL(fcntl64), fd, cmd, arg);
}

/* glibc's public __fcntl (GLIBC_2.2.5): fcntl under another name. */
int __fcntl(int fd, int cmd, ...);
SHIM_EXPORT int __fcntl(int fd, int cmd, ...) {
  SHIM_FCNTL_ARG(cmd, arg);
  return fcntl_any("__fcntl", SHIM_REAL(fcntl), fd, cmd, arg);
}

/* Walks the control messages as the kernel does (a header shorter than
 * itself or longer than what is left ends the walk: the kernel refuses such
 * a message with EINVAL, and nothing is sent). */
int shim_fds_sending(const char* entry, const struct msghdr* msg) {
  if (msg == NULL || msg->msg_control == NULL) return 0;
  const unsigned char* p = (const unsigned char*)msg->msg_control;
  size_t left = msg->msg_controllen;
  while (left >= sizeof(struct cmsghdr)) {
    const struct cmsghdr* h = (const struct cmsghdr*)(const void*)p;
    if (h->cmsg_len < sizeof(struct cmsghdr) || h->cmsg_len > left) break;
    if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS) {
      size_t n = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      const unsigned char* data = CMSG_DATA(h);
      for (size_t i = 0; i < n; ++i) {
        int fd;
        memcpy(&fd, data + i * sizeof(int), sizeof fd);
        int err = shim_fd_copying(entry, fd);
        if (err != 0) return err;
      }
    }
    size_t step = CMSG_ALIGN(h->cmsg_len);
    if (step >= left) break;
    p += step;
    left -= step;
  }
  return 0;
}

SHIM_EXPORT ssize_t sendmsg(int fd, const struct msghdr* msg, int flags) {
  if (msg != NULL && msg->msg_controllen > 0) {
    int err = shim_fds_sending("sendmsg", msg);
    if (err != 0) {
      errno = err;
      return -1;
    }
  }
  return SHIM_REAL_OR_RAW(sendmsg, (fd, msg, flags), SYS_sendmsg, fd, (long)msg, flags);
}

int shim_fds_sending_many(const char* entry, const struct mmsghdr* msgs, unsigned int count) {
  for (unsigned int i = 0; msgs != NULL && i < count; ++i) {
    if (msgs[i].msg_hdr.msg_controllen == 0) continue;
    int err = shim_fds_sending(entry, &msgs[i].msg_hdr);
    if (err != 0) return err;
  }
  return 0;
}

SHIM_EXPORT int sendmmsg(int fd, struct mmsghdr* msgs, unsigned int count, int flags) {
  int err = shim_fds_sending_many("sendmmsg", msgs, count);
  if (err != 0) {
    errno = err;
    return -1;
  }
  return (int)SHIM_REAL_OR_RAW(sendmmsg, (fd, msgs, count, flags), SYS_sendmmsg, fd, (long)msgs, count, flags);
}
