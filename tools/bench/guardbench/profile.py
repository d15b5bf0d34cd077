"""--profile DIR: where guard's supervisor spends its time, per workload.

Two guard sessions per workload, each on a fresh tree, the command held back
by `sleep 2` so that the profilers attach to the supervisor (the back
process, front_process.h) before it starts:
  1. `perf record -g -p SUPERVISOR` and `perf stat -e context-switches,...
     -p SUPERVISOR`;
  2. `strace -c -f -p SUPERVISOR` (the supervisor's own calls, its threads
     included; the command was started before strace attached, so strace
     does not follow it).
Writes, per workload: NAME.perf-self.txt (flat profile), NAME.perf-children.txt
(inclusive), NAME.perf-stat.txt, NAME.strace-c.txt, NAME.stats (GUARD_STATS_FILE)."""
import os
import shutil
import subprocess
import sys
import tempfile
import time


def _back_pid(front, timeout=30):
    path = "/proc/%d/task/%d/children" % (front.pid, front.pid)
    deadline = time.monotonic() + timeout  # a hang guard only
    while time.monotonic() < deadline:
        try:
            kids = open(path).read().split()
        except OSError:
            kids = []
        if kids:
            return int(kids[0])
        time.sleep(0.01)
    raise SystemExit("profile: no supervisor process under guard")


def _session(ctx, w, staged, runs_dir, out, attach):
    scratch = tempfile.mkdtemp(dir=runs_dir)
    root = os.path.join(scratch, "tree")
    w.fresh_tree(staged, root)
    gh = os.path.join(scratch, "guard-home")
    os.mkdir(gh)
    os.sync()
    env = dict(os.environ, GUARD_HOME=gh, GUARD_STATS_FILE=os.path.join(out, w.name + ".stats"),
               XDG_CONFIG_HOME=ctx.config_home)
    front = subprocess.Popen([ctx.guard, "--quiet", "--mode", "trace", "--root", root, "--", "bash", "-c",
                              "sleep 2; " + w.command], cwd=root, env=env)
    tools = attach(_back_pid(front))
    rc = front.wait()
    for t in tools:
        t.wait()
    shutil.rmtree(scratch)
    if rc != 0:
        raise SystemExit("profile: guard exited %d" % rc)


def _perf(out, name):
    data = os.path.join(out, name + ".perf.data")

    def attach(pid):
        return [subprocess.Popen(["perf", "record", "-q", "-g", "-o", data, "-p", str(pid)],
                                 stderr=subprocess.DEVNULL),
                subprocess.Popen(["perf", "stat", "-e", "context-switches,cpu-migrations,task-clock",
                                  "-o", os.path.join(out, name + ".perf-stat.txt"), "-p", str(pid)])]
    return attach, data


def _strace(out, name):
    def attach(pid):
        p = subprocess.Popen(["strace", "-c", "-f", "-o", os.path.join(out, name + ".strace-c.txt"),
                              "-p", str(pid)], stderr=subprocess.DEVNULL)
        time.sleep(0.5)  # strace attaches within the command's `sleep 2`
        return [p]
    return attach


def _report(data, path, children):
    with open(path, "w") as f:
        subprocess.run(["perf", "report", "-i", data, "--stdio", "--percent-limit", "0.5",
                        "--children" if children else "--no-children", "--sort", "symbol",
                        "-g", "none"], stdout=f, stderr=subprocess.DEVNULL)


def run(a, ctx, workloads, staged, runs_dir):
    out = os.path.abspath(a.profile)
    os.makedirs(out, exist_ok=True)
    names = a.workloads or ["rm_rf", "tar_x"]
    for w in workloads:
        if w.name not in names:
            continue
        print("profile: %s" % w.name, file=sys.stderr, flush=True)
        attach, data = _perf(out, w.name)
        _session(ctx, w, staged, runs_dir, out, attach)
        _report(data, os.path.join(out, w.name + ".perf-self.txt"), children=False)
        _report(data, os.path.join(out, w.name + ".perf-children.txt"), children=True)
        _session(ctx, w, staged, runs_dir, out, _strace(out, w.name))
    print("profile: outputs in %s" % out, file=sys.stderr)
    return 0
