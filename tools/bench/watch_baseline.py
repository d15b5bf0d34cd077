#!/usr/bin/env python3
"""Watch mode's start cost: `guard --mode watch -- true` against bare `true`
on a tree (docs/measurements.md, section 6). Each pair runs bare, then guard
with an empty store (every file's content written into it), then guard again
with the store already holding that content (read and hashed only). Wall
time, and CPU time (user + sys of guard's whole process tree, by
RUSAGE_CHILDREN), and guard's own `baseline_ns` from GUARD_STATS_FILE.

Usage: watch_baseline.py GUARD TREE PAIRS   (TREE: a directory of its own;
its GUARD_HOMEs are made and removed under /tmp/watchbench)
"""
import os, subprocess, sys, time, resource, shutil, statistics
guard = sys.argv[1]; tree = sys.argv[2]; pairs = int(sys.argv[3])
def run(cmd, env):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN); t0 = time.monotonic()
    subprocess.run(cmd, cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t1 = time.monotonic(); r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return t1 - t0, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
rows = []
for i in range(pairs):
    os.makedirs("/tmp/watchbench", exist_ok=True)
    home = "/tmp/watchbench/home%d" % i
    shutil.rmtree(home, ignore_errors=True)
    env = dict(os.environ, GUARD_HOME=home, GUARD_STATS_FILE="/tmp/watchbench/stats")
    env.pop("GUARD_SESSION", None); env.pop("GUARD_MODE", None)
    bw, bc = run(["true"], env)
    gw, gc = run([guard, "--mode", "watch", "-q", "--", "true"], env)
    stats = dict(l.split() for l in open("/tmp/watchbench/stats"))
    gw2, gc2 = run([guard, "--mode", "watch", "-q", "--", "true"], env)  # the store holds the content already
    stats2 = dict(l.split() for l in open("/tmp/watchbench/stats"))
    rows.append((bw, bc, gw, gc, int(stats["baseline_ns"]) / 1e9, gw2, gc2, int(stats2["baseline_ns"]) / 1e9, int(stats["baseline_files"]), int(stats["baseline_bytes"])))
    shutil.rmtree(home, ignore_errors=True)
    print("pair %d: bare %.3fs/%.3fs cpu; watch (empty store) %.3fs wall %.3fs cpu, baseline %.3fs; watch (store warm) %.3fs wall %.3fs cpu, baseline %.3fs; files %d bytes %d" % ((i,) + rows[-1]), flush=True)
med = lambda k: statistics.median(r[k] for r in rows)
print("median: bare %.3f s; watch empty store %.3f s wall, %.3f s cpu, baseline %.3f s; warm store %.3f s wall, %.3f s cpu, baseline %.3f s" % (med(0), med(2), med(3), med(4), med(5), med(6), med(7)))
