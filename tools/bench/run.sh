#!/usr/bin/env bash
# run.sh: issue 12's benchmark in one command (tools/bench/README.md).
#   tools/bench/run.sh [--quick] [--runs N] [--workloads a,b] [--modes trace,auto]
#                      [--out docs/performance.md] [--profile DIR] ...
# Needs root (it loop-mounts an ext4 image). Prepared inputs are cached under
# /var/tmp/guard-bench-cache (--cache), so a second run downloads nothing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# Debian's python, not a pyenv shim: the tool's own start-up is not timed,
# but it should not depend on which interpreter a shell happens to find.
py=/usr/bin/python3
[[ -x "$py" ]] || py="$(command -v python3)"
PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" exec "$py" -m guardbench "$@"
