"""Paired runs: in each iteration every way runs the workload once, on its
own fresh tree, the order rotating from one iteration to the next so that no
way always runs first (after the previous workload's writeback, say)."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

from guardbench.workloads import count_files


def _cp_a(src, dst):
    t0 = time.perf_counter()
    subprocess.run(["cp", "-a", src, dst], check=True)
    return time.perf_counter() - t0


def run_workload(w, ways, staged, runs_dir, iterations, restore_runs):
    """restore_runs: guard undo and replay are timed in the first this many
    iterations (they take longer than the workload itself)."""
    runs = []
    files = None
    for i in range(iterations):
        order = ways[i % len(ways):] + ways[:i % len(ways)]
        it = {}
        for way in order:
            restore = i < restore_runs and way.pin is None  # a pinned run is timed alone
            scratch = tempfile.mkdtemp(dir=runs_dir)
            root = os.path.join(scratch, "tree")
            t0 = time.perf_counter()
            n = w.fresh_tree(staged, root)
            copy_in = time.perf_counter() - t0
            os.sync()
            m = way.run(w.command, root, scratch, restore)
            m["files_after"] = count_files(root)
            m["files_before"] = n
            files = max(files or 0, n, m["files_after"])
            if way.mode is not None and restore:
                # cp -a of the same files: the tree before (what undo writes
                # back, copied in just above) and after (what replay writes).
                m["cp_before"] = copy_in
                m["cp_after"] = _cp_a(root, os.path.join(scratch, "after"))
            it[way.name] = m
            shutil.rmtree(scratch)
            os.sync()
            print("  %s #%d %-14s %.3f s" % (w.name, i + 1, way.name, m["wall"]), file=sys.stderr, flush=True)
        runs.append(it)
    return {"name": w.name, "label": w.label, "files": files, "runs": runs}
