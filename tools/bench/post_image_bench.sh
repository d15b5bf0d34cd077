#!/usr/bin/env bash
# post_image_bench.sh: what saving the session's work as it happens
# (post-images, docs/durability.md) costs and gives.
#
# 1. Lag: an agent writes FILES small files under guard, either one every
#    PACE_MS milliseconds ("paced") or all at once ("burst"); guard runs with
#    GUARD_POST_IMAGE_LAG_FILE, which logs, per post-image, the time from the
#    file's mtime (its last write; the writer closes it right after) to the
#    group commit that made the post-image durable. Prints median, 90th and
#    99th percentile and worst, per mode.
# 2. Cost: `tar -xf node_modules.tar` into an empty tree, and `rm -rf
#    node_modules` of that tree, bare and under guard, in interleaved
#    triples (bare, guard, and GUARD_OLD if given, e.g. a build without
#    post-images), order rotating. Prints medians, the median of the paired
#    ratios against bare, and the seal time of each guarded session: from
#    guard.log's "command ended" to meta.json's mtime (written last by the
#    seal), which both builds have.
#
# Environment (all optional):
#   GUARD      guard binary               (default: build/guard of this checkout)
#   GUARD_OLD  a second guard to compare  (default: none)
#   NM_DIR     a directory holding node_modules/ (default: install eslint, jest,
#              webpack, express, lodash and typescript with npm into a temp dir)
#   FILES      files for the lag test     (default: 3000)
#   PACE_MS    ms between paced writes    (default: 5)
#   RUNS       triples per workload       (default: 5)
#   TMPDIR     scratch location           (default: /tmp)
#   USE_LOOP   1: as root, run on a dedicated ext4 image, loop-mounted (default: 0)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo_root="$(cd "$here/../.." && pwd)"
GUARD="$(realpath "${GUARD:-$repo_root/build/guard}")"
GUARD_OLD="${GUARD_OLD:+$(realpath "$GUARD_OLD")}"
FILES="${FILES:-3000}"
PACE_MS="${PACE_MS:-5}"
RUNS="${RUNS:-5}"

scratch="$(mktemp -d "${TMPDIR:-/tmp}/guard-post-image-bench.XXXXXX")"
mnt=""
cleanup() {
  cd /
  if [[ -n "$mnt" ]]; then umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true; fi
  rm -rf "$scratch"
}
trap cleanup EXIT
# No automatic gc: it runs detached after each session and would still be
# writing in a GUARD_HOME this script deletes right after the session.
export XDG_CONFIG_HOME="$scratch/config"
mkdir -p "$XDG_CONFIG_HOME/guard" && printf '[retention]\nauto_gc = false\n' > "$XDG_CONFIG_HOME/guard/config.toml"
# As root (USE_LOOP=1), everything happens on a dedicated ext4 image,
# loop-mounted, as tools/bench/checkout_bench.sh does: the disk's other
# users and the deletions of earlier runs then weigh less on the timings.
if [[ "${USE_LOOP:-0}" == 1 && "$(id -u)" == 0 ]]; then
  if truncate -s 4G "$scratch/img" && mkfs.ext4 -q -F "$scratch/img" && mkdir -p "$scratch/mnt" &&
     mount -o loop "$scratch/img" "$scratch/mnt"; then
    mnt="$scratch/mnt"
  else
    echo "post_image_bench: loop mount failed; using $scratch" >&2
  fi
fi
work="${mnt:-$scratch}"
echo "filesystem: $(findmnt -n -o FSTYPE,SOURCE,OPTIONS --target "$work" | head -1)"
load_now() { echo "load $(cut -d' ' -f1-3 /proc/loadavg)"; }
now_us() { local t=${EPOCHREALTIME/./}; echo "$t"; }
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END{if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
echo "guard: $GUARD${GUARD_OLD:+; old: $GUARD_OLD}; $(nproc) CPUs, Linux $(uname -r); $(load_now) at start"

# --- 1. lag ---------------------------------------------------------------
lag_run() {  # lag_run MODE
  local mode=$1 root="$work/lag-$1" home="$work/home-lag-$1" log="$scratch/lag-$1.log"
  mkdir -p "$root"
  local writer
  if [[ $mode == paced ]]; then
    writer="for i in \$(seq 1 $FILES); do printf 'file %s\n' \$i > f\$i.txt; sleep $(awk -v m="$PACE_MS" 'BEGIN{printf "%.3f", m/1000}'); done"
  else
    writer="for i in \$(seq 1 $FILES); do printf 'file %s\n' \$i > f\$i.txt; done"
  fi
  # The agent waits (at most 10 minutes) until every file's post-image is durable.
  GUARD_HOME="$home" GUARD_POST_IMAGE_LAG_FILE="$log" "$GUARD" --quiet --root "$root" -- bash -c \
    "cd '$root' && $writer && for t in \$(seq 1 3000); do [ \$(cat '$log' 2>/dev/null | grep -c '^lag_us') -ge $FILES ] && break; sleep 0.2; done"
  awk '$1 == "lag_us" {print $2 / 1000}' "$log" | sort -g > "$scratch/lag-$mode.ms"
  awk -v mode="$mode" '{v[NR]=$1} END {
      if (NR == 0) { printf "  %-6s no post-image logged\n", mode; exit }
      if (NR % 2) m = v[(NR + 1) / 2]; else m = (v[NR / 2] + v[NR / 2 + 1]) / 2
      i90 = int(NR * 0.9); if (i90 < 1) i90 = 1
      i99 = int(NR * 0.99); if (i99 < 1) i99 = 1
      printf "  %-6s %d files: median %.0f ms, p90 %.0f ms, p99 %.0f ms, worst %.0f ms\n", mode, NR, m,
             v[i90], v[i99], v[NR] }' \
    "$scratch/lag-$mode.ms"
  rm -rf "$root" "$home"
}
echo
echo "1. From a file's last write to its post-image being durable ($FILES files; paced: one per $PACE_MS ms):"
lag_run paced
lag_run burst
echo "   ($(load_now))"

