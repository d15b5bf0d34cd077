/* The lazy capture's three moments, shared by every entry point that
 * reaches an fd (fd_calls.c, fd_pass_calls.c, aio_calls.c, syscall()):
 * a change of the content through an fd, a copy of an fd (to another
 * number or another process), and its end. An fd opened for writing without
 * O_TRUNC is captured at the first of its changes or copies (fd_marks.h);
 * every way a libc caller can change a file through an fd, or hand the fd to
 * code that can, must pass here first, or the change runs unseen (the
 * tracer does not stop writes). docs/shim.md, "The lazy capture and its fd
 * marks", lists them. */
#ifndef GUARD_INTERPOSE_LINUX_FD_CHANGE_H_
#define GUARD_INTERPOSE_LINUX_FD_CHANGE_H_

#include <stddef.h>
#include <sys/socket.h>

struct iocb;

/* A change through `fd` is about to be made: classified and captured, with
 * errno kept. 0, or the errno the change must fail with (its capture failed
 * under the "block" policy). `known_writer` as shim_before_fd_change. */
int shim_fd_change(const char* entry, int fd, int known_writer);

/* `fd` is about to be copied (dup, F_DUPFD, SCM_RIGHTS): the copy shares
 * its open file, so a pending capture is made now. 0, or the errno the copy
 * must fail with. */
int shim_fd_copying(const char* entry, int fd);

/* `fd` is about to be closed, or replaced by dup2/dup3: its mark ends. */
void shim_fd_closing(int fd);

/* 1 if ioctl `request` replaces content of the file its fd names (a reflink
 * clone into it: FICLONE, FICLONERANGE). */
int shim_ioctl_changes_content(unsigned long request);

/* The fds a message carries (SCM_RIGHTS) reach another process or number:
 * each pending one is captured first. 0, or the errno the send must fail
 * with. */
int shim_fds_sending(const char* entry, const struct msghdr* msg);

/* The same for each of `count` messages (sendmmsg). */
int shim_fds_sending_many(const char* entry, const struct mmsghdr* msgs, unsigned int count);

/* Linux AIO (io_submit): each write among `nr` control blocks (IOCB_CMD_PWRITE,
 * IOCB_CMD_PWRITEV) reaches its fd; a pending one is captured first. 0, or
 * the errno the submission must fail with. */
int shim_iocbs_writing(const char* entry, long nr, struct iocb* const* iocbs);

#endif /* GUARD_INTERPOSE_LINUX_FD_CHANGE_H_ */
