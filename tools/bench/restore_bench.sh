#!/bin/bash
# `guard undo` and `guard replay` against `cp -a` of the files they write,
# paired (each iteration times cp -a, undo and replay back to back), with the
# load average beside every figure, and, with --strace, the system calls of
# one undo and one replay per file restored (counts no load can change).
#
#   tools/bench/restore_bench.sh GUARD_BINARY [--runs N] [--strace] [--dir D]
#
# Workloads (from tools/bench's cache, /var/tmp/guard-bench-cache, made by
# run.sh): rm_rf, `rm -rf` of the first ~3,000 files of the pinned
# node_modules; sed_i, `sed -i` over 1,000 `.py` files of CPython's Lib/.
# Undo of rm_rf writes every file back (against `cp -a` of the tree before);
# replay removes them again. Undo of sed_i writes 1,000 files back (against
# `cp -a` of those 1,000 files), replay writes them forward.
set -euo pipefail
guard=$(realpath "$1"); shift
runs=3; strace_too=0; dir=/var/tmp/guard-restore-bench
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --strace) strace_too=1; shift ;;
    --dir) dir=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
cache=/var/tmp/guard-bench-cache
rm -rf "$dir"; mkdir -p "$dir/src"
# rm_rf: top-level packages of node_modules until about 3,000 files.
mkdir -p "$dir/src/rm_rf/node_modules"
n=0
for p in "$cache"/npm/node_modules/*; do
  [ $n -ge 3000 ] && break
  cp -a "$p" "$dir/src/rm_rf/node_modules/"
  n=$((n + $(find "$p" -type f | wc -l)))
done
# sed_i: 1,000 .py files, their directories kept.
mkdir -p "$dir/src/sed_i"
(cd "$cache/sed-tree" && find . -name '*.py' -type f | sort | head -1000 | tar -cf - -T -) | tar -xf - -C "$dir/src/sed_i"
echo "rm_rf: $(find "$dir/src/rm_rf" -type f | wc -l) files; sed_i: $(find "$dir/src/sed_i" -type f | wc -l) files"

now() { date +%s%N; }
# The automatic gc a restore starts may still write GUARD_HOME: retry.
clear() { for x in "$@"; do rm -rf "$x" 2>/dev/null || { sleep 3; rm -rf "$x"; }; done; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }
load() { cut -d' ' -f1 /proc/loadavg; }

workload_cmd() {  # the session's command, run in the tree
  case "$1" in
    rm_rf) echo "rm -rf node_modules" ;;
    sed_i) echo "find . -name '*.py' -type f -print0 | xargs -0 sed -i 's/import/IMPORT/'" ;;
  esac
}

for w in rm_rf sed_i; do
  for i in $(seq 1 "$runs"); do
    t="$dir/t"; h="$dir/h"; clear "$t" "$h" "$dir/cp"
    cp -a "$dir/src/$w" "$t"
    export GUARD_HOME="$h"
    (cd "$t" && "$guard" --quiet -- bash -c "$(workload_cmd "$w")")
    id=$(ls "$h/sessions" | head -1)
    cp -a "$t" "$dir/after"
    sync
    a=$(now); cp -a "$dir/src/$w" "$dir/cp"; b=$(now); cp_before=$(secs "$a" "$b"); rm -rf "$dir/cp"
    a=$(now); cp -a "$dir/after" "$dir/cp"; b=$(now); cp_after=$(secs "$a" "$b"); rm -rf "$dir/cp" "$dir/after"
    sync
    l1=$(load)
    # GUARD_STATS_FILE: written by a traced restore (the ptrace stops of
    # its session); an untraced one writes none.
    rm -f "$dir/stats.undo" "$dir/stats.replay"
    a=$(now); (cd "$t" && GUARD_STATS_FILE="$dir/stats.undo" "$guard" undo --yes --session "$id" >/dev/null 2>&1); b=$(now); undo=$(secs "$a" "$b")
    a=$(now); (cd "$t" && GUARD_STATS_FILE="$dir/stats.replay" "$guard" replay --yes --session "$id" >/dev/null 2>&1); b=$(now); replay=$(secs "$a" "$b")
    for v in undo replay; do
      [ -f "$dir/stats.$v" ] && echo "  $v: ptrace stops $(awk '/_stops/ { n += $2 } END { print n }' "$dir/stats.$v")"
    done
    l2=$(load)
    awk -v w="$w" -v i="$i" -v u="$undo" -v cb="$cp_before" -v r="$replay" -v ca="$cp_after" -v l1="$l1" -v l2="$l2" \
      'BEGIN { printf "%s run %d: undo %s s, cp -a before %s s (%.1fx); replay %s s, cp -a after %s s (%.1fx); load %s..%s\n",
               w, i, u, cb, u / cb, r, ca, r / ca, l1, l2 }'
  done
  if [ "$strace_too" = 1 ]; then
    t="$dir/t"; h="$dir/h"; clear "$t" "$h"
    cp -a "$dir/src/$w" "$t"
    export GUARD_HOME="$h"
    (cd "$t" && "$guard" --quiet -- bash -c "$(workload_cmd "$w")")
    id=$(ls "$h/sessions" | head -1)
    for verb in undo replay; do
      (cd "$t" && strace -f -c -o "$dir/strace.$w.$verb" "$guard" "$verb" --yes --session "$id" >"$dir/out.$verb" 2>&1) || true
      files=$(grep -c '^  ' "$dir/out.$verb" || true)
      calls=$(awk '$NF == "total" { print $(NF-2) }' "$dir/strace.$w.$verb")
      echo "$w $verb strace -c -f: $calls calls for $files paths ($(awk -v c="$calls" -v f="$files" 'BEGIN { printf "%.1f", c / f }') per path); top:"
      sed -n '3,12p' "$dir/strace.$w.$verb" | awk '{ print "    " $NF, $(NF-1) == "" ? "" : $0 }' | awk '{ print "    " $0 }' | cut -c1-100
    done
  fi
done
