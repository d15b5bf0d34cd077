/* bypass_attempts MODE ...: what a program written to get past guard tries.
 * Each mode prints one line saying what the kernel answered, and exits 0
 * when the attempt ran to its end (whatever it achieved), so that the test
 * judges by what guard recorded, not by this program's opinion.
 *
 *   listener VICTIM      install a seccomp filter with a user-notification
 *                        listener that answers unlink/unlinkat with CONTINUE
 *                        from a second thread, then unlink VICTIM
 *   uring-setup VICTIM -- CMD...
 *                        (outside guard) make an io_uring, then exec CMD with
 *                        the ring fd inherited and "uring-use FD PARAMS VICTIM"
 *                        appended
 *   uring-use FD PARAMS VICTIM
 *                        (inside guard) submit IORING_OP_UNLINKAT of VICTIM
 *                        on the inherited ring
 *   hold FILE            (outside guard) open FILE for writing, print the fd
 *                        number, sleep until killed
 *   getfd PID FD         take fd FD of process PID with pidfd_getfd and
 *                        write through it
 *   tracer               ptrace-attach to the parent (the supervisor), write
 *                        into its memory with process_vm_writev and through
 *                        /proc/PPID/mem
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static int listener_fd = -1;

static void* answer_continue(void* arg) {
  (void)arg;
  for (;;) {
    struct seccomp_notif req;
    struct seccomp_notif_resp resp;
    memset(&req, 0, sizeof req);
    if (ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) return NULL;
    memset(&resp, 0, sizeof resp);
    resp.id = req.id;
    resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
  }
}

static int listener(const char* victim) {
  struct sock_filter prog[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unlink, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unlinkat, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
  };
  struct sock_fprog fprog = {sizeof prog / sizeof prog[0], prog};
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  listener_fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog);
  if (listener_fd < 0) {
    printf("listener: refused: %s\n", strerror(errno));
  } else {
    pthread_t t;
    pthread_create(&t, NULL, answer_continue, NULL);
    printf("listener: installed\n");
  }
  if (unlink(victim) != 0) printf("unlink: %s\n", strerror(errno));
  else printf("unlink: done\n");
  fflush(stdout);
  _exit(0);
}

static int uring_setup(int argc, char** argv) {
  /* argv: uring-setup VICTIM -- CMD... */
  if (argc < 5 || strcmp(argv[3], "--") != 0) return 2;
  struct io_uring_params p;
  memset(&p, 0, sizeof p);
  int fd = (int)syscall(SYS_io_uring_setup, 4, &p);
  if (fd < 0) {
    fprintf(stderr, "io_uring_setup: %s\n", strerror(errno));
    return 1;
  }
  /* io_uring fds are made close-on-exec: clear it, so that CMD inherits it. */
  fcntl(fd, F_SETFD, 0);
  char fdbuf[16], params[2 * sizeof p + 1];
  snprintf(fdbuf, sizeof fdbuf, "%d", fd);
  const unsigned char* b = (const unsigned char*)&p;
  for (size_t i = 0; i < sizeof p; ++i) sprintf(params + 2 * i, "%02x", b[i]);
  int n = argc - 4;
  char** args = calloc((size_t)n + 5, sizeof(char*));
  for (int i = 0; i < n; ++i) args[i] = argv[4 + i];
  args[n] = "uring-use";
  args[n + 1] = fdbuf;
  args[n + 2] = params;
  args[n + 3] = argv[2];
  execvp(args[0], args);
  fprintf(stderr, "exec %s: %s\n", args[0], strerror(errno));
  return 127;
}

