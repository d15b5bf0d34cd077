#!/usr/bin/env bash
# smoke_test.sh GUARD: the benchmark in --quick mode (tiny generated trees,
# one run of each way), then a check that its report has every table, a row
# per workload and every cell filled. Not the timings' values: those are the
# machine's. Skips (77) without root or the tools the workloads run.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
guard="${1:?usage: smoke_test.sh GUARD}"
[[ "$(id -u)" == 0 ]] || { echo "smoke_test: needs root"; exit 77; }
for t in strace node git make cc tar; do
  command -v "$t" >/dev/null || { echo "smoke_test: no $t"; exit 77; }
done
out="$(mktemp -d "${TMPDIR:-/tmp}/guard-bench-smoke.XXXXXX")"
trap 'rm -rf "$out"' EXIT
"$here/run.sh" --quick --guard "$guard" --out "$out/report.md" --json "$out/report.json" 2>"$out/log" ||
  { cat "$out/log"; exit 1; }
PYTHONPATH="$here" /usr/bin/python3 -m guardbench.check_report "$out/report.md" \
  git_checkout sed_i rm_rf tar_x node_rmw python_rmw make_j2 || { cat "$out/report.md"; exit 1; }
echo "smoke_test: report complete"
