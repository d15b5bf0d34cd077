#!/bin/sh
# The ring's throughput (issue 13): records per second from 1, 2 and 8
# producer processes (64- and 512-byte payloads), and pre-image bytes per
# second through the pending area (link or rename of a file into a directory,
# a ring record naming it, one rename by the consumer to adopt it). Prints a
# markdown section; with --write it replaces the "## Ring" section of
# docs/performance.md (tools/bench/run.sh rewrites that file whole: run this
# after it).
#
#   tools/bench/ring_bench.sh [--bench build/tools/ring_bench] [--runs 3] [--dir /var/tmp] [--write]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bench="$repo/build/tools/ring_bench"
runs=3
dir=${TMPDIR:-/var/tmp}
write=0
while [ $# -gt 0 ]; do
  case "$1" in
    --bench) bench=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --write) write=1; shift ;;
    *) echo "usage: $0 [--bench PATH] [--runs N] [--dir DIR] [--write]" >&2; exit 2 ;;
  esac
done
[ -x "$bench" ] || { echo "$0: no $bench (cmake --build build --target ring_bench)" >&2; exit 1; }

# field NAME LINE: the value of NAME=... in one of ring_bench's lines.
field() { printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
# The median of the numbers on stdin.
median() { sort -n | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

out=$(mktemp)
trap 'rm -f "$out"' EXIT
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
{
  echo "## Ring"
  echo
  echo "Written by \`tools/bench/ring_bench.sh --runs $runs\` (\`tools/bench/ring_bench.cc\`); medians of $runs runs."
  echo "A 1 MiB ring; each producer is a process of its own; the consumer drains in the benchmark's own"
  echo "process and sleeps (futex) when there is nothing to drain. Context switches are getrusage's, summed"
  echo "over the consumer and over the producers, medians like the rest: they change less with the"
  echo "machine's load than the rates do."
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "- machine: $(nproc) cores, kernel $(uname -r); load average $load_start at start, LOAD_END at end"
  echo
  echo "| producers | payload | records | records/s | payload MB/s | consumer ctx switches | producer ctx switches |"
  echo "|---|---|---|---|---|---|---|"
  for size in 64 512; do
    for n in 1 2 8; do
      total=2400000
      [ "$size" = 512 ] && total=800000
      per=$((total / n))
      lines=""
      i=0
      while [ $i -lt "$runs" ]; do
        lines="$lines$("$bench" records --producers $n --size $size --records $per)
"
        i=$((i + 1))
      done
      rate=$(printf '%s' "$lines" | while read -r l; do field records_per_s "$l"; done | median)
      mb=$(printf '%s' "$lines" | while read -r l; do field payload_mb_per_s "$l"; done | median)
      cc=$(printf '%s' "$lines" | while read -r l; do field consumer_ctx "$l"; done | median)
      pc=$(printf '%s' "$lines" | while read -r l; do field producer_ctx "$l"; done | median)
      echo "| $n | $size B | $((per * n)) | $rate | $mb | $cc | $pc |"
    done
  done
  echo
  echo "Pre-images through the pending area: each producer moves 64 KiB files into \`pending/\` (a delete:"
  echo "\`link\` then the caller's \`unlink\`; a rename-over: one \`rename\`), puts a pending-file record naming"
  echo "each, and the consumer adopts each by one \`rename\` into \`store/\`. The bytes are never copied, so"
  echo "bytes/s is files/s times the file size: the cost is per file."
  echo
  echo "| producers | how | files | files/s | pre-image MB/s |"
  echo "|---|---|---|---|---|"
  for how in link rename; do
    for n in 1 2 8; do
      per=$((2000 / n))
      lines=""
      i=0
      while [ $i -lt "$runs" ]; do
        work=$(mktemp -d "$dir/ring-bench.XXXXXX")
        lines="$lines$("$bench" pending --producers $n --files $per --file-size 65536 --how $how --dir "$work/t")
"
        rm -rf "$work"
        i=$((i + 1))
      done
      fps=$(printf '%s' "$lines" | while read -r l; do field files_per_s "$l"; done | median)
      mbs=$(printf '%s' "$lines" | while read -r l; do field preimage_mb_per_s "$l"; done | median)
      echo "| $n | $how | $((per * n)) | $fps | $mbs |"
    done
  done
  echo
} >"$out"
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
sed -i "s/LOAD_END/$load_end/" "$out"
cat "$out"
if [ "$write" = 1 ]; then
  doc="$repo/docs/performance.md"
  # Drop an old "## Ring" section (up to the next "## " heading), then append.
  awk 'BEGIN{skip=0} /^## Ring$/{skip=1; next} /^## /{skip=0} !skip' "$doc" >"$doc.new"
  # Keep one blank line between the rest and the new section.
  sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$doc.new" >"$doc.tmp" && mv "$doc.tmp" "$doc.new"
  printf '\n' >>"$doc.new"
  cat "$out" >>"$doc.new"
  mv "$doc.new" "$doc"
fi
