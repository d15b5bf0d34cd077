#!/bin/sh
# The floor under a captured creation (tools/bench/create_floor.c): the time
# per file of tar's own calls for a new file with each system call the shim
# adds to capture it, on the filesystem of --dir. The fastest of --runs runs
# per step (the floor: what the calls cost when nothing else gets in the way).
#
#   tools/bench/create_floor.sh [--build build] [--dir /var/tmp] [--runs 5] [--files 10000] [--size 4096]
name=create_floor; files=10000; size=4096
. "$(dirname "$0")/floor_table.sh"
floor_options "$@"
echo "| step | calls besides tar's own | us per file | x bare |"
echo "|---|---|---|---|"
floor_row 0 "none (bare: open O_CREAT|O_EXCL, write, fchown, fchmod, close)"
floor_row 1 "+ getcwd, openat2 of the parent, its close (the parent's name)"
floor_row 2 "+ lstat of the new name (the state before)"
floor_row 3 "+ statx of the parent (place)"
floor_row 4 "+ getpid"
floor_row 5 "+ fstat of the new fd (its mark)"
floor_row 6 "+ fstat before fchown and before fchmod (the shim today)"
floor_row 9 "the lstat of step 2 alone: what any record of the state before costs"
