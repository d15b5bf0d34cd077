#!/usr/bin/env bash
# checkout_bench.sh: what guard costs on a large `git checkout`.
#
# Builds a scratch git repository whose commits A and B hold two real versions
# of a tree found on this machine (by default two CPython standard libraries
# from pyenv, __pycache__ included, site-packages left out), then times
# `git checkout -q B` from A, bare and under guard, in interleaved pairs:
#
#   bare:    git checkout -q B
#   guarded: GUARD_HOME=<fresh> guard --quiet --root REPO -- git checkout -q B
#
# Between runs the repository goes back to A with a bare, untimed checkout,
# and `sync` flushes writeback so that no run pays for the previous one. Each
# guarded run gets a fresh GUARD_HOME on the repository's filesystem (so that
# pre-images are captured by hard link), which is deleted after the run.
# Every guarded run is checked: exit 0, HEAD at B, clean work tree, and the
# session recorded as many changed files as git changed.
#
# Prints: files changed by the checkout, median wall time bare and guarded
# (the guarded time split, from the session's guard.log, into the time the
# traced git ran and the time after it ended: sealing), CPU time, median of
# the paired ratios guarded/bare, seccomp and exit stops per guarded checkout
# (GUARD_STATS_FILE), journal and store size, the journal's operations by
# syscall, and (with perf and readable syscall tracepoints, in one extra
# untimed pair) the fsync/fdatasync calls of each side. If the guard binary
# has an `undo` subcommand, also times `guard undo --yes` of each guarded
# checkout and checks that it brings back A (HEAD and a clean work tree).
#
# As root the repository lives on a dedicated ext4 image, loop-mounted (4 GiB,
# sparse); otherwise, or if mounting fails, in a directory under $TMPDIR.
#
# Environment (all optional):
#   GUARD        guard binary            (default: build/guard of this checkout)
#   TREE_A       tree for commit A       (default: pyenv 3.12.1 stdlib)
#   TREE_B       tree for commit B       (default: pyenv 3.13.0 stdlib)
#   RUNS         number of pairs         (default: 5)
#   USE_LOOP     0 to skip the loop-mounted image (default: 1)
#   KEEP         1 to keep the scratch directory and image
#   TMPDIR       where the scratch directory goes (default: /tmp)
#   WAIT_LOAD    wait (up to WAIT_MAX seconds, default 900) until the 1-minute
#                load average is below this before timing, e.g. WAIT_LOAD=1.0
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo_root="$(cd "$here/../.." && pwd)"
GUARD="${GUARD:-$repo_root/build/guard}"
TREE_A="${TREE_A:-/root/.pyenv/versions/3.12.1/lib/python3.12}"
TREE_B="${TREE_B:-/root/.pyenv/versions/3.13.0/lib/python3.13}"
RUNS="${RUNS:-5}"
USE_LOOP="${USE_LOOP:-1}"
KEEP="${KEEP:-0}"

die() { echo "checkout_bench: $*" >&2; exit 1; }
[[ -x "$GUARD" ]] || die "no guard binary at $GUARD (set GUARD=...)"
[[ -d "$TREE_A" ]] || die "TREE_A $TREE_A is not a directory"
[[ -d "$TREE_B" ]] || die "TREE_B $TREE_B is not a directory"
GUARD="$(realpath "$GUARD")"

scratch="$(mktemp -d "${TMPDIR:-/tmp}/guard-checkout-bench.XXXXXX")"
mnt=""
cleanup() {
  cd /
  if [[ "$KEEP" == 1 ]]; then
    echo "kept: $scratch${mnt:+ (image mounted at $mnt)}" >&2
    return
  fi
  if [[ -n "$mnt" ]]; then umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true; fi
  rm -rf "$scratch"
}
trap cleanup EXIT
# No automatic gc: it runs detached after each session and would still be
# writing in a GUARD_HOME this script deletes right after the session.
export XDG_CONFIG_HOME="$scratch/config"
mkdir -p "$XDG_CONFIG_HOME/guard" && printf '[retention]\nauto_gc = false\n' > "$XDG_CONFIG_HOME/guard/config.toml"

