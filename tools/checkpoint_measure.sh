#!/usr/bin/env bash
# Measures checkpoints (docs/measurements.md, "Checkpoints"): on a repository
# of several thousand files with two versions of a Python standard library
# as history, a session that changed N files; the time of `guard checkpoint`
# against `git add -A && git commit` into a separate git dir (what shadow-
# repository tools do per checkpoint), median of 5; and the disk 100
# checkpoints of such a session add to .git (K of them for large N).
#   tools/checkpoint_measure.sh BUILD_DIR WORK_DIR N K
# Needs pypy3-lib's .deb extracted at WORK_DIR/pypy (apt-get download pypy3-lib; dpkg-deb -x).
set -euo pipefail
guard=$(realpath "$1/guard"); w=$(realpath "$2"); n=$3; k=$4
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
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for i in 1 2 3 4 5; do
  git update-ref -d "refs/guard/$id"
  s=$(date +%s%N); "$guard" checkpoint --session "$id" >/dev/null; e=$(date +%s%N)
  echo $(( (e - s) / 1000000 ))
done | median > "$w/t_guard"
for i in 1 2 3 4 5; do
  cp "$w/shadow-index.base" "$shadow/index"; GIT_DIR=$shadow git update-ref HEAD "$base"
  s=$(date +%s%N)
  GIT_DIR=$shadow GIT_WORK_TREE=$repo git add -A && GIT_DIR=$shadow GIT_WORK_TREE=$repo git commit -qm c
  e=$(date +%s%N)
  echo $(( (e - s) / 1000000 ))
done | median > "$w/t_shadow"
echo "session touching $n files: guard checkpoint $(cat "$w/t_guard") ms, git add -A && git commit $(cat "$w/t_shadow") ms (medians of 5)"

# K checkpoints of a session that changes the same N files again before each.
git gc -q --prune=now; before=$(du -sk .git | cut -f1); packs_before=$(ls .git/objects/pack/*.pack | wc -l)
"$guard" --quiet --checkpoint-every 1s -- bash -c "
  for i in \$(seq $k); do
    while read -r f; do echo \"# edit \$i\" >> \"\$f\"; done < $w/touched
    last=\$(tail -n1 $w/touched)
    until git cat-file -p refs/guard/\$GUARD_SESSION:\"\$last\" 2>/dev/null | tail -n1 | grep -qx \"# edit \$i\"; do sleep 0.1; done
  done"
id2=$(ls "$GUARD_HOME/sessions" | tail -1)
after=$(du -sk .git | cut -f1); packs=$(( $(ls .git/objects/pack/*.pack | wc -l) - packs_before ))
commits=$(git rev-list --count "refs/guard/$id2" ^main)
echo "$commits checkpoints of $n files each: .git grew by $(( after - before )) KiB in $packs packs"
git gc -q --prune=now; echo "after git gc: .git $(du -sk .git | cut -f1) KiB (was $before KiB before the checkpoints)"
