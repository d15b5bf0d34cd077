#!/bin/bash
# `guard undo` and `guard replay` against `cp -a` of the files they write,
# interleaved (each iteration times cp -a of the tree before, undo, cp -a of
# the tree after, replay, back to back, and cp -a of the tree before into a
# twin tree the workload ran in bare: the same names, into the directories
# it emptied or over the files it changed, as undo writes them), wall time and CPU time (user + sys
# of the whole process tree, /usr/bin/time) for each, the load average
# beside; the medians of the per-iteration ratios at the end. With
# --strace, the system calls of one undo and one replay per path (counts no
# load can change).
#
#   tools/bench/restore_bench.sh GUARD_BINARY [--runs N] [--strace] [--dir D] [--workloads a,b]
#
# Workloads, on real trees this machine has (Debian's own files, so that no
# download is needed; run.sh's cache is not used):
#   rm_rf     `rm -rf` of about 10,000 files of /usr/include (whole
#             directories of headers; 8,200 on Debian 12 with the build
#             dependencies); undo writes them back, replay removes them again.
#   sed_i     `sed -i` over 1,000 `.py` files of /usr/lib/python3.11 and
#             /usr/lib/python3; undo
#             and replay each rewrite 1,000 files.
#   node_rmw  tools/bench/workloads/rmw.js over /usr/lib/python3.11 (its
#             736 files but caches): 600 read-modify-writes (1/5 by temp
#             file and rename), 50 deletes, 50 new files.
# The sessions run with capture.sync_every = "1s" (a config.toml of the
# bench's own): the window the restore matches.
set -euo pipefail
guard=$(realpath "$1"); shift
runs=5; strace_too=0; dir=/var/tmp/guard-restore-bench; workloads=rm_rf,sed_i,node_rmw
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --strace) strace_too=1; shift ;;
    --dir) dir=$2; shift 2 ;;
    --workloads) workloads=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$dir"; mkdir -p "$dir/src" "$dir/config/guard"
printf '[capture]\nsync_every = "1s"\n[retention]\nauto_gc = false\n' >"$dir/config/guard/config.toml"
export XDG_CONFIG_HOME="$dir/config"