# --- where the repository lives -------------------------------------------
base="$scratch/dir"
fs_note="directory $scratch on $(findmnt -n -o FSTYPE,SOURCE,OPTIONS --target "$scratch" | head -1 | awk '{print $1 " (" $2 ", " $3 ")"}')"
if [[ "$USE_LOOP" == 1 && "$(id -u)" == 0 ]]; then
  if truncate -s 4G "$scratch/img" && mkfs.ext4 -q -F "$scratch/img" &&
     mkdir -p "$scratch/mnt" && mount -o loop "$scratch/img" "$scratch/mnt" 2>/dev/null; then
    mnt="$scratch/mnt"
    base="$mnt"
    fs_note="dedicated ext4 image, loop-mounted ($(findmnt -n -o SOURCE --target "$mnt"), $(findmnt -n -o OPTIONS --target "$mnt"))"
  else
    echo "checkout_bench: loop mount failed; using $fs_note" >&2
    rm -f "$scratch/img"
  fi
fi
mkdir -p "$base"
repo="$base/repo"

# --- the repository ---------------------------------------------------------
copy_tree() {  # copy_tree SRC DEST: the tree without site-packages
  mkdir -p "$2"
  tar -C "$1" --exclude=./site-packages -cf - . | tar -C "$2" -xf -
}
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
git init -q "$repo"
cd "$repo"
git config core.autocrlf false
git config gc.auto 0
copy_tree "$TREE_A" "$repo/lib"
git add -A . && git commit -qm A && git tag A
rm -rf "$repo/lib"
copy_tree "$TREE_B" "$repo/lib"
git add -A . && git commit -qm B && git tag B
git repack -adq
git checkout -q A

changed=$(git diff --no-renames --name-only A B | wc -l)
added=$(git diff --no-renames --name-only --diff-filter=A A B | wc -l)
deleted=$(git diff --no-renames --name-only --diff-filter=D A B | wc -l)
modified=$(git diff --no-renames --name-only --diff-filter=M A B | wc -l)
files_a=$(git ls-tree -r A | wc -l)
files_b=$(git ls-tree -r B | wc -l)
bytes_b=$(du -sb --exclude=.git "$repo" | cut -f1)

now_us() { local t=${EPOCHREALTIME/./}; echo "${t}"; }
# CPU seconds (user+sys of the command and its children) through /usr/bin/time
# when it is installed; wall time always comes from $EPOCHREALTIME.
cpu_wrap=()
[[ -x /usr/bin/time ]] && cpu_wrap=(/usr/bin/time -f "%U %S" -o "$base/cpu")
cpu_sec() { [[ -s "$base/cpu" ]] && awk '{printf "%.2f", $1 + $2}' "$base/cpu" || echo "?"; }
dump="$(dirname "$GUARD")/tools/guard-journal-dump"
[[ -x "$dump" ]] || dump="$(dirname "$GUARD")/guard-journal-dump"
load_now() {
  local io=""
  [[ -r /proc/pressure/io ]] && io=", io pressure some avg60 $(awk '/^some/{sub("avg60=", "", $3); print $3 "%"}' /proc/pressure/io)"
  echo "load $(cut -d' ' -f1-3 /proc/loadavg)$io"
}
load_start=$(load_now)
reset_to_a() { git checkout -q A; sync; }

if [[ -n "${WAIT_LOAD:-}" ]]; then
  deadline=$((SECONDS + ${WAIT_MAX:-900}))
  while awk -v m="$WAIT_LOAD" '{exit !($1 >= m)}' /proc/loadavg && ((SECONDS < deadline)); do sleep 10; done
  echo "checkout_bench: starting at $(cut -d' ' -f1-3 /proc/loadavg) (WAIT_LOAD=$WAIT_LOAD)" >&2
fi

# Warm-up: one bare round trip, untimed, so that the pack and the trees are in
# the page cache for every timed run alike.
git checkout -q B; reset_to_a

cmd_ms=(); seal_ms=(); bare_cpu=(); guard_cpu=(); bare_us=(); guard_us=(); ratios=(); seccomp=(); exitst=(); ops=(); gfiles=(); jbytes=(); sbytes=()
undo_us=()
has_undo=0
# A real `undo` subcommand is listed under "Subcommands:" in --help (a plain
# `guard undo --help` would take "undo" for the command to run).
if "$GUARD" --help 2>&1 | awk '/^Subcommands:/{s=1} s && $1=="undo"{f=1} END{exit !f}'; then has_undo=1; fi

run_bare() {
  local t0 t1
  rm -f "$base/cpu"
  t0=$(now_us); "${cpu_wrap[@]}" git checkout -q B; t1=$(now_us)
  bare_us+=($((t1 - t0)))
  bare_cpu+=("$(cpu_sec)")
  reset_to_a
}

