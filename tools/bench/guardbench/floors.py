"""Each workload's floor: what the capture the docs prescribe must cost on
this machine, in this run, measured by the floor programs (delete_floor,
create_floor, rewrite_floor; tools/bench/floor_table.sh runs them by hand).

A floor program times, per file, the workload's own calls bare (step 0) and
with the calls a capture cannot do without (the step named below); the
difference, times the files the workload changes, over the bare command's
time, is the workload's floor as a ratio: 1 + files * extra / bare."""
import os
import subprocess
import tempfile

# workload -> the floor steps its files pay: (program, step, files, bytes).
# A checkout deletes and creates; make creates its objects.
STEPS = {
    "rm_rf": [("delete_floor", 10)],
    "tar_x": [("create_floor", 9)],
    "sed_i": [("rewrite_floor", 2)],
    "node_rmw": [("rewrite_floor", 2)],
    "python_rmw": [("rewrite_floor", 2)],
    "git_checkout": [("delete_floor", 10), ("create_floor", 9)],
    "make_j2": [("create_floor", 9)],
}
WHAT = {
    ("delete_floor", 10): "a link into the inbox and an lstat per deleted file",
    ("create_floor", 9): "an lstat per created file",
    ("rewrite_floor", 2): "the old content read into the record per rewritten file",
}
FILES = {"delete_floor": 10000, "create_floor": 10000, "rewrite_floor": 3000}


def _us(program, where, step, files):
    """One run of one step, in microseconds per file, in a fresh directory."""
    work = tempfile.mkdtemp(dir=where, prefix=os.path.basename(program) + ".")
    out = subprocess.run([program, work, str(step), str(files)], capture_output=True, text=True,
                         check=True).stdout
    subprocess.run(["rm", "-rf", work], check=True)
    return float(out.split(":")[1].split()[0])


def measure(tools_dir, where, quick):
    """Per (program, step): {'us', 'bare_us', 'x'}; {} without the programs.
    The bare row and the step's row alternate, the fastest of each kept:
    run one after the other, the later rows met the file system's
    allocator in another state than the first (on a loop ext4, a step at
    0.27x and another at 5.3x its bare row)."""
    out = {}
    runs = 1 if quick else 3
    for program, step in sorted({s for steps in STEPS.values() for s in steps}):
        path = os.path.join(tools_dir, program)
        if not os.access(path, os.X_OK):
            continue
        files = 500 if quick else FILES[program]
        bare = us = None
        for _ in range(runs):
            b = _us(path, where, 0, files)
            u = _us(path, where, step, files)
            bare = b if bare is None else min(bare, b)
            us = u if us is None else min(us, u)
        out["%s:%d" % (program, step)] = {"us": us, "bare_us": bare, "x": us / bare if bare else None}
    return out


def workload_floor(floors, name, files, bare_cmd):
    """The workload's floor as a ratio to its bare command, or None."""
    steps = STEPS.get(name)
    if not steps or not floors or not files or not bare_cmd:
        return None
    extra = 0.0
    for program, step in steps:
        f = floors.get("%s:%d" % (program, step))
        if f is None:
            return None
        extra += max(0.0, f["us"] - f["bare_us"]) * 1e-6
    return 1 + files * extra / bare_cmd


def describe(floors):
    """One line per floor step measured, for the report."""
    lines = []
    for key, f in sorted(floors.items()):
        program, step = key.split(":")
        lines.append("- `%s` step %s (%s): %.1f us per file against %.1f bare (%.2fx)" % (
            program, step, WHAT.get((program, int(step)), ""), f["us"], f["bare_us"], f["x"] or 0))
    return "\n".join(lines)
