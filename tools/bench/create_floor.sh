#!/bin/sh
# The floor under a captured creation (tools/bench/create_floor.c): the time
# per file of tar's own calls for a new file with each system call the shim
# adds to capture it, on the filesystem of --dir. The fastest of --runs runs
# per step (the floor: what the calls cost when nothing else gets in the way).
#
#   tools/bench/create_floor.sh [--build build] [--dir /var/tmp] [--runs 5] [--files 10000] [--bytes 4096]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build="$repo/build"; dir="${TMPDIR:-/var/tmp}"; runs=5; files=10000; bytes=4096
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --bytes) bytes=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--dir DIR] [--runs N] [--files N] [--bytes N]" >&2; exit 2 ;;
  esac
done
floor="$build/tools/create_floor"
[ -x "$floor" ] || { echo "$0: build create_floor first" >&2; exit 1; }
work=$(mktemp -d "$dir/create-floor.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "| step | calls besides tar's own | us per file | x bare |"
echo "|---|---|---|---|"
bare=
for step in 0 1 2 3 4 5 6 9; do
  best=$(for i in $(seq "$runs"); do "$floor" "$work" "$step" "$files" "$bytes"; done |
         awk '{print $3}' | sort -n | head -1)
  [ -n "$bare" ] || bare=$best
  case $step in
    0) what="none (bare: open O_CREAT|O_EXCL, write, fchown, fchmod, close)" ;;
    1) what="+ getcwd, openat2 of the parent, its close (the parent's name)" ;;
    2) what="+ lstat of the new name (the state before)" ;;
    3) what="+ statx of the parent (place)" ;;
    4) what="+ getpid" ;;
    5) what="+ fstat of the new fd (its mark)" ;;
    6) what="+ fstat before fchown and before fchmod (the shim today)" ;;
    9) what="the lstat of step 2 alone: what any record of the state before costs" ;;
  esac
  printf '| %s | %s | %s | %s |\n' "$step" "$what" "$best" "$(awk -v a="$best" -v b="$bare" 'BEGIN {printf "%.2f", a/b}')"
done