run_guarded() {
  local i=$1 gh="$base/guard-home-$1" stats="$base/stats-$1" t0 t1 rc=0
  rm -rf "$gh"
  rm -f "$base/cpu"
  t0=$(now_us)
  GUARD_HOME="$gh" GUARD_STATS_FILE="$stats" "${cpu_wrap[@]}" "$GUARD" --quiet --root "$repo" -- git checkout -q B || rc=$?
  t1=$(now_us)
  guard_cpu+=("$(cpu_sec)")
  [[ $rc == 0 ]] || die "guarded run $i: guard exited $rc"
  [[ "$(git rev-parse HEAD)" == "$(git rev-parse B)" ]] || die "guarded run $i: HEAD is not B"
  [[ -z "$(git status --porcelain)" ]] || die "guarded run $i: work tree not clean"
  guard_us+=($((t1 - t0)))
  # The stats file and the last records come with the deferred seal, after
  # guard returned: any command that reads sessions waits for it.
  GUARD_HOME="$gh" "$GUARD" sessions --root "$repo" > /dev/null
  seccomp+=("$(awk '$1=="seccomp_stops"{print $2}' "$stats")")
  exitst+=("$(awk '$1=="exit_stops"{print $2}' "$stats")")
  ops+=("$(awk '$1=="ops"{print $2}' "$stats")")
  gfiles+=("$(awk '$1=="files"{print $2}' "$stats")")
  local journal log
  journal=$(ls "$gh"/sessions/*/journal)
  # guard.log stamps (ms) its first line and "command ended": the time the
  # traced command ran; the rest of the wall time is start-up and sealing
  # (final states, pending blobs, the last group commit).
  log=$(ls "$gh"/sessions/*/guard.log)
  local phase
  phase=$(awk -F'[][]' 'function t(s,  a) { split(substr(s, 12), a, ":"); return a[1] * 3600 + a[2] * 60 + a[3] }
    NR == 1 { s = t($2) } /command ended/ { e = t($2) } END { d = e - s; if (d < 0) d += 86400; printf "%d", d * 1000 }' "$log")
  cmd_ms+=("$phase")
  seal_ms+=($(( (t1 - t0) / 1000 - phase )))
  jbytes+=("$(stat -c %s "$journal")")
  sbytes+=("$(du -sb "$gh/store" | cut -f1)")
  if [[ $i == 1 && -x "$dump" ]]; then
    # Operation records of the first guarded run, by syscall and kind.
    "$dump" "$journal" | awk '$2 != "outcome" && $2 != "final" && $2 != "blob-resolved" && $2 != "session-end" {
        for (f = 4; f < NF; f++) if ($f ~ /^flags=/) { n[$(f + 1) " (" $2 ")"]++; break } }
      END { for (k in n) printf "%s %d\n", k, n[k] }' | sort -k3,3nr > "$base/histogram"
    "$dump" "$journal" | awk '{n[$2]++} END{for (k in n) printf "%s %d\n", k, n[k]}' | sort -k2,2nr > "$base/kinds"
  fi
  if [[ $has_undo == 1 ]]; then
    local u0 u1 urc=0
    sync
    u0=$(now_us)
    (cd "$repo" && GUARD_HOME="$gh" "$GUARD" undo --yes >/dev/null 2>"$base/undo-$i.err") || urc=$?
    u1=$(now_us)
    if [[ $urc == 0 ]]; then
      undo_us+=($((u1 - u0)))
      [[ "$(git status --porcelain | wc -l)" == 0 && "$(git rev-parse HEAD)" == "$(git rev-parse A)" ]] ||
        echo "checkout_bench: warning: after guard undo in run $i, HEAD=$(git rev-parse --short HEAD), $(git status --porcelain | wc -l) paths differ from HEAD" >&2
    else
      echo "checkout_bench: guard undo failed in run $i (exit $urc): $(head -c 300 "$base/undo-$i.err")" >&2
      has_undo=2
    fi
  fi
  rm -rf "$gh" "$stats"
  reset_to_a
}

for ((i = 1; i <= RUNS; i++)); do
  # Alternate which of the pair goes first, so that drift cancels out.
  if ((i % 2)); then run_bare; run_guarded "$i"; else run_guarded "$i"; run_bare; fi
  echo "pair $i: bare $((bare_us[-1] / 1000)) ms, guarded $((guard_us[-1] / 1000)) ms" >&2
