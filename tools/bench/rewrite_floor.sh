#!/bin/sh
# The cost of keeping a file's old content before a rewrite in place
# (tools/bench/rewrite_floor.c): a copy into a new file of the inbox against
# a read into memory (an inline pre-image), on the filesystem of --dir. The
# fastest of --runs runs per way.
#
#   tools/bench/rewrite_floor.sh [--build build] [--dir /var/tmp] [--runs 5] [--files 3000] [--size 8192]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build="$repo/build"; dir="${TMPDIR:-/var/tmp}"; runs=5; files=3000; size=8192
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--dir DIR] [--runs N] [--files N] [--size BYTES]" >&2; exit 2 ;;
  esac
done
floor="$build/tools/rewrite_floor"
[ -x "$floor" ] || { echo "$0: build rewrite_floor first" >&2; exit 1; }
echo "| way | the old content kept by | us per file | x bare |"
echo "|---|---|---|---|"
bare=
for way in 0 1 2; do
  best=$(for i in $(seq "$runs"); do
           work=$(mktemp -d "$dir/rewrite-floor.XXXXXX")
           "$floor" "$work" "$way" "$files" "$size"
           rm -rf "$work"
         done | awk '{print $3}' | sort -n | head -1)
  [ -n "$bare" ] || bare=$best
  case $way in
    0) what="nothing (bare rewrite)" ;;
    1) what="a copy into a new file of the inbox (copy_file_range)" ;;
    2) what="a read into memory (openat, pread, close): an inline pre-image" ;;
  esac
  printf '| %s | %s | %s | %s |\n' "$way" "$what" "$best" "$(awk -v a="$best" -v b="$bare" 'BEGIN {printf "%.2f", a/b}')"
done
