/* One fd sent over a unix socket in an SCM_RIGHTS message (by sendmsg, or
 * by sendmmsg when `many`), and one received: shared by the test programs
 * that hand an fd to this or another process. */
#ifndef GUARD_TESTS_PROGRAMS_SCM_RIGHTS_H_
#define GUARD_TESTS_PROGRAMS_SCM_RIGHTS_H_

#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

union scm_one_fd {
  char buf[CMSG_SPACE(sizeof(int))];
  struct cmsghdr align;
};

/* A one-byte message carrying `fd` (control: storage the message points into). */
static inline void scm_message(struct msghdr* m, struct iovec* io, union scm_one_fd* control, int fd) {
  static char data = 'x';
  io->iov_base = &data;
  io->iov_len = 1;
  memset(control, 0, sizeof *control);
  memset(m, 0, sizeof *m);
  m->msg_iov = io;
  m->msg_iovlen = 1;
  m->msg_control = control->buf;
  m->msg_controllen = sizeof control->buf;
  struct cmsghdr* c = CMSG_FIRSTHDR(m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof fd);
}

/* 0 once `fd` is sent on `sock`, else -1 (errno set). */
static inline int scm_send_fd(int sock, int fd, int many) {
  struct msghdr m;
  struct iovec io;
  union scm_one_fd control;
  scm_message(&m, &io, &control, fd);
  if (many) {
    struct mmsghdr mm;
    memset(&mm, 0, sizeof mm);
    mm.msg_hdr = m;
    return sendmmsg(sock, &mm, 1, 0) == 1 ? 0 : -1;
  }
  return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

/* The fd a message on `sock` carries, else -1. */
static inline int scm_receive_fd(int sock) {
  char data;
  struct iovec io = {&data, 1};
  union scm_one_fd control;
  struct msghdr m;
  memset(&m, 0, sizeof m);
  m.msg_iov = &io;
  m.msg_iovlen = 1;
  m.msg_control = control.buf;
  m.msg_controllen = sizeof control.buf;
  if (recvmsg(sock, &m, 0) != 1) return -1;
  struct cmsghdr* c = CMSG_FIRSTHDR(&m);
  if (c == NULL || c->cmsg_type != SCM_RIGHTS) return -1;
  int fd;
  memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return fd;
}

#endif /* GUARD_TESTS_PROGRAMS_SCM_RIGHTS_H_ */
