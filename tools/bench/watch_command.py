#!/usr/bin/env python3
"""Watch mode as the command sees it (docs/measurements.md, section 6;
docs/performance.md, "Watch mode's cost"), bare and under
`guard --mode watch`, interleaved pairs, in one run:

- the time the workload measures itself (inside), and the whole run;
- guard's CPU time (user + sys of the supervisor, which does all the
  saving: GUARD_STATS_FILE);
- the lag from a file's last write (its mtime) to its change recorded with
  its post-image (GUARD_POST_IMAGE_LAG_FILE): median, 95th percentile, max.

Workloads: `python` (3,000 files of 4 KiB written, appended to, deleted)
and `make` (a generated C project of 60 files, `make -j2`).

Usage: watch_command.py GUARD PAIRS [WORKLOAD...]   (uses /tmp/watchbench)"""
import os, subprocess, sys, time, shutil, statistics
guard = sys.argv[1]; pairs = int(sys.argv[2]); workloads = sys.argv[3:] or ["python", "make"]
base = "/tmp/watchbench"; tree = base + "/cmdtree"; home = base + "/cmdhome"
stats_path = base + "/cmdstats"; lag_path = base + "/cmdlag"
os.makedirs(base, exist_ok=True)
WORK = base + "/work.py"
with open(WORK, "w") as f:
    f.write('import os, time, sys\nt0 = time.monotonic()\nos.makedirs("w", exist_ok=True)\nfor i in range(3000):\n    with open("w/%d" % i, "w") as f: f.write("x" * 4096)\nfor i in range(3000):\n    with open("w/%d" % i, "a") as f: f.write("y" * 100)\nfor i in range(3000):\n    os.unlink("w/%d" % i)\nos.rmdir("w")\nprint("%.3f" % (time.monotonic() - t0))\n')

def prepare(workload):
    shutil.rmtree(tree, ignore_errors=True); os.makedirs(tree)
    if workload == "python":
        return ["python3", WORK]
    for i in range(60):
        with open("%s/f%d.c" % (tree, i), "w") as f:
            f.write("".join("int f%d_%d(int x) { return x * %d + %d; }\n" % (i, j, j, i) for j in range(200)))
    with open(tree + "/main.c", "w") as f:
        f.write("int main(void) { return 0; }\n")
    objs = " ".join("f%d.o" % i for i in range(60)) + " main.o"
    with open(tree + "/Makefile", "w") as f:
        f.write("prog: %s\n\tcc -o $@ $^\n%%.o: %%.c\n\tcc -O1 -c -o $@ $<\n" % objs)
    return ["sh", "-c", "t0=$(date +%s.%N); make -s -j2 >/dev/null; t1=$(date +%s.%N); echo \"$t1 - $t0\" | bc"]

def one(workload, way):
    cmd = prepare(workload)
    shutil.rmtree(home, ignore_errors=True)
    for p in (stats_path, lag_path):
        if os.path.exists(p): os.unlink(p)
    env = dict(os.environ, GUARD_HOME=home, GUARD_STATS_FILE=stats_path, GUARD_POST_IMAGE_LAG_FILE=lag_path)
    env.pop("GUARD_MODE", None); env.pop("GUARD_SESSION", None)
    if way == "watch": cmd = [guard, "--mode", "watch", "-q", "--"] + cmd
    t0 = time.monotonic()
    out = subprocess.run(cmd, cwd=tree, env=env, check=True, capture_output=True, text=True).stdout
    whole = time.monotonic() - t0
    cpu, lags = 0.0, []
    if way == "watch":
        for _ in range(6000):
            if os.path.exists(stats_path) and "deferred_system_us" in open(stats_path).read(): break
            time.sleep(0.01)
        stats = dict(l.split() for l in open(stats_path))
        cpu = (int(stats["user_us"]) + int(stats["system_us"])) / 1e6
        if os.path.exists(lag_path):
            for l in open(lag_path):
                w = l.split()
                if len(w) >= 2 and w[0] == "lag_us" and w[1].lstrip("-").isdigit(): lags.append(int(w[1]) / 1000.0)
    return float(out.strip().splitlines()[-1]), whole, cpu, lags

for workload in workloads:
    rows = []
    for i in range(pairs):
        order = ("bare", "watch") if i % 2 == 0 else ("watch", "bare")
        got = {way: one(workload, way) for way in order}
        b, w = got["bare"], got["watch"]
        lags = sorted(w[3])
        p = lambda q: lags[min(len(lags) - 1, int(q * len(lags)))] if lags else float("nan")
        rows.append((b[0], w[0], b[1], w[1], w[2], p(0.5), p(0.95), lags[-1] if lags else float("nan"), len(lags)))
        print("%s pair %d: inside bare %.3f s watch %.3f s (%.2fx); whole bare %.3f s watch %.3f s; guard cpu %.3f s; "
              "lag ms median %.1f p95 %.1f max %.1f over %d changes" % ((workload, i, b[0], w[0], w[0] / b[0], b[1], w[1], w[2]) + rows[-1][5:]), flush=True)
    med = lambda k: statistics.median(r[k] for r in rows)
    ratios = sorted(r[1] / r[0] for r in rows)
    print("%s median of %d pairs: inside ratio %.2fx (pairs %s), whole %.3f s vs %.3f s bare, guard cpu %.3f s, lag ms median %.1f p95 %.1f; %s"
          % (workload, pairs, statistics.median(ratios), " ".join("%.2f" % x for x in ratios), med(3), med(2), med(4), med(5), med(6),
             os.popen("uptime").read().strip()), flush=True)
