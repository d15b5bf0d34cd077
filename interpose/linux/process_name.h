/* The name a CALL record gives its program (GUARD_SHIM_STR_COMM): the
 * kernel's comm of the calling thread, which the supervisor cannot read
 * itself once a short-lived program is gone (it drains the ring later).
 *
 * Read once per process image, from /proc/self/comm at the shim's start (a
 * fork child has its parent's; after an exec the new image's shim reads its
 * own), and kept again after a prctl(PR_SET_NAME) that succeeds: for the
 * thread that made it, and for the whole process when that thread is the
 * main one (whose name /proc/self/comm shows and which threads created
 * later inherit). Limits: a thread renamed by another
 * (pthread_setname_np on another thread writes /proc/self/task/TID/comm,
 * which no preload sees), or one created before its main thread renamed
 * itself, shows the main thread's name. */
#ifndef GUARD_INTERPOSE_LINUX_PROCESS_NAME_H_
#define GUARD_INTERPOSE_LINUX_PROCESS_NAME_H_

#include <stddef.h>

/* Reads /proc/self/comm (the shim's start). */
void shim_process_name_load(void);

/* The calling thread's name as far as the shim knows it (not
 * NUL-terminated): its length, 0 if none could be read. */
size_t shim_process_name(const char** name);

#endif /* GUARD_INTERPOSE_LINUX_PROCESS_NAME_H_ */
