"""Command-line options of tools/bench/run.sh."""
import argparse
import os

PINNED_LABEL = "1cpu"  # ways.PINNED without its "@"
REPO_ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def parse(argv):
    p = argparse.ArgumentParser(prog="tools/bench/run.sh", description=__doc__)
    p.add_argument("--quick", action="store_true",
                   help="smoke test: tiny generated trees, 1 run, nothing downloaded")
    p.add_argument("--runs", type=int, default=None, help="paired runs per workload (default 5; --quick: 1)")
    p.add_argument("--workloads", default="", help="comma-separated names (default: all)")
    p.add_argument("--modes", default="trace,auto", help="guard modes to run, comma-separated (default: trace,auto); MODE/sync=DURATION "
                        "(auto/sync=1s) runs MODE with config.toml's capture.sync_every set")
    p.add_argument("--restore-runs", type=int, default=None,
                   help="time guard undo/replay in the first N runs only (default: every run)")
    p.add_argument("--scaling-runs", type=int, default=None, help="runs of the files-per-directory rows (default: --runs)")
    p.add_argument("--no-scaling", action="store_true", help="skip the files-per-directory rows")
    p.add_argument("--no-pinned", action="store_true",
                   help="skip the runs of bare and the first mode pinned to one CPU (taskset -c 0)")
    p.add_argument("--no-floors", action="store_true",
                   help="skip the floor programs (build/tools/{delete,create,rewrite}_floor)")
    p.add_argument("--guard", default=os.path.join(REPO_ROOT, "build", "guard"), help="guard binary")
    p.add_argument("--compare", action="append", default=[], metavar="[LABEL=]GUARD",
                   help="another guard binary (an older build; repeatable): every --modes column runs with it "
                        "too, as MODE@LABEL (default label: old, old2, ...), interleaved with the others in "
                        "each iteration")
    p.add_argument("--quick-scale", type=int, default=1, metavar="K",
                   help="--quick: K times the generated files and the read-modify-writes (default 1)")
    p.add_argument("--scaling-sizes", default=None,
                   help="files of the files-per-directory rows, comma-separated (default 1000,10000,100000; "
                        "--quick: 100,1000)")
    p.add_argument("--out", default=None, help="markdown report (default: docs/performance.md; --quick: stdout)")
    p.add_argument("--json", default=None, help="raw results as JSON (default: next to --out, .json)")
    p.add_argument("--from-json", default=None, help="only render a report from an earlier run's JSON")
    p.add_argument("--notes", default=None, help="markdown file put in the report as 'What dominates'")
    p.add_argument("--cache", default="/var/tmp/guard-bench-cache", help="where prepared inputs are kept")
    p.add_argument("--image-size", default="12G", help="size of the sparse ext4 image")
    p.add_argument("--no-pretouch", action="store_true",
                   help="do not fault in the machine's free memory before the runs (guardbench/pretouch.py; "
                        "--quick never does)")
    p.add_argument("--profile", default=None, metavar="DIR",
                   help="instead of timing: profile guard's supervisor on the workloads, outputs in DIR")
    a = p.parse_args(argv)
    if a.runs is None:
        a.runs = 1 if a.quick else 5
    a.restore_runs = a.runs if a.restore_runs is None else a.restore_runs
    a.scaling_runs = a.runs if a.scaling_runs is None else a.scaling_runs
    a.workloads = [w for w in a.workloads.split(",") if w]
    a.modes = [m for m in a.modes.split(",") if m]
    a.guard = os.path.realpath(a.guard)
    compare = []
    for i, spec in enumerate(a.compare):
        label, sep, path = spec.partition("=")
        if not sep:
            label, path = "old" if i == 0 else "old%d" % (i + 1), spec
        if not label or "@" in label or "/" in label or label == PINNED_LABEL:
            raise SystemExit("run.sh: --compare: '%s' (a label of letters and digits, then =)" % spec)
        compare.append((label, os.path.realpath(path)))
    a.compare = compare
    if a.quick_scale < 1:
        raise SystemExit("run.sh: --quick-scale: a whole number from 1")
    a.scaling_sizes = [int(n) for n in a.scaling_sizes.split(",") if n] if a.scaling_sizes else None
    a.argv = argv
    return a