done
# One more, untimed pair under `perf stat` (when the kernel's syscall
# tracepoints are readable): how many fsync/fdatasync/syncfs calls each side makes.
fsync_counts=""
perf_ev=syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync,syscalls:sys_enter_syncfs
if command -v perf >/dev/null && perf stat -x, -e "$perf_ev" -- true >/dev/null 2>&1; then
  count_syncs() { perf stat -x, -o "$base/perf" -e "$perf_ev" -- "$@" >/dev/null; awk -F, '{s += $1} END{print s + 0}' "$base/perf"; }
  b=$(count_syncs git checkout -q B); reset_to_a
  rm -rf "$base/guard-home-perf"
  g=$(GUARD_HOME="$base/guard-home-perf" count_syncs "$GUARD" --quiet --root "$repo" -- git checkout -q B)
  rm -rf "$base/guard-home-perf"; reset_to_a
  fsync_counts="bare $b, guarded $g"
fi

for ((i = 0; i < RUNS; i++)); do
  ratios+=("$(awk -v g="${guard_us[i]}" -v b="${bare_us[i]}" 'BEGIN{printf "%.4f", g / b}')")
done

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END{if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
ms() { awk -v u="$1" 'BEGIN{printf "%.1f", u / 1000}'; }
list_ms() { local out="" x; for x in "$@"; do out+="$(ms "$x") "; done; echo "${out% }"; }
uniq_list() { printf '%s\n' "$@" | sort -n | uniq | paste -sd/ -; }

echo
echo "guard:       $GUARD ($("$GUARD" --version 2>/dev/null || echo '?'))"
echo "tree A:      $TREE_A ($files_a files)"
echo "tree B:      $TREE_B ($files_b files, $((bytes_b / 1048576)) MiB checked out)"
echo "filesystem:  $fs_note"
echo "machine:     $(nproc) CPUs, Linux $(uname -r), git $(git --version | awk '{print $3}')"
echo "runs:        $RUNS pairs, bare/guarded order alternating"
echo "machine load: at start $load_start; at end $(load_now)"
echo
printf '%-44s %s\n' "metric" "value"
printf '%-44s %s\n' "--------------------------------------------" "------------------------------"
printf '%-44s %s\n' "files changed by checkout A->B" "$changed (modified $modified, added $added, deleted $deleted)"
printf '%-44s %s\n' "files changed, as guard counted them" "$(uniq_list "${gfiles[@]}")"
printf '%-44s %s\n' "wall time bare, median (ms)" "$(ms "$(median "${bare_us[@]}")")   [$(list_ms "${bare_us[@]}")]"
printf '%-44s %s\n' "wall time under guard, median (ms)" "$(ms "$(median "${guard_us[@]}")")   [$(list_ms "${guard_us[@]}")]"
printf '%-44s %s\n' "  of which the traced command ran (ms)" "$(median "${cmd_ms[@]}")   [${cmd_ms[*]}]"
printf '%-44s %s\n' "  of which after it ended: seal etc. (ms)" "$(median "${seal_ms[@]}")   [${seal_ms[*]}]"
printf '%-44s %s\n' "CPU user+sys bare, median (s)" "$(median "${bare_cpu[@]}")   [${bare_cpu[*]}]"
printf '%-44s %s\n' "CPU user+sys under guard, median (s)" "$(median "${guard_cpu[@]}")   [${guard_cpu[*]}]"
printf '%-44s %s\n' "paired ratio guard/bare, median" "$(median "${ratios[@]}")   [${ratios[*]}]"
printf '%-44s %s\n' "seccomp stops per guarded checkout" "$(uniq_list "${seccomp[@]}")"
printf '%-44s %s\n' "exit stops per guarded checkout" "$(uniq_list "${exitst[@]}")"
printf '%-44s %s\n' "operation records per guarded checkout" "$(uniq_list "${ops[@]}")"
printf '%-44s %s\n' "journal size (bytes)" "$(uniq_list "${jbytes[@]}")"
printf '%-44s %s\n' "blob store size, du -sb (bytes)" "$(uniq_list "${sbytes[@]}")"
[[ -n "$fsync_counts" ]] && printf '%-44s %s\n' "fsync+fdatasync+syncfs calls per checkout (perf)" "$fsync_counts"
case $has_undo in
  0) printf '%-44s %s\n' "guard undo" "not in this build (skipped)" ;;
  1) printf '%-44s %s\n' "guard undo of the checkout, median (ms)" "$(ms "$(median "${undo_us[@]}")")   [$(list_ms "${undo_us[@]}")]" ;;
  2) printf '%-44s %s\n' "guard undo" "failed (see messages above)" ;;
esac
if [[ -s "$base/histogram" ]]; then
  echo
  echo "journal records of guarded run 1, by kind: $(awk '{printf "%s%s %s", sep, $1, $2; sep=", "}' "$base/kinds")"
  echo "operation records of guarded run 1, by syscall (kind):"
  awk '{printf "  %-28s %s\n", $1 " " $2, $3}' "$base/histogram"
fi
