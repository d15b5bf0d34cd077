"""The ways of running a workload: bare, under strace, under guard.

Every way runs the same wrapper, which times the command from inside (as
its caller sees it, inside a guard session for guard) into a file outside
the tree: `bash -c 't0=...; CMD; t1=...'`."""
import fcntl
import json
import os
import subprocess
import time

# The calls guard's seccomp filter stops (supervisor/trace/seccomp_filter.cc),
# for strace's -e trace=: strace stops on every open/openat, guard's filter
# only on those with write flags.
TRAPPED = ["open", "openat", "open_by_handle_at", "creat", "openat2", "truncate", "ftruncate",
           "rename", "renameat", "renameat2", "unlink", "unlinkat", "rmdir", "mkdir", "mkdirat",
           "symlink", "symlinkat", "link", "linkat", "chmod", "fchmod", "fchmodat", "fchmodat2",
           "mknod", "mknodat"]


def strace_calls():
    """TRAPPED less what this strace does not know (fchmodat2 is recent)."""
    known = []
    for name in TRAPPED:
        r = subprocess.run(["strace", "-e", "trace=" + name, "-o", "/dev/null", "true"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r.returncode == 0:
            known.append(name)
    return known


def wrap(command, timing_file):
    return ('t0=$(date +%%s%%N); %s; rc=$?; t1=$(date +%%s%%N); echo "$t0 $t1" > %s; exit $rc'
            % (command, timing_file))


def read_stats(path):
    out = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.partition(" ")
            out[k] = int(v)
    return out


def du_bytes(path):
    r = subprocess.run(["du", "-sb", path], capture_output=True, text=True, check=True)
    return int(r.stdout.split()[0])


def wait_for_deferred_seal(guard_home, stats, limit=600):
    """guard returns before its session is sealed (the deferred seal,
    docs/durability.md): waits until the stats file, written at the seal's
    end, is there and no session of guard_home holds its seal's lock."""
    deadline = time.monotonic() + limit
    while not os.path.exists(stats):
        if time.monotonic() > deadline:
            raise SystemExit("run.sh: the deferred seal wrote no stats file in %d s" % limit)
        time.sleep(0.001)
    sessions = os.path.join(guard_home, "sessions")
    for sid in os.listdir(sessions):
        d = os.path.join(sessions, sid)
        if not os.path.exists(os.path.join(d, "sealing")):
            continue
        try:
            fd = os.open(os.path.join(d, "recovery.lock"), os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)  # held by the sealer until the seal is whole
        finally:
            os.close(fd)


def run_timed(argv, cwd, env):
    """Runs argv; returns (exit code, wall seconds, CPU seconds of it and of
    every descendant it waited for: user + system, by wait4)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, cwd=cwd, env=env)
    _pid, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, wall, ru.ru_utime + ru.ru_stime


class Way:
    """name: the column; mode: guard's --mode, None for bare and strace;
    pin: a CPU list for taskset (the whole run on one CPU), or None."""

    def __init__(self, name, ctx, mode=None, argv_prefix=(), pin=None, guard=None):
        self.name = name
        self.ctx = ctx
        self.guard = guard or ctx.guard
        self.mode = mode
        self.argv_prefix = list(argv_prefix)
        self.config_home = ctx.config_home
        self.pin = pin

    def run(self, command, root, scratch, restore=True):
        """Runs command in root; returns its measurements. scratch: a
        directory outside root, for this run's own files."""
        timing = os.path.join(scratch, "timing")
        argv = self.argv_prefix + ["bash", "-c", wrap(command, timing)]
        env = dict(os.environ)
        m = {}
        if self.mode is not None:
            gh = os.path.join(scratch, "guard-home")
            os.mkdir(gh)
            stats = os.path.join(scratch, "stats")
            env.update(GUARD_HOME=gh, GUARD_STATS_FILE=stats, XDG_CONFIG_HOME=self.config_home)
            argv = [self.guard, "--quiet", "--mode", self.mode, "--root", root, "--"] + argv
            home_before = du_bytes(gh)
        if self.pin is not None:
            argv = ["taskset", "-c", self.pin] + argv
        rc, m["wall"], m["cpu"] = run_timed(argv, root, env)
        if rc != 0:
            raise SystemExit("run.sh: %s exited %d: %s" % (self.name, rc, command))
        with open(timing) as f:
            t_start, t_end = (int(x) for x in f.read().split())
        m["cmd"] = (t_end - t_start) / 1e9
        if self.mode is not None:
            # Before the next run, and before undo: the seal after guard
            # returned, timed from guard's exit.
            t0 = time.perf_counter()
            wait_for_deferred_seal(gh, stats)
            m["sealed_after"] = time.perf_counter() - t0
            st = read_stats(stats)
            get = st.get
            # The whole tree's CPU: the front (what wait4 gave: it waits for
            # nobody), guard's supervisor and what it reaped (the command).
            m["cpu"] += sum(get(k, 0) for k in ("user_us", "system_us", "children_user_us",
                                                  "children_system_us")) / 1e6
            m["guard_cpu"] = (get("user_us", 0) + get("system_us", 0)) / 1e6
            m["handback"] = get("handback_ns") / 1e9 if "handback_ns" in st else None
            m["deferred_seal"] = get("deferred_seal_ns") / 1e9 if "deferred_seal_ns" in st else None
            m["deferred_cpu"] = ((get("deferred_user_us", 0) + get("deferred_system_us", 0)) / 1e6
                                 if "deferred_user_us" in st else None)
            m["seal"] = get("seal_ns") / 1e9 if "seal_ns" in st else None
            m["stops"] = get("seccomp_stops", 0) + get("exit_stops", 0) if "seccomp_stops" in st else None
            m["seccomp_stops"] = get("seccomp_stops")
            m["switches"] = (get("voluntary_switches", 0) + get("involuntary_switches", 0)
                             if "voluntary_switches" in st else None)
            m["rss_kb"] = get("maxrss_kb")
            m["files_changed"] = get("files")
            m["stored"] = du_bytes(gh) - home_before
            if restore:
                m.update(self._restore(root, env))
        return m

    def _restore(self, root, env):
        """Times guard undo, then guard replay, of the session just run."""
        g = self.guard
        out = subprocess.run([g, "sessions", "--json", "--root", root], env=env, cwd=root,
                             capture_output=True, text=True, check=True).stdout
        session = json.loads(out)[-1]["id"] if out.strip().startswith("[") else "last"
        m = {}
        for verb in ("undo", "replay"):
            t0 = time.perf_counter()
            r = subprocess.run([g, verb, "--yes", "--session", session, "--root", root], env=env, cwd=root,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            m[verb] = time.perf_counter() - t0
            if r.returncode != 0:
                raise SystemExit("run.sh: guard %s failed (%d): %s" % (verb, r.returncode, r.stderr))
        return m


def split_mode(spec):
    """'auto' -> ('auto', None); 'auto/sync=1s' -> ('auto', '1s'): a mode
    with config.toml's capture.sync_every set for its sessions."""
    mode, _, rest = spec.partition("/")
    if not rest:
        return mode, None
    key, _, value = rest.partition("=")
    if key != "sync" or not value:
        raise SystemExit("run.sh: --modes: '%s' (a mode, or MODE/sync=DURATION)" % spec)
    return mode, value


PINNED = "@1cpu"
# A column run with a --compare binary: "guard-auto@LABEL".


def compared(way):
    """'guard-auto@old' -> ('guard-auto', 'old'); any other way -> (way, None)."""
    if way.endswith(PINNED) or "@" not in way:
        return way, None
    base, _, label = way.rpartition("@")
    return base, label


def pinned_base(way):
    """The bare way a way's ratios are taken against: bare, or bare pinned
    to the same CPU for a pinned way."""
    return "bare" + PINNED if way.endswith(PINNED) else "bare"


def make_ways(ctx, modes, pinned=True, compare=()):
    """bare, strace, guard per mode; with `pinned`, bare and guard `--mode
    auto` (else the first mode) once more with the whole run on CPU 0 (taskset), so that
    the report tells what costs work from what costs waiting for an idle
    CPU to wake."""
    calls = ",".join(strace_calls())
    ways = [Way("bare", ctx),
            Way("strace", ctx, argv_prefix=["strace", "-f", "--seccomp-bpf", "-e", "trace=" + calls,
                                            "-o", "/dev/null"])]
    for spec in modes:
        mode, sync = split_mode(spec)
        w = Way("guard-" + spec, ctx, mode=mode)
        if sync is not None:
            w.config_home = ctx.config_home_with_sync(sync)
        ways.append(w)
    # The same modes with each other binary, in the same iterations as bare
    # and the columns above (session_loop rotates their order).
    for label, guard in compare:
        for spec in modes:
            mode, sync = split_mode(spec)
            w = Way("guard-" + spec + "@" + label, ctx, mode=mode, guard=guard)
            if sync is not None:
                w.config_home = ctx.config_home_with_sync(sync)
            ways.append(w)
    if pinned and modes:
        spec = "auto" if "auto" in modes else modes[0]  # what an agent runs under
        mode, sync = split_mode(spec)
        ways.append(Way("bare" + PINNED, ctx, pin="0"))
        w = Way("guard-" + spec + PINNED, ctx, mode=mode, pin="0")
        if sync is not None:
            w.config_home = ctx.config_home_with_sync(sync)
        ways.append(w)
    return ways, calls
