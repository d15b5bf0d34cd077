#!/bin/sh
# The floor under a captured delete (tools/bench/delete_floor.c): the time
# per file of unlinkat with each system call the shim adds to capture it,
# on the filesystem of --dir. The fastest of --runs runs per step (the
# floor: what the calls cost when nothing else gets in the way).
#
#   tools/bench/delete_floor.sh [--build build] [--dir /var/tmp] [--runs 5] [--files 10000]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build="$repo/build"; dir="${TMPDIR:-/var/tmp}"; runs=5; files=10000
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--dir DIR] [--runs N] [--files N]" >&2; exit 2 ;;
  esac
done
floor="$build/tools/delete_floor"
[ -x "$floor" ] || { echo "$0: build delete_floor first" >&2; exit 1; }
work=$(mktemp -d "$dir/delete-floor.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "| step | calls before the unlink | us per file | x bare |"
echo "|---|---|---|---|"
bare=
for step in 0 1 2 3 4 5 6 7 8 9 10; do
  best=$(for i in $(seq "$runs"); do "$floor" "$work" "$step" "$files"; done |
         awk '{print $3}' | sort -n | head -1)
  [ -n "$bare" ] || bare=$best
  case $step in
    0) what="none (bare unlink)" ;;
    1) what="+ readlink of the dirfd" ;;
    2) what="+ lstat of the victim" ;;
    3) what="+ statx of the dirfd (place)" ;;
    4) what="+ openat, fcntl lease, close" ;;
    5) what="+ getpid, gettid" ;;
    6) what="+ linkat into the inbox (the shim today)" ;;
    7) what="steps 1-5, then one rename into the inbox instead of link + unlink" ;;
    8) what="steps 1-3 and 5, then the content read (openat, pread, close) instead of the lease check and the link: an inline pre-image" ;;
    9) what="the linkat into the inbox alone: no name, no state, no lease check" ;;
    10) what="step 9 with the lstat of step 2" ;;
  esac
  printf '| %s | %s | %s | %s |\n' "$step" "$what" "$best" "$(awk -v a="$best" -v b="$bare" 'BEGIN {printf "%.2f", a/b}')"
done
