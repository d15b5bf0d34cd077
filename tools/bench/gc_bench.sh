#!/usr/bin/env bash
# Disk use and gc on a real tree (docs/measurements.md, "Bounded disk"):
# SESSIONS agent-like sessions under guard on a copy of a Python standard
# library (.py files only), each a few hundred edits (a fifth by temp file +
# rename), renames, deletes and new files, as the node workload of the
# capture benchmark does. Then: the state directory's size against the
# tree's, the time of a gc that brings it under half its size, and the
# pause the automatic gc adds to a session's end (from each session's log:
# "automatic gc check started (N us)") with the store over its cap.
#   tools/bench/gc_bench.sh [BUILD_DIR]      SESSIONS=100 SRC=... WORK=...
set -euo pipefail
build=$(realpath "${1:-build}")
guard=$build/guard
sessions=${SESSIONS:-100}
src=${SRC:-/root/.pyenv/versions/3.11.7/lib/python3.11}
work=${WORK:-$(mktemp -d /tmp/guard-gc-bench-XXXXXX)}
tree=$work/tree
export GUARD_HOME=$work/home XDG_CONFIG_HOME=$work/config
mkdir -p "$tree" "$XDG_CONFIG_HOME/guard"
(cd "$src" && find . -name '*.py' -not -path '*/site-packages/*' -not -path '*/test/*' \
   -not -path '*/__pycache__/*' -print0 | xargs -0 cp --parents -p -t "$tree")
tree_bytes=$(du -sb "$tree" | cut -f1)
tree_files=$(find "$tree" -type f | wc -l)

# The workload: edits, renames, deletes and new files, seeded per session.
cat > "$work/agent.py" <<'PY'
import os, random, sys
if os.path.realpath(".") != os.path.realpath(os.environ["GUARD_ROOT"]):
    sys.exit("agent.py: not in the session's root")
random.seed(int(sys.argv[1]))
files = [os.path.join(d, f) for d, _, fs in os.walk(".") for f in fs]
for i in range(300):                       # read-modify-write, a fifth by temp file + rename
    p = random.choice(files)
    if not os.path.exists(p): continue
    with open(p, "rb") as f: data = f.read()
    data = data.replace(b"def ", b"def  ", 1) + b"\n# edit %d\n" % i
    if i % 5 == 0:
        with open(p + ".tmp", "wb") as f: f.write(data)
        os.rename(p + ".tmp", p)
    else:
        with open(p, "wb") as f: f.write(data)
for i in range(20):                        # renames
    p = random.choice(files)
    if os.path.exists(p): os.rename(p, p + ".moved"); files.append(p + ".moved")
for i in range(30):                        # deletes
    p = random.choice(files)
    if os.path.exists(p): os.remove(p)
for i in range(30):                        # new files
    with open("new_%s_%d.py" % (sys.argv[1], i), "w") as f: f.write("x = %d\n" % i * 50)
PY

echo "[retention]" > "$XDG_CONFIG_HOME/guard/config.toml"
echo "auto_gc = false" >> "$XDG_CONFIG_HOME/guard/config.toml"
# guard runs the command in the current directory: the tree's.
cd "$tree"
start=$(date +%s.%N)
for s in $(seq 1 "$sessions"); do
  "$guard" --quiet --root "$tree" -- python3 "$work/agent.py" "$s"
done
end=$(date +%s.%N)
home_bytes=$(du -sb "$GUARD_HOME" | cut -f1)
store_bytes=$(du -sb "$GUARD_HOME/store" | cut -f1)
objects=$(find "$GUARD_HOME/store/objects" -type f | wc -l)
echo "tree: $tree_files files, $tree_bytes bytes"
echo "after $sessions sessions ($(echo "$end - $start" | bc) s): state dir $home_bytes bytes, store $store_bytes bytes, $objects objects"

cap=$((home_bytes / 2))
cp -a "$GUARD_HOME" "$work/home-copy"
t0=$(date +%s.%N)
"$guard" gc --max-size "$cap" --keep-newest 3 > "$work/gc.out"
t1=$(date +%s.%N)
tail -2 "$work/gc.out"
echo "gc to a cap of $cap bytes: $(echo "$t1 - $t0" | bc) s; state dir now $(du -sb "$GUARD_HOME" | cut -f1) bytes"

# The automatic gc: a cap the store is over, then 100 more sessions.
rm -rf "$GUARD_HOME"; mv "$work/home-copy" "$GUARD_HOME"
printf '[retention]\nmax_size = %s\n' "$cap" > "$XDG_CONFIG_HOME/guard/config.toml"
rm -f "$GUARD_HOME/gc.log"
for s in $(seq 1 "$sessions"); do
  "$guard" --quiet --root "$tree" -- python3 -c 'open("auto.txt", "a").write("x\n")'
done
grep -ho 'automatic gc check started ([0-9]* us)' "$GUARD_HOME"/sessions/*/guard.log | grep -o '[0-9]*' |
  sort -n | awk '{a[NR]=$1} END {print "automatic gc start, held the supervisor: median " a[int((NR+1)/2)] " us, max " a[NR] " us over " NR " session ends"}'
echo "state dir after: $(du -sb "$GUARD_HOME" | cut -f1) bytes (cap $cap); last auto gc:"
cat "$GUARD_HOME/gc.log"
echo "work dir: $work"
