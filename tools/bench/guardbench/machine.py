"""What the report says about the machine, the build and the run."""
import datetime
import os
import subprocess


def _out(argv, cwd=None):
    r = subprocess.run(argv, capture_output=True, text=True, cwd=cwd)
    return r.stdout.strip() if r.returncode == 0 else "?"


def describe(guard, repo, argv):
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    dirty = _out(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo)
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": _out(["git", "rev-parse", "--short", "HEAD"], cwd=repo) + (" (with local changes)" if dirty else ""),
        "guard": _out([guard, "--version"]),
        "nproc": _out(["nproc"]),
        "cpu": cpu,
        "kernel": _out(["uname", "-r"]),
        "memory": _out(["free", "-h"]).split("\n")[1].split()[1] if _out(["free", "-h"]) != "?" else "?",
        "root_fs": _out(["findmnt", "-no", "SOURCE,FSTYPE,OPTIONS", "/"]),
        "load_start": open("/proc/loadavg").read().split()[:3],
        "command": "tools/bench/run.sh " + " ".join(argv),
        "tools": {t: _out([t, "--version"]).split("\n")[0] for t in ("strace", "git", "node", "tar", "make")},
    }


def version_of(guard):
    """What `guard --version` says (its commit), for a --compare binary."""
    return _out([guard, "--version"])


def load_now():
    return open("/proc/loadavg").read().split()[:3]
