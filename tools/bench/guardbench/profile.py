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
(inclusive), NAME.perf-stat.txt, NAME.strace-c.txt, NAME.{perf,strace}.stats
(GUARD_STATS_FILE of each session)."""
import os
import shutil
import subprocess
import sys
import tempfile
import time


def _children(pid):
    kids = []
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            kids += open("/proc/%d/task/%s/children" % (pid, tid)).read().split()
    except OSError:
        pass
    return [int(k) for k in kids]


def _wait_for(what, fn, timeout=60):
    deadline = time.monotonic() + timeout  # a hang guard only
    while time.monotonic() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(0.01)
    raise SystemExit("profile: no %s under guard" % what)


def _back_pid(front):
    """The supervisor, once it has started the command: a profiler that
    follows forks (strace -f) must not meet the command's launch."""
    back = _wait_for("supervisor", lambda: _children(front.pid))[0]
    _wait_for("command", lambda: _children(back))
    return back


def _session(ctx, w, staged, runs_dir, out, attach, tag, mode):
    scratch = tempfile.mkdtemp(dir=runs_dir)
    root = os.path.join(scratch, "tree")
    w.fresh_tree(staged, root)
    gh = os.path.join(scratch, "guard-home")
    os.mkdir(gh)
    os.sync()
    env = dict(os.environ, GUARD_HOME=gh, GUARD_STATS_FILE=os.path.join(out, "%s.%s.stats" % (w.name, tag)),
               XDG_CONFIG_HOME=ctx.config_home)
    front = subprocess.Popen([ctx.guard, "--quiet", "--mode", mode, "--root", root, "--", "bash", "-c",
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
    r = subprocess.run(["perf", "report", "-i", data, "--stdio", "--percent-limit", "0.5",
                        "--children" if children else "--no-children", "--sort", "dso,symbol",
                        "-g", "none"], capture_output=True, text=True)
    with open(path, "w") as f:
        f.write("\n".join(line.rstrip(" -") for line in r.stdout.splitlines()) + "\n")


def run(a, ctx, workloads, staged, runs_dir):
    out = os.path.abspath(a.profile)
    os.makedirs(out, exist_ok=True)
    names = a.workloads or ["rm_rf", "tar_x"]
    # The first of --modes: one mode per profile.
    mode = a.modes[0] if a.modes else "trace"
    for w in workloads:
        if w.name not in names:
            continue
        print("profile: %s" % w.name, file=sys.stderr, flush=True)
        attach, data = _perf(out, w.name)
        _session(ctx, w, staged, runs_dir, out, attach, "perf", mode)
        _report(data, os.path.join(out, w.name + ".perf-self.txt"), children=False)
        _report(data, os.path.join(out, w.name + ".perf-children.txt"), children=True)
        _session(ctx, w, staged, runs_dir, out, _strace(out, w.name), "strace", mode)
    print("profile: outputs in %s (--mode %s)" % (out, mode), file=sys.stderr)
    return 0