# --- 2. node_modules --------------------------------------------------------
nm_dir="${NM_DIR:-}"
if [[ -z "$nm_dir" ]]; then
  nm_dir="$scratch/npm"
  mkdir -p "$nm_dir"
  (cd "$nm_dir" && echo '{"name":"nm-bench","version":"1.0.0","private":true}' > package.json &&
     npm install --no-audit --no-fund --silent eslint jest webpack express lodash typescript >/dev/null)
fi
tar -C "$nm_dir" -cf "$scratch/nm.tar" node_modules
entries=$(tar -tf "$scratch/nm.tar" | wc -l)
bytes=$(du -sb "$nm_dir/node_modules" | cut -f1)

# guard.log's "command ended" line to meta.json's mtime, in ms.
seal_ms() {  # seal_ms HOME
  local log meta ended written
  log=$(ls "$1"/sessions/*/guard.log); meta=$(ls "$1"/sessions/*/meta.json)
  ended=$(grep -m1 'command ended' "$log" | sed -E 's/^\[([^]]*)\].*/\1/')
  written=$(date -r "$meta" +%s.%N)
  awk -v a="$(date -d "$ended" +%s.%N)" -v b="$written" 'BEGIN{printf "%.0f", (b - a) * 1000}'
}

declare -A times seals
run_one() {  # run_one WORKLOAD WHO
  local workload=$1 who=$2 root="$work/root" home="$work/home" t0 t1 bin
  rm -rf "$root" "$home"; mkdir -p "$root"
  if [[ $workload == rm ]]; then tar -C "$root" -xf "$scratch/nm.tar"; fi
  local cmd
  if [[ $workload == tar ]]; then cmd=(tar -xf "$scratch/nm.tar"); else cmd=(rm -rf node_modules); fi
  sync
  case $who in
    bare) t0=$(now_us); (cd "$root" && "${cmd[@]}"); t1=$(now_us) ;;
    new|old)
      bin=$GUARD; [[ $who == old ]] && bin=$GUARD_OLD
      t0=$(now_us); (cd "$root" && GUARD_HOME="$home" "$bin" --quiet --root "$root" -- "${cmd[@]}"); t1=$(now_us)
      seals[$workload-$who]+="$(seal_ms "$home") " ;;
  esac
  times[$workload-$who]+="$(( (t1 - t0) / 1000 )) "
  rm -rf "$root" "$home"
}

whos=(bare new); [[ -n "$GUARD_OLD" ]] && whos+=(old)
for workload in tar rm; do
  for ((i = 0; i < RUNS; i++)); do
    for ((j = 0; j < ${#whos[@]}; j++)); do run_one "$workload" "${whos[(i + j) % ${#whos[@]}]}"; done
  done
done

echo
echo "2. node_modules: $entries entries, $((bytes / 1048576)) MiB ($RUNS runs each, order rotating; $(load_now))"
printf '  %-24s %-10s %-42s %-22s %s\n' workload who "wall ms, median [runs]" "ratio to bare, median" "seal ms, median [runs]"
for workload in tar rm; do
  read -ra bare <<< "${times[$workload-bare]}"
  for who in "${whos[@]}"; do
    read -ra t <<< "${times[$workload-$who]}"
    ratio="-"
    if [[ $who != bare ]]; then
      rs=(); for ((i = 0; i < ${#t[@]}; i++)); do rs+=("$(awk -v g="${t[i]}" -v b="${bare[i]}" 'BEGIN{printf "%.2f", g / b}')"); done
      ratio="$(median "${rs[@]}") [${rs[*]}]"
    fi
    s="-"; [[ $who != bare ]] && { read -ra ss <<< "${seals[$workload-$who]}"; s="$(median "${ss[@]}") [${ss[*]}]"; }
    label="tar -xf"; [[ $workload == rm ]] && label="rm -rf node_modules"
    printf '  %-24s %-10s %-42s %-22s %s\n' "$label" "$who" "$(median "${t[@]}") [${t[*]}]" "$ratio" "$s"
  done
done
echo "   ($(load_now) at the end)"
