#!/usr/bin/env python3
"""Watch mode's start cost: `guard --mode watch -- true` against bare `true`
on a tree (docs/measurements.md, section 6; docs/performance.md). Each pair
runs bare, then guard with an empty store, then guard again with the store
already holding what the first run stored. Wall time of the whole
`guard --`; guard's CPU time (user + sys of the session's supervisor, from
GUARD_STATS_FILE: the supervisor outlives the front process, so
RUSAGE_CHILDREN does not see it) and its `baseline_ns`.

The environment chooses the baseline's ways (GUARD_WATCH_BASELINE: `copy`,
`git`, `clone`, docs/capture.md); the tree's filesystem and whether it is a
git work tree decide what applies. The store is made on the tree's
filesystem (a clone cannot cross filesystems).

Usage: watch_baseline.py GUARD TREE PAIRS   (TREE: a directory of its own;
its GUARD_HOMEs are made and removed beside it, in TREE/../watchbench-homes)
"""
import os, subprocess, sys, time, shutil, statistics
guard = sys.argv[1]; tree = os.path.abspath(sys.argv[2]); pairs = int(sys.argv[3])
homes = os.path.join(os.path.dirname(tree), "watchbench-homes")
stats_path = os.path.join(homes, "stats")

def run(cmd, env):
    t0 = time.monotonic()
    subprocess.run(cmd, cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - t0

def guarded(env):
    # The stats are written after the seal, which may end after the front
    # has returned (deferred seal): wait for this run's file.
    if os.path.exists(stats_path): os.unlink(stats_path)
    wall = run([guard, "--mode", "watch", "-q", "--", "true"], env)
    for _ in range(6000):
        if os.path.exists(stats_path) and "deferred_system_us" in open(stats_path).read(): break
        time.sleep(0.01)
    stats = dict(l.split() for l in open(stats_path))
    cpu = (int(stats["user_us"]) + int(stats["system_us"])) / 1e6
    return wall, cpu, int(stats["baseline_ns"]) / 1e9, stats

rows = []
for i in range(pairs):
    os.makedirs(homes, exist_ok=True)
    home = os.path.join(homes, "home%d" % i)
    shutil.rmtree(home, ignore_errors=True)
    env = dict(os.environ, GUARD_HOME=home, GUARD_STATS_FILE=stats_path)
    env.pop("GUARD_SESSION", None); env.pop("GUARD_MODE", None)
    bw = run(["true"], env)
    gw, gc, gb, stats = guarded(env)
    gw2, gc2, gb2, _ = guarded(env)  # the store holds the content already
    rows.append((bw, gw, gc, gb, gw2, gc2, gb2, int(stats["baseline_files"]), int(stats["baseline_bytes"]),
                 int(stats.get("baseline_cloned", 0)), int(stats.get("baseline_kept", 0))))
    shutil.rmtree(home, ignore_errors=True)
    print("pair %d: bare %.3fs; watch (empty store) %.3fs wall %.3fs cpu, baseline %.3fs; watch (store warm) "
          "%.3fs wall %.3fs cpu, baseline %.3fs; files %d, bytes copied %d, cloned %d, by git id %d"
          % ((i,) + rows[-1]), flush=True)
med = lambda k: statistics.median(r[k] for r in rows)
print("median: bare %.3f s; watch empty store %.3f s wall, %.3f s cpu, baseline %.3f s; warm store %.3f s wall, "
      "%.3f s cpu, baseline %.3f s" % (med(0), med(1), med(2), med(3), med(4), med(5), med(6)))
