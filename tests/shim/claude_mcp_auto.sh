#!/usr/bin/env bash
# The real Claude Code binary under --mode auto: `claude mcp add --scope
# project` rewrites .mcp.json (its temp file by a raw openat, which the
# tracer captures; the rename over .mcp.json through libc, which the shim
# captures), the pre-image is the original byte for byte, and undo puts it
# back (tools/bench/claude_mcp_check.sh checks those). Here also: the
# pre-image came from the shim (its pending names carry "-s<pid>.").
#   claude_mcp_auto.sh GUARD_BINARY
# claude: the one on the PATH, else the one tools/setup.sh installed beside
# the guard binary (<build>/claude-code). Exit 77 (skipped) without one.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
claude="$(command -v claude || true)"
beside="$(dirname "$1")/claude-code/claude"
[[ -n "$claude" || ! -x "$beside" ]] || claude="$beside"
[[ -n "$claude" ]] || { echo "skipped: claude (Claude Code) is not installed"; exit 77; }
out="$(GUARD="$1" GUARD_MODE=auto bash "$here/../../tools/bench/claude_mcp_check.sh" "$claude" 2>&1)"
rc=$?
echo "$out"
[[ $rc -eq 0 ]] || exit 1
if ! grep -Eq '^record carrying the pre-image: .* pending [^ ]+-s[0-9]+\.' <<<"$out"; then
  echo "FAIL  the pre-image of .mcp.json did not come from the shim"
  exit 1
fi
echo "PASS  the pre-image came from the shim"
