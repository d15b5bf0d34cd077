"""tools/bench/run.sh: prepares the inputs, runs every workload every way,
writes the report (and the raw results as JSON beside it)."""
import json
import os
import sys

from guardbench import floors, inputs, machine, options, pretouch, report, scaling, ways
from guardbench.scratch_fs import ScratchFs
from guardbench.session_loop import run_workload
from guardbench.workloads import all_workloads


class Context:
    def __init__(self, guard, config_home):
        self.guard = guard
        self.config_home = config_home

    def config_home_with_sync(self, sync):
        """A config home beside the common one whose config.toml also sets
        capture.sync_every (a MODE/sync=DURATION column of --modes)."""
        where = self.config_home + "-sync-" + sync
        if not os.path.isdir(where):
            _write_config(where, '[capture]\nsync_every = "%s"\n' % sync)
        return where


def _write_config(where, extra=""):
    # No automatic gc after a session: it would run detached into the next one.
    d = os.path.join(where, "guard")
    os.makedirs(d)
    with open(os.path.join(d, "config.toml"), "w") as f:
        f.write("[retention]\nauto_gc = false\n" + extra)
    return where


def _out_paths(a):
    out = a.out or (None if a.quick else os.path.join(options.REPO_ROOT, "docs", "performance.md"))
    js = a.json or (os.path.splitext(out)[0] + ".json" if out else None)
    return out, js


def _save_partial(res, a):
    """The results so far, so that an interrupted run still leaves them
    (render them with --from-json)."""
    _out, js = _out_paths(a)
    if js:
        with open(js + ".partial", "w") as f:
            json.dump(res, f, indent=1)


def _emit(res, a):
    notes = open(a.notes).read() if a.notes else None
    md = report.render(res, notes)
    out, js = _out_paths(a)
    if js and not a.from_json:
        with open(js, "w") as f:
            json.dump(res, f, indent=1)
        if os.path.exists(js + ".partial"):
            os.unlink(js + ".partial")
    if out:
        with open(out, "w") as f:
            f.write(md)
        print("wrote %s" % out, file=sys.stderr)
    else:
        sys.stdout.write(md)


def main(argv):
    a = options.parse(argv)
    if a.from_json:
        with open(a.from_json) as f:
            _emit(json.load(f), a)
        return 0
    if os.geteuid() != 0:
        raise SystemExit("run.sh: needs root (it loop-mounts an ext4 image)")
    if not os.access(a.guard, os.X_OK):
        raise SystemExit("run.sh: no guard binary at %s (build first, or --guard)" % a.guard)
    res = {"machine": machine.describe(a.guard, options.REPO_ROOT, argv), "runs": a.runs, "modes": a.modes,
           "restore_runs": a.restore_runs, "scaling_runs": a.scaling_runs,
           "quick": a.quick, "workloads": [], "scaling": []}
    cached = None if a.quick else inputs.prepare_full(a.cache)
    if not a.quick and not a.no_pretouch and not a.profile:
        touched, secs = pretouch.touch()
        res["pretouch"] = {"bytes": touched, "seconds": round(secs, 1)}
        print("pre-touched %.1f GiB of memory in %.1f s" % (touched / 2**30, secs), file=sys.stderr, flush=True)
    with ScratchFs(a.image_size, allow_plain_dir=a.quick) as fs:
        res["fs"] = fs.describe()
        base = os.path.join(fs.mnt, "inputs")
        os.makedirs(base)
        staged = inputs.prepare_quick(base, a.quick_scale) if a.quick else inputs.stage(cached, base)
        runs_dir = os.path.join(fs.mnt, "runs")
        os.makedirs(runs_dir)
        ctx = Context(a.guard, _write_config(os.path.join(fs.mnt, "config")))
        way_list, calls = ways.make_ways(ctx, a.modes, pinned=not a.no_pinned, compare=a.compare)
        res["strace_calls"] = calls
        if a.compare:
            res["compare"] = [{"label": label, "guard": machine.version_of(guard),
                               "ways": [w.name for w in way_list if ways.compared(w.name)[1] == label]}
                              for label, guard in a.compare]
        res["pinned_ways"] = [w.name for w in way_list if w.pin is not None]
        if not a.no_floors:
            # The floor programs on the same filesystem, before the workloads.
            tools = os.path.join(os.path.dirname(a.guard), "tools")
            res["floors"] = floors.measure(tools, runs_dir, a.quick)
            print("floors: %s" % res["floors"], file=sys.stderr, flush=True)
        if a.profile:
            from guardbench import profile
            return profile.run(a, ctx, all_workloads(staged, a.quick, a.quick_scale), staged, runs_dir)
        for w in all_workloads(staged, a.quick, a.quick_scale):
            if a.workloads and w.name not in a.workloads:
                continue
            print("%s: %s" % (w.name, w.command), file=sys.stderr, flush=True)
            res["workloads"].append(run_workload(w, way_list, staged, runs_dir, a.runs, a.restore_runs))
            res["load_end"] = machine.load_now()
            _save_partial(res, a)
        if not a.no_scaling:
            for n in scaling.sizes(a.quick, a.scaling_sizes):
                w = scaling.OneDirectory(n)
                print("%s: %s" % (w.name, w.command), file=sys.stderr, flush=True)
                res["scaling"].append(run_workload(w, way_list, staged, runs_dir, a.scaling_runs, 0))
                res["load_end"] = machine.load_now()
                _save_partial(res, a)
    res["load_end"] = machine.load_now()
    _emit(res, a)
    return 0
