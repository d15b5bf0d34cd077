#!/usr/bin/env bash
# The real Claude Code binary under --mode watch (issue 38: the mode a Mac
# has, where no shim reaches its hardened binary): `claude mcp add --scope
# project` rewrites .mcp.json; guard sees the change after it happened,
# with no tracer and no shim. Undo puts the original back byte for byte and
# leaves nothing else; replay gives claude's .mcp.json back byte for byte.
# No network, no model: `mcp add` is local.
#   claude_mcp_watch.sh GUARD_BINARY
# claude: the one on the PATH, else the one tools/setup.sh installed beside
# the guard binary (<build>/claude-code). Exit 77 (skipped) without one.
set -euo pipefail
guard="$(realpath "$1")"
claude="$(command -v claude || true)"
beside="$(dirname "$guard")/claude-code/claude"
[[ -n "$claude" || ! -x "$beside" ]] || claude="$beside"
[[ -n "$claude" ]] || { echo "skipped: claude (Claude Code) is not installed"; exit 77; }

work="$(mktemp -d "${TMPDIR:-/tmp}/guard-claude-watch.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/proj" "$work/home"
export GUARD_HOME="$work/state" HOME="$work/home"
cd "$work/proj"
printf '{\n  "mcpServers": {\n    "existing": {"command": "cat", "args": []}\n  }\n}\n' > .mcp.json
cp .mcp.json "$work/original.json"
fail=0
check() { if eval "$2"; then echo "PASS  $1"; else echo "FAIL  $1"; fail=1; fi; }

"$guard" --mode watch --root "$work/proj" -- "$claude" mcp add --scope project demo -- echo hi
cp .mcp.json "$work/claude.json"
check "claude rewrote .mcp.json (it has the demo server)" "grep -q '\"demo\"' .mcp.json"
session=$("$guard" sessions --json | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["id"])')
"$guard" show --session "$session" | sed 's/^/  show: /'
"$guard" undo --yes --session "$session" 2>&1 | sed 's/^/  undo: /'
check "undo put the original .mcp.json back byte for byte" "cmp -s .mcp.json '$work/original.json'"
check "undo left nothing else in the project" "[[ \$(ls -A | wc -l) == 1 ]]"
"$guard" replay --yes --session "$session" 2>&1 | sed 's/^/  replay: /'
check "replay gave claude's .mcp.json back byte for byte" "cmp -s .mcp.json '$work/claude.json'"
check "replay left nothing else in the project" "[[ \$(ls -A | wc -l) == 1 ]]"
exit $fail
