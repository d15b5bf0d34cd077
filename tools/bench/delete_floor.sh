#!/bin/sh
# The floor under a captured delete (tools/bench/delete_floor.c): the time
# per file of unlinkat with each system call the shim adds to capture it,
# on the filesystem of --dir. The fastest of --runs runs per step (the
# floor: what the calls cost when nothing else gets in the way).
#
#   tools/bench/delete_floor.sh [--build build] [--dir /var/tmp] [--runs 5] [--files 10000]
name=delete_floor; files=10000; size=0
. "$(dirname "$0")/floor_table.sh"
floor_options "$@"
echo "| step | calls before the unlink | us per file | x bare |"
echo "|---|---|---|---|"
floor_row 0 "none (bare unlink)"
floor_row 1 "+ readlink of the dirfd"
floor_row 2 "+ lstat of the victim"
floor_row 3 "+ statx of the dirfd (place)"
floor_row 4 "+ openat, fcntl lease, close"
floor_row 5 "+ getpid, gettid"
floor_row 6 "+ linkat into the inbox (the shim today)"
floor_row 7 "steps 1-5, then one rename into the inbox instead of link + unlink"
floor_row 8 "steps 1-3 and 5, then the content read (openat, pread, close) instead of the lease check and the link: an inline pre-image"
floor_row 9 "the linkat into the inbox alone: no name, no state, no lease check"
floor_row 10 "step 9 with the lstat of step 2"
