#!/usr/bin/env bash
# guard on its main job: a scripted "agent" edits, renames, deletes and
# rewrites files of a small project with ordinary tools, under guard. Runs in a temporary directory with a
# temporary GUARD_HOME, so it touches nothing of yours. Then it shows the
# session, its diff, undoes it and replays it.
set -euo pipefail
guard="$(cd "$(dirname "$0")/.." && pwd)/build/guard"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GUARD_HOME="$work/state"
mkdir -p "$work/project/src" && cd "$work/project"
git init -q . && printf 'def main():\n    print("hello")\n' > src/app.py && echo "SECRET=1" > .env
git add -A && git -c user.email=demo@example.com -c user.name=demo commit -qm init

echo "== running a scripted agent under guard"
"$guard" -- bash -c '
  sed -i "s/hello/hello, world/" src/app.py
  python3 -c "open(\"src/util.py\", \"w\").write(\"X = 1\\n\")"
  mv .env .env.bak && rm .env.bak
  node -e "require(\"fs\").writeFileSync(\"README\", \"written by node\\n\")"
  mkdir -p build && echo artifact > build/out.bin && rm -rf build
'
echo "== guard sessions"
"$guard" sessions
echo "== guard show"
"$guard" show
echo "== guard diff"
"$guard" diff
echo "== guard undo --yes: back to the tree from before the session"
"$guard" undo --yes
git status --short --untracked-files=all
[ -z "$(git status --porcelain --untracked-files=all)" ] && [ "$(cat .env)" = "SECRET=1" ] &&
  echo "demo: the tree is exactly as before the session (.env back too)"
echo "== guard replay --yes --session last~1: the session's work back again"
"$guard" replay --yes --session last~1
cat src/app.py README
