#!/usr/bin/env bash
# claude_mcp_check.sh: guard against the real Claude Code binary, no network.
#
#   claude_mcp_check.sh CLAUDE_BINARY
#
# In a temporary project holding a .mcp.json, runs
#   guard --root PROJ -- CLAUDE mcp add --scope project demo -- echo hi
# with a temporary GUARD_HOME and HOME, then checks that
#   1. claude rewrote .mcp.json;
#   2. the journal has an operation on .mcp.json whose pre-image (before, or
#      before2 for a rename onto it) names a blob, directly or as a pending
#      blob that a kBlobResolved record maps to a key;
#   3. that blob, read from store/objects/XX/<key> (raw) or <key>.zst, is
#      byte for byte the original .mcp.json, and its XXH3-128 is its key;
#   4. if the build has `guard undo`, undoing the session puts the original
#      .mcp.json back.
# Prints the journal and the verdicts. Exit status 0 only if all pass.
#
# Environment: GUARD (default build/guard of this checkout), KEEP=1 keeps the
# temporary directory.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
GUARD="$(realpath "${GUARD:-$here/../../build/guard}")"
CLAUDE="$(realpath "${1:?usage: claude_mcp_check.sh CLAUDE_BINARY}")"
dump="$(dirname "$GUARD")/tools/guard-journal-dump"
[[ -x "$dump" ]] || dump="$(dirname "$GUARD")/guard-journal-dump"
[[ -x "$GUARD" && -x "$dump" && -x "$CLAUDE" ]] || { echo "need guard, guard-journal-dump and claude" >&2; exit 2; }

work="$(mktemp -d "${TMPDIR:-/tmp}/guard-claude-check.XXXXXX")"
[[ "${KEEP:-0}" == 1 ]] && trap 'echo "kept: $work" >&2' EXIT || trap 'rm -rf "$work"' EXIT
mkdir -p "$work/proj" "$work/home"
export GUARD_HOME="$work/state"
cd "$work/proj"
cat > .mcp.json <<'EOF'
{
  "mcpServers": {
    "existing": {"command": "cat", "args": []}
  },
  "note": "original content for the guard check"
}
EOF
cp .mcp.json "$work/original.json"
fail=0
check() { if eval "$2"; then echo "PASS  $1"; else echo "FAIL  $1"; fail=1; fi; }

echo "claude: $CLAUDE"
echo "  $(file -b "$CLAUDE" | cut -c1-160)"
echo "  version $("$CLAUDE" --version 2>/dev/null || echo '?')"
echo "guard:  $GUARD"
echo
HOME="$work/home" GUARD_STATS_FILE="$work/stats" \
  "$GUARD" --root "$work/proj" -- "$CLAUDE" mcp add --scope project demo -- echo hi
# guard returns before the rest of its seal (docs/durability.md, "deferred
# seal"): the pending blobs' kBlobResolved records and the stats file come
# after. Any command that reads sessions waits for it first.
"$GUARD" sessions --root "$work/proj" > /dev/null
echo "stats: $(tr '\n' ' ' < "$work/stats")"
journal=$(ls "$GUARD_HOME"/sessions/*/journal)
"$dump" "$journal" > "$work/journal.txt"
echo
echo "== journal records under the root (the rest are outside it, recorded by name only):"
awk '$2 != "outcome" && (/ flags=0 / || $2 == "blob-resolved" || $2 == "final" || $2 == "session-end")' "$work/journal.txt"
echo "== syscalls of all operation records, by count:"
awk '$2 !~ /^(outcome|final|blob-resolved|session-end)$/ {for (f = 4; f < NF; f++) if ($f ~ /^flags=/) { if ($(f + 1) ~ /=/) break; n[$(f + 1) " " $2 ($f == "flags=0" ? " in-root" : " outside-root")]++; break }}
     END {for (k in n) printf "  %4d %s\n", n[k], k}' "$work/journal.txt" | sort -k1,1nr
echo

check ".mcp.json was rewritten by claude (now has the demo server)" \
  "! cmp -s .mcp.json '$work/original.json' && grep -q '\"demo\"' .mcp.json"

# The record that replaced .mcp.json: a rename onto it (pre-image in before2)
# or a write/unlink of it (pre-image in before).
line=$(grep -E "(path2=\.mcp\.json before=.* before2=\[regular [0-7]+ [0-9]+ (blob|pending) )|( path=\.mcp\.json before=\[regular [0-7]+ [0-9]+ (blob|pending) )" "$work/journal.txt" | head -1 || true)
echo "record carrying the pre-image: ${line:-none}"
ref=""
if [[ "$line" == *" path2=.mcp.json "* ]]; then ref=$(sed -E 's/.*before2=\[[^]]* (blob|pending) ([^] ]+)\].*/\1 \2/' <<<"$line")
elif [[ -n "$line" ]]; then ref=$(sed -E 's/.*before=\[[^]]* (blob|pending) ([^] ]+)\].*/\1 \2/' <<<"$line"); fi
key=""
if [[ "$ref" == pending* ]]; then
  name=${ref#pending }
  key=$(awk -v n="$name" '$2 == "blob-resolved" && $(NF - 2) == n {print $NF}' "$work/journal.txt")
  echo "pending blob $name resolved to key ${key:-<no kBlobResolved record>}"
elif [[ "$ref" == blob* ]]; then key=${ref#blob }; fi
check "journal names a pre-image blob for .mcp.json" "[[ -n '$key' ]]"

obj="$GUARD_HOME/store/objects/${key:0:2}/$key"
if [[ -n "$key" && -f "$obj" ]]; then cp "$obj" "$work/blob"
elif [[ -n "$key" && -f "$obj.zst" ]]; then zstd -q -dc "$obj.zst" > "$work/blob"
else : > "$work/blob.missing"; fi
check "the blob is in the store ($( [[ -f $obj ]] && echo raw || echo zst))" "[[ ! -e '$work/blob.missing' ]]"
check "the blob is byte for byte the original .mcp.json" "cmp -s '$work/blob' '$work/original.json'"
if command -v xxh128sum >/dev/null; then
  check "XXH3-128 of the blob is its key" "[[ \"\$(xxh128sum < '$work/blob' | cut -d' ' -f1)\" == '$key' ]]"
fi

has_sub() { "$GUARD" --help 2>&1 | awk -v c="$1" '/^Subcommands:/{s=1} s && $1==c{f=1} END{exit !f}'; }
session=$(basename "$(dirname "$journal")")
if has_sub undo; then
  echo
  if has_sub show; then "$GUARD" show --session "$session" 2>&1 | grep -v 'outside root' | sed 's/^/  show: /' || true; fi
  "$GUARD" undo --session "$session" --yes 2>&1 | sed 's/^/  undo: /'
  check "guard undo put the original .mcp.json back" "cmp -s .mcp.json '$work/original.json'"
  check "guard undo left no temporary file behind" "[[ \$(ls -A | wc -l) == 1 ]]"
fi
exit $fail
