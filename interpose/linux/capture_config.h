/* What the capture needs from guard, read once from the environment at the
 * shim's start (docs/shim.md, "The capture"): the ring to put records into,
 * the pending area to put pre-images into, the session's id (the pending
 * names' prefix), the protected root, guard's state directory (never
 * touched by the shim's captures), and the capture-failure policy. Parsed
 * into static buffers: no heap. Anything missing or unusable leaves
 * shim_config.ready at 0, and then every call goes to the tracer (alone:
 * follows the capture-failure policy, capture_alone.h). */
#ifndef GUARD_INTERPOSE_LINUX_CAPTURE_CONFIG_H_
#define GUARD_INTERPOSE_LINUX_CAPTURE_CONFIG_H_

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ring_producer.h"

struct shim_config {
  /* 1 once everything below is set; written once by shim_init_once before
   * its release store of the init state, read after its acquire load. */
  int ready;
  int block_on_failure; /* GUARD_ON_CAPTURE_FAILURE: "block" (default) or "allow" */
  /* GUARD_SHIM_ALONE=1 (--mode preload): no tracer stops what the shim
   * leaves to the real function (capture_alone.h). Set, like the policy,
   * even when `ready` stays 0. */
  int alone;
  /* guard speaks another protocol than this shim (shim_protocol.h): `ready`
   * stays 0, and the shim prints nothing into its host (guard says it). */
  int protocol_refused;
  struct guard_ring_producer ring;
  char pending[PATH_MAX]; /* GUARD_SHIM_PENDING, absolute */
  size_t pending_len;
  /* GUARD_SHIM_INBOX_FD: the inbox as an inherited directory fd, the one
   * way to it when guard hid the inboxes; else AT_FDCWD, and pre-images are
   * named by `pending`'s path. */
  int pending_fd;
  char session[151];      /* GUARD_SESSION: a pending name is "<session>-s<pid>.<tid>.<image>.<n>" */
  size_t session_len;
  char root[PATH_MAX];    /* GUARD_ROOT, canonical */
  size_t root_len;
  char state[PATH_MAX];   /* GUARD_STATE_DIR, canonical */
  size_t state_len;
  /* The root's and the state directory's identity (statx at the start),
   * which tells a path that only looks inside or outside them from one
   * that is (capture_path.h, shim_path_place): a bind mount gives them
   * other names, with their device but on a mount of its own. */
  uint64_t root_mnt_id, state_mnt_id;
  uint64_t root_dev, state_dev; /* makedev(stx_dev_major, stx_dev_minor) */
  /* What the handshake tells the tracer besides the paths (shim_hello.h):
   * the root's inode, the pending directory's and the ring segment's
   * identity, all from statx. */
  uint64_t root_ino;
  uint64_t pending_dev, pending_ino;
  uint64_t ring_dev, ring_ino;
  /* GUARD_SHIM_INBOX: where every session's inbox is (the pending area is
   * one of them); guarded like the state directory. "" (len 0) if unset. */
  char inbox[PATH_MAX];
  size_t inbox_len;
  /* GUARD_CONFIG_DIR: guard's configuration directory, guarded the same
   * way (its retention settings decide what gc removes). */
  char config_dir[PATH_MAX];
  size_t config_dir_len;
  /* The state directory is the read-only bind of itself guard made for
   * the session (GUARD_STATE_SEALED=1, and its mount is read-only): no
   * other name on the root's mount reaches it (capture_path.c). */
  int state_sealed;
};

extern struct shim_config shim_config;

/* Reads the variables from `envp` and maps the ring (shim_init_once). */
void shim_config_load(char* const* envp);

#endif /* GUARD_INTERPOSE_LINUX_CAPTURE_CONFIG_H_ */
