#!/bin/sh
# The cost of keeping a file's old content before a rewrite in place
# (tools/bench/rewrite_floor.c): a copy into a new file of the inbox against
# a read into memory (an inline pre-image), on the filesystem of --dir. The
# fastest of --runs runs per way.
#
#   tools/bench/rewrite_floor.sh [--build build] [--dir /var/tmp] [--runs 5] [--files 3000] [--size 8192]
name=rewrite_floor; files=3000; size=8192
. "$(dirname "$0")/floor_table.sh"
floor_options "$@"
echo "| way | the old content kept by | us per file | x bare |"
echo "|---|---|---|---|"
floor_row 0 "nothing (bare rewrite)"
floor_row 1 "a copy into a new file of the inbox (copy_file_range)"
floor_row 2 "a read into memory (openat, pread, close): an inline pre-image"
