#!/usr/bin/env bash
# guard on its main job: a scripted "agent" edits, renames, deletes and
# rewrites files of a small project with ordinary tools, under guard; then
# guard lists the session it recorded. Runs in a temporary directory with a
# temporary GUARD_HOME, so it touches nothing of yours.
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
echo "== the journal of that session"
"$(dirname "$guard")/tools/guard-journal-dump" "$GUARD_HOME"/sessions/*/journal
