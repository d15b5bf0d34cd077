#!/usr/bin/env python3
"""System calls per deleted entry of `rm -rf` under guard, per process name.

    tools/bench/delete_calls.py [--files 2000] [--runs 3] [--modes auto,preload] GUARD...

For each guard binary (an older build beside this one, say) and mode, and
bare: a fresh tree of small files (20 directories), then
`perf trace -s -- guard --mode M -q --root T -- rm -rf T/t` (bare: the same
rm without guard). perf trace counts at the kernel's tracepoints, so it
sees the tracer's and the shim's calls alike and stops nothing. Prints
the calls per entry deleted (files and directories) of rm (its own and the
shim's) and of guard's processes (the supervisor's threads and its seal,
deferred or not: a `guard sessions` after the session waits for it, and
its own few hundred calls are counted too), each the median of the runs, and rm's
less bare rm's: what the shim adds to a delete. Runs interleaved (bare,
then each binary in turn, per round). Needs perf and root (or
perf_event_paranoid <= 1)."""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile


def make_tree(root, files):
    t = os.path.join(root, "t")
    for i in range(files):
        d = os.path.join(t, "d%02d" % (i % 20))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "f%06d" % i), "wb") as f:
            f.write(b"x" * (100 + (i * 37) % 3900))
    return t, files + 20 + 1


def per_comm(summary):
    """perf trace -s's text: calls summed per process name."""
    out = {}
    comm = None
    for line in summary.splitlines():
        m = re.match(r"^ (\S.*) \((\d+)\), \d+ events", line)
        if m:
            comm = m.group(1)
            continue
        m = re.match(r"^\s+(\w+)\s+(\d+)\s+\d+\s", line)
        if m and comm is not None:
            out[comm] = out.get(comm, 0) + int(m.group(2))
    return out


def one(guard, mode, files, where):
    root = tempfile.mkdtemp(dir=where)
    try:
        t, entries = make_tree(root, files)
        report = os.path.join(root, "perf.txt")
        argv = ["perf", "trace", "-s", "-o", report, "--"]
        env = dict(os.environ)
        if guard is None:
            argv += ["rm", "-rf", t]
        else:
            gh = os.path.join(root, "gh")
            os.mkdir(gh)
            # No automatic gc after the session (it would run detached).
            cfg = os.path.join(root, "config")
            os.makedirs(os.path.join(cfg, "guard"))
            with open(os.path.join(cfg, "guard", "config.toml"), "w") as f:
                f.write("[retention]\nauto_gc = false\n")
            env.update(GUARD_HOME=gh, XDG_CONFIG_HOME=cfg)
            # `guard sessions` waits for the deferred seal, so that the
            # trace holds the whole session, seal included, in every build.
            argv += ["sh", "-c", '"$0" --mode "$1" -q --root "$2" -- rm -rf "$3" && "$0" sessions --root "$2" >/dev/null',
                     guard, mode, root, t]
        subprocess.run(argv, env=env, check=True, cwd=root)
        with open(report) as f:
            counts = per_comm(f.read())
        return {k: v / entries for k, v in counts.items()}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--files", type=int, default=2000)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--modes", default="auto,preload")
    p.add_argument("--dir", default="/var/tmp", help="where the trees are made")
    p.add_argument("guards", nargs="+")
    a = p.parse_args(argv)
    ways = [("bare", None, None)] + [(g + " " + m, os.path.realpath(g), m)
                                     for g in a.guards for m in a.modes.split(",") if m]
    got = {name: [] for name, _g, _m in ways}
    for _ in range(a.runs):
        for name, guard, mode in ways:
            got[name].append(one(guard, mode, a.files, a.dir))
    bare_rm = statistics.median(r.get("rm", 0) for r in got["bare"])
    print("calls per deleted entry (%d files, 21 directories; medians of %d runs; load %s)"
          % (a.files, a.runs, " ".join(open("/proc/loadavg").read().split()[:3])))
    for name, _g, _m in ways:
        runs = got[name]
        rm = statistics.median(r.get("rm", 0) for r in runs)
        guard = statistics.median(sum(v for k, v in r.items() if k.startswith("guard")) for r in runs)
        print("  %-60s rm %6.2f (shim +%.2f)  guard %6.2f" % (name, rm, rm - bare_rm, guard))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
