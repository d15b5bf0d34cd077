#!/usr/bin/env python3
"""How long `guard -- CMD` takes to start CMD, apart from its seal.

    tools/bench/session_start.py [--guard build/guard] [--runs 50] [--modes auto,trace] [--home DIR]

Each run: the time from just before guard is started to the first
instruction of the command (`date +%s%N`, CLOCK_REALTIME, against the same
clock read here), less the same for `date` started bare; then the time
until guard returned (the command's status handed back) and its deferred
seal (GUARD_STATS_FILE's deferred_seal_ns), waited for before the next run.
Runs interleave bare and each mode. Prints medians and the quartiles, with
the load average (the machine is shared: read figures beside the load).
"""
import argparse
import fcntl
import os
import statistics
import subprocess
import tempfile
import time


def wait_for_seal(home, stats):
    while not os.path.exists(stats):
        time.sleep(0.0005)
    sessions = os.path.join(home, "sessions")
    for sid in os.listdir(sessions):
        lock = os.path.join(sessions, sid, "recovery.lock")
        if os.path.exists(os.path.join(sessions, sid, "sealing")) and os.path.exists(lock):
            fd = os.open(lock, os.O_RDONLY)
            fcntl.flock(fd, fcntl.LOCK_SH)
            os.close(fd)


def one(argv, env, cwd):
    t0 = time.time_ns()
    out = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, check=True).stdout
    t1 = time.time_ns()
    return int(out.split()[-1]) - t0, t1 - t0


def q(xs):
    xs = sorted(xs)
    n = len(xs)
    return "median %.2f ms (quartiles %.2f-%.2f)" % (statistics.median(xs) / 1e6, xs[n // 4] / 1e6,
                                                      xs[(3 * n) // 4] / 1e6)


def main():
    p = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--guard", default=os.path.join(here, "..", "..", "build", "guard"))
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--modes", default="auto,trace")
    p.add_argument("--home", default=None, help="where GUARD_HOME and the root are made (default: a temp dir)")
    p.add_argument("--git", action="store_true", help="the root is a git work tree with one commit")
    a = p.parse_args()
    a.guard = os.path.abspath(a.guard)
    base = tempfile.mkdtemp(dir=a.home, prefix="guard-start.")
    root = os.path.join(base, "root")
    os.mkdir(root)
    if a.git:
        subprocess.run("git init -q . && echo a > a && git add a && git -c user.name=b -c user.email=b@b "
                       "commit -qm a", shell=True, cwd=root, check=True)
    date = "/bin/date" if os.path.exists("/bin/date") else "date"
    cmd = [date, "+%s%N"]
    modes = [m for m in a.modes.split(",") if m]
    res = {m: {"start": [], "returned": [], "seal": []} for m in modes}
    bare = {"start": [], "returned": []}
    print("load before: %s" % open("/proc/loadavg").read().strip())
    for i in range(a.runs):
        s, r = one(cmd, dict(os.environ), root)
        bare["start"].append(s)
        bare["returned"].append(r)
        for m in modes:
            home = os.path.join(base, "home-%s-%d" % (m, i))
            stats = os.path.join(base, "stats-%s-%d" % (m, i))
            env = dict(os.environ, GUARD_HOME=home, GUARD_STATS_FILE=stats,
                       XDG_CONFIG_HOME=os.path.join(base, "config"))
            s, r = one([a.guard, "-q", "--mode", m, "--root", root, "--"] + cmd, env, root)
            wait_for_seal(home, stats)
            st = dict(line.split() for line in open(stats))
            res[m]["start"].append(s)
            res[m]["returned"].append(r)
            res[m]["seal"].append(int(st.get("deferred_seal_ns", 0)))
    print("load after: %s" % open("/proc/loadavg").read().strip())
    print("bare date: to its first instruction %s; returned %s" % (q(bare["start"]), q(bare["returned"])))
    for m in modes:
        start = [g - b for g, b in zip(res[m]["start"], bare["start"])]
        ret = [g - b for g, b in zip(res[m]["returned"], bare["returned"])]
        print("--mode %s: start (guard's part, paired) %s; returned (guard's part) %s; deferred seal %s" % (
            m, q(start), q(ret), q(res[m]["seal"])))
    subprocess.run(["rm", "-rf", base])


if __name__ == "__main__":
    main()