# rm_rf: directories of /usr/include, whole, until 10,000 files.
mkdir -p "$dir/src/rm_rf/include"
n=0
for p in /usr/include/*; do
  [ $n -ge 10000 ] && break
  [ -d "$p" ] || continue
  c=$(find "$p" -type f | wc -l)
  [ $((n + c)) -gt 10500 ] && [ $n -gt 0 ] && continue
  cp -a "$p" "$dir/src/rm_rf/include/"
  n=$((n + c))
done
# sed_i: 1,000 .py files, their directories kept.
mkdir -p "$dir/src/sed_i"
(cd /usr/lib && find python3.11 python3 -name '*.py' -type f -not -path '*/__pycache__/*' | sort >"$dir/sed_i.list"
  head -1000 "$dir/sed_i.list" | tar -cf - -T -) | tar -xf - -C "$dir/src/sed_i"
# node_rmw: the whole of /usr/lib/python3.11 but its caches.
mkdir -p "$dir/src/node_rmw"
(cd /usr/lib/python3.11 && find . -type f -not -path '*/__pycache__/*' -not -path './site-packages/*' |
  sort | tar -cf - -T -) | tar -xf - -C "$dir/src/node_rmw"
for w in ${workloads//,/ }; do echo "$w: $(find "$dir/src/$w" -type f | wc -l) files, $(du -sm "$dir/src/$w" | cut -f1) MiB"; done

load() { cut -d' ' -f1 /proc/loadavg; }
# timed NAME CMD...: runs CMD, leaves "wall cpu" in $dir/NAME.t.
timed() {
  local name=$1; shift
  /usr/bin/time -f '%e %U %S' -o "$dir/$name.t.raw" "$@" >/dev/null 2>"$dir/$name.err" || {
    echo "$name failed: $(cat "$dir/$name.err")" >&2; exit 1; }
  awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' "$dir/$name.t.raw" >"$dir/$name.t"
}
workload_cmd() {  # the session's command, run in the tree
  case "$1" in
    rm_rf) echo "rm -rf include" ;;
    sed_i) echo "find . -name '*.py' -type f -print0 | xargs -0 sed -i 's/import/IMPORT/'" ;;
    node_rmw) echo "node '$here/workloads/rmw.js' . 600 50 50" ;;
  esac
}
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

for w in ${workloads//,/ }; do
  : >"$dir/ratios.$w"
  for i in $(seq 1 "$runs"); do
    t="$dir/t"; h="$dir/h"; rm -rf "$t" "$h" "$dir/cp" "$dir/after"
    cp -a "$dir/src/$w" "$t"
    export GUARD_HOME="$h"
    (cd "$t" && "$guard" --quiet -- bash -c "$(workload_cmd "$w")")
    id=$(ls "$h/sessions" | head -1)
    cp -a "$t" "$dir/after"
    rm -rf "$dir/twin"; cp -a "$dir/src/$w" "$dir/twin"
    (cd "$dir/twin" && bash -c "$(workload_cmd "$w")" >/dev/null)
    sync
    l1=$(load)
    timed cpw cp -a "$dir/src/$w/." "$dir/twin/"; rm -rf "$dir/twin"
    timed cpb cp -a "$dir/src/$w" "$dir/cp"; rm -rf "$dir/cp"
    (cd "$t" && timed undo "$guard" undo --yes --session "$id")
    timed cpa cp -a "$dir/after" "$dir/cp"; rm -rf "$dir/cp" "$dir/after"
    (cd "$t" && timed replay "$guard" replay --yes --session "$id")
    l2=$(load)
    read -r cbw cbc <"$dir/cpb.t"; read -r uw uc <"$dir/undo.t"
    read -r caw cac <"$dir/cpa.t"; read -r rw rc <"$dir/replay.t"
    read -r cww cwc <"$dir/cpw.t"
    # Replay of rm_rf writes nothing and removes the tree: against cp -a of
    # the larger of the two trees, the same tree.
    [ "$(awk -v a="$caw" -v b="$cbw" 'BEGIN { print (b > a) }')" = 1 ] && { caw=$cbw; cac=$cbc; }
    awk -v w="$w" -v i="$i" -v uw="$uw" -v uc="$uc" -v cbw="$cbw" -v cbc="$cbc" -v rw="$rw" -v rc="$rc" \
      -v caw="$caw" -v cac="$cac" -v cww="$cww" -v cwc="$cwc" -v l1="$l1" -v l2="$l2" 'function r(a, b) { return b > 0 ? a / b : 0 }
      BEGIN { printf "%s run %d: undo %.3f s (cpu %.3f), cp -a before %.3f s (cpu %.3f): %.2fx wall %.2fx cpu; cp -a into the twin %.3f s (cpu %.3f): undo %.2fx wall %.2fx cpu; replay %.3f s (cpu %.3f), cp -a of the larger tree %.3f s (cpu %.3f): %.2fx wall %.2fx cpu; load %s..%s\n",
               w, i, uw, uc, cbw, cbc, r(uw, cbw), r(uc, cbc), cww, cwc, r(uw, cww), r(uc, cwc), rw, rc, caw, cac, r(rw, caw), r(rc, cac), l1, l2 }'
    awk -v uw="$uw" -v uc="$uc" -v cbw="$cbw" -v cbc="$cbc" -v rw="$rw" -v rc="$rc" -v caw="$caw" -v cac="$cac" \
      -v cww="$cww" -v cwc="$cwc" \
      'function r(a, b) { return b > 0 ? a / b : 0 } BEGIN { print r(uw, cbw), r(uc, cbc), r(rw, caw), r(rc, cac), uw, cbw, rw, caw, r(uw, cww), r(uc, cwc), cww }' >>"$dir/ratios.$w"
  done
  printf '%s median of %d: undo %.2fx cp -a (wall), %.2fx (cpu); undo %.2fx cp -a into the twin (wall), %.2fx (cpu); replay %.2fx (wall), %.2fx (cpu); undo %.3f s, cp -a %.3f s, into the twin %.3f s, replay %.3f s, cp -a %.3f s\n' "$w" "$runs" \
    "$(cut -d' ' -f1 "$dir/ratios.$w" | median)" "$(cut -d' ' -f2 "$dir/ratios.$w" | median)" \
    "$(cut -d' ' -f9 "$dir/ratios.$w" | median)" "$(cut -d' ' -f10 "$dir/ratios.$w" | median)" \
    "$(cut -d' ' -f3 "$dir/ratios.$w" | median)" "$(cut -d' ' -f4 "$dir/ratios.$w" | median)" \
    "$(cut -d' ' -f5 "$dir/ratios.$w" | median)" "$(cut -d' ' -f6 "$dir/ratios.$w" | median)" \
    "$(cut -d' ' -f11 "$dir/ratios.$w" | median)" \
    "$(cut -d' ' -f7 "$dir/ratios.$w" | median)" "$(cut -d' ' -f8 "$dir/ratios.$w" | median)"
  if [ "$strace_too" = 1 ]; then
    t="$dir/t"; h="$dir/h"; rm -rf "$t" "$h"
    cp -a "$dir/src/$w" "$t"
    export GUARD_HOME="$h"
    (cd "$t" && "$guard" --quiet -- bash -c "$(workload_cmd "$w")")
    id=$(ls "$h/sessions" | head -1)
    for verb in undo replay; do
      (cd "$t" && strace -f -c -o "$dir/strace.$w.$verb" "$guard" "$verb" --yes --session "$id" >"$dir/out.$verb" 2>&1) || true
      files=$(grep -c '^  ' "$dir/out.$verb" || true)
      calls=$(awk '$NF == "total" { print $(NF-2) }' "$dir/strace.$w.$verb")
      echo "$w $verb strace -c -f: $calls calls for $files paths ($(awk -v c="$calls" -v f="$files" 'BEGIN { printf "%.1f", c / f }') per path); top:"
      sed -n '3,14p' "$dir/strace.$w.$verb" | awk '{ print "    " $0 }' | cut -c1-100
    done
  fi
done
