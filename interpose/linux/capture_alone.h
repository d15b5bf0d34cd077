/* The shim alone (--mode preload, shim_config.alone): no tracer stands
 * behind it, so what the rules of capture.h leave to the real function runs
 * unstopped. Where the shim can, it does the tracer's part itself (a file of
 * several names or with a writer is copied rather than linked, a symlink an
 * open follows is followed, a change through an fd it never saw opened is
 * captured by the fd: capture.c); every call still left over is a miss,
 * which follows the capture-failure policy here: "block" (the default)
 * fails it with EPERM, "allow" lets it run unrecorded; either way with one
 * line on the process's stderr. docs/capture.md lists the misses. */
#ifndef GUARD_INTERPOSE_LINUX_CAPTURE_ALONE_H_
#define GUARD_INTERPOSE_LINUX_CAPTURE_ALONE_H_

#include "interpose/shim_capture.h"

/* After the capture, before the host's call (shim_proceed): a call the
 * shim would leave to the tracer, with none there, is a miss. */
void shim_alone_settle(struct shim_call* c);

/* A change nothing will record (reentered.h): the capture-failure policy,
 * with the one line of the process, "<why><entry> cannot be captured; ...".
 * EPERM under "block" (the call fails), 0 under "allow" (it runs). */
int shim_miss_unseen(const char* entry, const char* why);

/* Under "block", the pre-image of `path` could not be saved (`err`): the
 * one line of the process that says so (the tracer's words), naming it. */
void shim_alone_refused(const char* path, size_t len, int err);

/* Before an exec of `what` (searched in PATH when `search` and it has no
 * slash): one line on stderr when it is a program the shim cannot load into
 * (a static binary, or a script run by one). */
void shim_alone_check_exec(const char* what, int search);

#endif /* GUARD_INTERPOSE_LINUX_CAPTURE_ALONE_H_ */
