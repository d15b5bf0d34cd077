#!/usr/bin/env python3
"""Watch mode as the command sees it (docs/measurements.md, section 6): a
python workload of 3,000 small files written, appended to and deleted,
bare and under `guard --mode watch`, interleaved; the time the workload
measures itself, the whole run, and CPU (user + sys of the process tree).
Usage: watch_command.py GUARD PAIRS (uses /tmp/watchbench)."""
import os, subprocess, sys, time, resource, shutil, statistics
guard = sys.argv[1]; pairs = int(sys.argv[2])
tree = "/tmp/watchbench/cmdtree"
os.makedirs("/tmp/watchbench", exist_ok=True)
WORK = "/tmp/watchbench/work.py"
with open(WORK, "w") as f:
    f.write('import os, time, sys\nt0 = time.monotonic()\nos.makedirs("w", exist_ok=True)\nfor i in range(3000):\n    with open("w/%d" % i, "w") as f: f.write("x" * 4096)\nfor i in range(3000):\n    with open("w/%d" % i, "a") as f: f.write("y" * 100)\nfor i in range(3000):\n    os.unlink("w/%d" % i)\nos.rmdir("w")\nprint("%.3f" % (time.monotonic() - t0))\n')
rows = []
for i in range(pairs):
    for which in ("bare", "watch"):
        shutil.rmtree(tree, ignore_errors=True); os.makedirs(tree)
        home = "/tmp/watchbench/cmdhome"; shutil.rmtree(home, ignore_errors=True)
        env = dict(os.environ, GUARD_HOME=home); env.pop("GUARD_MODE", None); env.pop("GUARD_SESSION", None)
        cmd = ["python3", WORK]
        if which == "watch": cmd = [guard, "--mode", "watch", "-q", "--"] + cmd
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN); t0 = time.monotonic()
        out = subprocess.run(cmd, cwd=tree, env=env, check=True, capture_output=True, text=True).stdout
        t1 = time.monotonic(); r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        rows.append((i, which, float(out.strip()), t1 - t0, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)))
        print(rows[-1], flush=True)
for which in ("bare", "watch"):
    sel = [r for r in rows if r[1] == which]
    print(which, "inside median %.3f s, whole median %.3f s, cpu median %.3f s" % (statistics.median(r[2] for r in sel), statistics.median(r[3] for r in sel), statistics.median(r[4] for r in sel)))
ratios = [rows[2*i+1][2] / rows[2*i][2] for i in range(pairs)]
print("inside ratio per pair:", ["%.2f" % x for x in ratios], "median %.2f" % statistics.median(ratios))