static int uring_use(const char* fdarg, const char* hex, const char* victim) {
  int fd = atoi(fdarg);
  struct io_uring_params p;
  unsigned char* b = (unsigned char*)&p;
  if (strlen(hex) != 2 * sizeof p) return 2;
  for (size_t i = 0; i < sizeof p; ++i) sscanf(hex + 2 * i, "%2hhx", &b[i]);
  size_t sq_size = p.sq_off.array + p.sq_entries * sizeof(unsigned);
  size_t cq_size = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
  if (cq_size > sq_size) sq_size = cq_size;
  char* sq = mmap(NULL, sq_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQ_RING);
  struct io_uring_sqe* sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
                                   MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES);
  if (sq == MAP_FAILED || sqes == MAP_FAILED) {
    printf("uring: mmap: %s\n", strerror(errno));
    return 0;
  }
  unsigned* tail = (unsigned*)(sq + p.sq_off.tail);
  unsigned* mask = (unsigned*)(sq + p.sq_off.ring_mask);
  unsigned* array = (unsigned*)(sq + p.sq_off.array);
  unsigned t = *tail;
  unsigned idx = t & *mask;
  memset(&sqes[idx], 0, sizeof sqes[idx]);
  sqes[idx].opcode = IORING_OP_UNLINKAT;
  sqes[idx].fd = AT_FDCWD;
  sqes[idx].addr = (uint64_t)(uintptr_t)victim;
  array[idx] = idx;
  __atomic_store_n(tail, t + 1, __ATOMIC_RELEASE);
  long rc = syscall(SYS_io_uring_enter, fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0);
  if (rc < 0) printf("io_uring_enter: refused: %s\n", strerror(errno));
  else printf("io_uring_enter: submitted %ld\n", rc);
  return 0;
}

static int hold(const char* file) {
  int fd = open(file, O_WRONLY);
  if (fd < 0) return 1;
  printf("%d\n", fd);
  fflush(stdout);
  for (;;) pause();
}

static int getfd(const char* pid, const char* fdarg) {
  int pidfd = (int)syscall(SYS_pidfd_open, atoi(pid), 0);
  if (pidfd < 0) {
    printf("pidfd_open: %s\n", strerror(errno));
    return 0;
  }
  int fd = (int)syscall(SYS_pidfd_getfd, pidfd, atoi(fdarg), 0);
  if (fd < 0) {
    printf("pidfd_getfd: refused: %s\n", strerror(errno));
    return 0;
  }
  if (ftruncate(fd, 0) == 0 && write(fd, "stolen\n", 7) == 7) printf("pidfd_getfd: wrote\n");
  return 0;
}

static int tracer(void) {
  pid_t parent = getppid();
  if (ptrace(PTRACE_SEIZE, parent, 0, 0) != 0) printf("ptrace: refused: %s\n", strerror(errno));
  else printf("ptrace: attached\n");
  /* A harmless target: the first byte of a stack page guard surely has
   * cannot be named from here, so write to an address that fails in the
   * target (EFAULT) if the call itself is allowed. */
  char byte = 0;
  struct iovec local = {&byte, 1}, remote = {(void*)16, 1};
  if (syscall(SYS_process_vm_writev, parent, &local, 1, &remote, 1, 0) < 0 && errno != EFAULT) {
    printf("process_vm_writev: refused: %s\n", strerror(errno));
  } else {
    printf("process_vm_writev: allowed\n");
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/mem", (int)parent);
  int fd = open(path, O_RDWR);
  if (fd < 0) printf("mem: refused: %s\n", strerror(errno));
  else printf("mem: opened\n");
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 3 && strcmp(argv[1], "listener") == 0) return listener(argv[2]);
  if (argc >= 5 && strcmp(argv[1], "uring-setup") == 0) return uring_setup(argc, argv);
  if (argc == 5 && strcmp(argv[1], "uring-use") == 0) return uring_use(argv[2], argv[3], argv[4]);
  if (argc == 3 && strcmp(argv[1], "hold") == 0) return hold(argv[2]);
  if (argc == 4 && strcmp(argv[1], "getfd") == 0) return getfd(argv[2], argv[3]);
  if (argc == 2 && strcmp(argv[1], "tracer") == 0) return tracer();
  fprintf(stderr, "usage: see the comment at the top of bypass_attempts.c\n");
  return 2;
}
