#!/bin/sh
# What the preload shim adds to a call it does not capture (issue 13's
# target: under 100 ns more than bare), measured by tools/bench/shim_micro.c
# inside one process: bare, under the shim with guard's environment (a ring
# and a pending directory of a scratch session, no tracer), and as the
# command of a real `guard --mode auto` session (the shim, the seccomp
# filter with its stub allowance, the tracer, the namespaces), and the
# differences. Medians of --runs runs of N calls each.
#
#   tools/bench/shim_micro.sh [--build build] [--runs 5] [--n 200000]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build="$repo/build"; runs=5; n=200000
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --n) n=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--runs N] [--n CALLS]" >&2; exit 2 ;;
  esac
done
micro="$build/tools/shim_micro"; shim="$build/interpose/libguard-shim.so"; ring="$build/tools/ring_bench"
[ -x "$micro" ] && [ -f "$shim" ] || { echo "$0: build shim_micro and guard_shim first" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/var/tmp}/shim-micro.XXXXXX")
trap 'rm -rf "$work"; [ -n "${seg:-}" ] && rm -f "/dev/shm/$seg"' EXIT
mkdir -p "$work/out" "$work/root" "$work/state/store/pending"/{0,1,2,3,4,5,6,7}  # the inbox and its shards (common/inbox_layout.h)
echo data > "$work/out/r"
# A ring segment for the shim to stream into: made by the supervisor's code
# (ring_bench --make-segment prints its name), drained by nobody (the runs
# put far less than its capacity).
seg=$("$ring" --make-segment)
# The protocol the shim speaks (common/shim_interface.h): it captures nothing without it.
protocol=$(sed -n 's/^#define GUARD_SHIM_PROTOCOL \([0-9]*\)u.*/\1/p' "$repo/common/shim_interface.h")
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
run() {  # MODE: bare | shim | guard
  for i in $(seq "$runs"); do
    if [ "$1" = bare ]; then "$micro" "$work/out" "$n"
    elif [ "$1" = guard ]; then
      GUARD_HOME="$work/home" "$build/guard" -q --mode auto --root "$work/root" -- "$micro" "$work/out" "$n"
    else env LD_PRELOAD="$shim" GUARD_SHIM_PROTOCOL="$protocol" GUARD_SHIM_RING="$seg" GUARD_SHIM_PENDING="$work/state/store/pending" \
             GUARD_ROOT="$work/root" GUARD_STATE_DIR="$work/state" GUARD_SESSION=micro "$micro" "$work/out" "$n"
    fi
  done
}
bare=$(run bare); shimmed=$(run shim); guarded=$(run guard)
pick() { printf '%s\n' "$1" | awk -v k="$2" '$1==k {print $2}' | median; }
added() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", a-b}'; }
echo "| call | bare | under the shim | added | under \`guard --mode auto\` | added |"
echo "|---|---|---|---|---|---|"
for k in open_rdonly_close write_1_byte open_wronly_outside_close; do
  b=$(pick "$bare" $k); s=$(pick "$shimmed" $k); g=$(pick "$guarded" $k)
  printf '| `%s` | %s ns | %s ns | %s ns | %s ns | %s ns |\n' "$k" "$b" "$s" "$(added "$s" "$b")" "$g" "$(added "$g" "$b")"
done
echo
echo "Paired inside one process (the call through the symbol the program binds to, less the same call"
echo "through libc's own function, alternating rounds of 1,000; median over rounds, then over runs):"
echo
echo "| call | bare process (the method's floor) | under the shim (what it adds) | under \`guard --mode auto\` (what the shim adds there) |"
echo "|---|---|---|---|"
for k in open_rdonly_close write_1_byte; do
  printf '| `%s` | %s ns | %s ns | %s ns |\n' "$k" "$(pick "$bare" paired_$k)" "$(pick "$shimmed" paired_$k)" \
    "$(pick "$guarded" paired_$k)"
done
