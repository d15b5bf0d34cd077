#!/bin/sh
# guard loads libgit2 and libcrypto at their first use (supervisor/git/
# git2_api.h): neither is NEEDED by its binary, a command that writes no git
# object loads neither, and a session's end checkpoint in a git work tree,
# which does, still lands on refs/guard/.
#   git_loaded_at_first_use.sh GUARD_BINARY
set -eu
guard=$(realpath "$1")
status=0
for n in $(readelf -d "$guard" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
  case $n in
    libgit2*|libcrypto*) echo "FAIL  guard's binary needs $n"; status=1 ;;
  esac
done
loaded=$(LD_DEBUG=files "$guard" --version 2>&1 >/dev/null | grep -E 'file=lib(git2|crypto)' || true)
if [ -n "$loaded" ]; then echo "FAIL  guard --version loaded: $loaded"; status=1; fi

work=$(mktemp -d "${TMPDIR:-/tmp}/guard-lazy-git.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/tree"
cd "$work/tree"
export GUARD_HOME="$work/state" XDG_CONFIG_HOME="$work/config" GIT_CONFIG_NOSYSTEM=1 HOME="$work"
unset GUARD_SESSION GUARD_ROOT
git init -q .
echo one > a.txt
git add a.txt
git -c user.name=t -c user.email=t@example.com commit -qm one
"$guard" -q -- sh -c 'echo two > a.txt'
"$guard" sessions >/dev/null  # waits for the deferred seal, which writes the checkpoint
refs=$(git for-each-ref --format='%(refname)' refs/guard/)
if [ -z "$refs" ]; then echo "FAIL  no end checkpoint under refs/guard/"; status=1; fi
if [ "$(git show "$refs:a.txt" 2>/dev/null)" != "two" ]; then echo "FAIL  the checkpoint does not hold the session's a.txt"; status=1; fi
[ $status = 0 ] && echo "PASS  libgit2 and libcrypto loaded at their first use"
exit $status
