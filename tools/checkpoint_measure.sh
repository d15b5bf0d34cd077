#!/usr/bin/env bash
# Measures checkpoints (docs/measurements.md, "Checkpoints"): on a repository
# of several thousand files with two versions of a Python standard library
# as history, a session that changed N files; the time of `guard checkpoint`
# against `git add -A && git commit` into a separate git dir (what shadow-
# repository tools do per checkpoint), five pairs run one after the other
# (wall and CPU time of each, the median of the five ratios: the machine's
# load changes both sides of a pair alike); and the disk K checkpoints of
# such a session add to .git, each after a change to M of its N files
# (default all N; with M < N the session first changes all N, checkpoints,
# then changes M files K times).
#   tools/checkpoint_measure.sh BUILD_DIR WORK_DIR N K [M]
# Needs pypy3-lib's .deb extracted at WORK_DIR/pypy (apt-get download pypy3-lib; dpkg-deb -x).
set -euo pipefail
guard=$(realpath "$1/guard"); w=$(realpath "$2"); n=$3; k=$4; m=${5:-$3}
export GUARD_HOME=$w/home HOME=$w GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=m GIT_AUTHOR_EMAIL=m@x GIT_COMMITTER_NAME=m GIT_COMMITTER_EMAIL=m@x
repo=$w/repo-$n shadow=$w/shadow-$n.git
rm -rf "$repo" "$shadow" "$GUARD_HOME"; mkdir -p "$repo" "$GUARD_HOME"
cd "$repo"
git init -q -b main .
# No automatic gc: a detached one would still run when the script packs the repository itself.
git config gc.auto 0
mkdir -p lib include
# -L: symlinks (to /usr/...) become files, so that no edit leaves the tree.
copy() { mkdir -p "$(dirname "$2")" && cp -rL "$1" "$2" && find "$2" -name __pycache__ -prune -exec rm -rf {} +; }
copy /usr/lib/python3.11 "$repo/lib/python"
copy /usr/lib/python3/dist-packages "$repo/lib/site"
copy /usr/include/boost/asio "$repo/include/boost/asio"
copy /usr/include/boost/spirit "$repo/include/boost/spirit"
copy /usr/include/boost/fusion "$repo/include/boost/fusion"
copy /usr/include/boost/mpl "$repo/include/boost/mpl"
copy /usr/include/boost/geometry "$repo/include/boost/geometry"
git add -A && git commit -qm "python 3.11 stdlib"
rm -rf lib/python && copy "$w/pypy/usr/lib/pypy3.9" "$repo/lib/python"
git add -A && git commit -qm "pypy 3.9 stdlib"
files=$(git ls-files | wc -l)
echo "repository: $files files, $(du -sh --exclude=.git . | cut -f1) in the tree, .git $(du -sh .git | cut -f1)"
# The shadow repository, as such tools keep it: the same tree, committed once.
GIT_DIR=$shadow git init -q --bare 2>/dev/null
GIT_DIR=$shadow GIT_WORK_TREE=$repo git add -A
GIT_DIR=$shadow GIT_WORK_TREE=$repo git commit -qm base
cp "$shadow/index" "$w/shadow-index.base"; base=$(GIT_DIR=$shadow git rev-parse HEAD)

# N regular files spread over the tree.
git ls-files -s | awk '$1 == "100644" {print $4}' > "$w/regular"
step=$(( $(wc -l < "$w/regular") / n )); [ "$step" -ge 1 ] || step=1
# (no `| head`: under pipefail its SIGPIPE to awk would end the script)
awk -v step="$step" -v n="$n" 'NR % step == 0 && c < n {print; c++}' "$w/regular" > "$w/touched"
"$guard" --quiet -- bash -c "while read -r f; do echo '# edited' >> \"\$f\"; done < $w/touched"
id=$(ls "$GUARD_HOME/sessions" | tail -1)
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# One line per run: wall seconds, CPU seconds (user + sys).
timed() { /usr/bin/time -f '%e %U %S' -o "$w/time" "$@" >/dev/null; awk '{printf "%.3f %.3f\n", $1, $2 + $3}' "$w/time"; }
: > "$w/pairs"
for i in 1 2 3 4 5; do
  git update-ref -d "refs/guard/$id"
  g=$(timed "$guard" checkpoint --session "$id")
  cp "$w/shadow-index.base" "$shadow/index"; GIT_DIR=$shadow git update-ref HEAD "$base"
  s=$(GIT_DIR=$shadow GIT_WORK_TREE=$repo timed bash -c 'git add -A && git commit -qm c')
  echo "$g $s" | tee -a "$w/pairs" | awk '{printf "  pair: guard %.2f s (CPU %.2f s), shadow %.2f s (CPU %.2f s)\n", $1, $2, $3, $4}'
done
echo "session touching $n files (load average $(cut -d' ' -f1-3 /proc/loadavg)): medians of 5:" \
  "guard checkpoint $(awk '{print $1}' "$w/pairs" | median) s (CPU $(awk '{print $2}' "$w/pairs" | median) s)," \
  "git add -A && git commit $(awk '{print $3}' "$w/pairs" | median) s (CPU $(awk '{print $4}' "$w/pairs" | median) s);" \
  "ratio guard/shadow: wall $(awk '{print $1 / $3}' "$w/pairs" | median), CPU $(awk '{print $2 / $4}' "$w/pairs" | median)"

# K checkpoints of a session that changes M of the N files again before each
# (after changing all N first, when M < N), each waited for.
git gc -q --prune=now; before=$(du -sb .git | cut -f1)
ls .git/objects/pack/*.pack > "$w/packs-before"
awk -v m="$m" 'NR <= m' "$w/touched" > "$w/touched-m"
first=""
if [ "$m" -lt "$n" ]; then first="edit_all=1"; fi
"$guard" --quiet --checkpoint-every 1s -- bash -c "
  wait_for() { until git cat-file -p refs/guard/\$GUARD_SESSION:\"\$(tail -n1 \$1)\" 2>/dev/null | tail -n1 | grep -qx \"# edit \$2\"; do sleep 0.1; done; }
  if [ -n '$first' ]; then
    while read -r f; do echo '# edit 0' >> \"\$f\"; done < $w/touched
    wait_for $w/touched 0
  fi
  for i in \$(seq $k); do
    while read -r f; do echo \"# edit \$i\" >> \"\$f\"; done < $w/touched-m
    wait_for $w/touched-m \$i
  done"
id2=$(ls "$GUARD_HOME/sessions" | tail -1)
after=$(du -sb .git | cut -f1)
ls .git/objects/pack/*.pack | grep -vxF -f "$w/packs-before" | xargs stat -c '%.9Y %s' | sort -n | awk '{print $2}' > "$w/new-packs"
commits=$(git rev-list --count "refs/guard/$id2" ^main)
echo "$commits checkpoints (M = $m of $n files changed before each): .git grew by $(( after - before )) bytes" \
  "in $(wc -l < "$w/new-packs") packs (first $(head -n1 "$w/new-packs") bytes, median $(median < "$w/new-packs") bytes)"
git gc -q --prune=now; echo "after git gc: .git $(du -sb .git | cut -f1) bytes (was $before bytes before the checkpoints)"
