#!/usr/bin/env python3
"""offcpu.py: where a command waits, from a sched_switch profile.

A profile of CPU samples shows where a command runs; a command that is
slower under guard may instead be waiting (for the disk, a lock, the CPU).
This sums, per thread name, the time between each switch away from the
thread and the next switch back to it, by why it left: the thread state
(R: preempted, still runnable; S/D: it slept), the system call it was in and
the kernel frames just above schedule().

  perf record -a -g -e sched:sched_switch -o sw.data -- CMD
  perf script -i sw.data -F comm,tid,time,event,trace,ip,sym > sw.txt
  tools/bench/offcpu.py sw.txt python3 [--top 12] [--frames 5]

Session 14 found this way that python3's rewrites under guard spent 0.41 s
of 1.4 s blocked in close(2) behind the work saver's writes (notes in
tools/bench/notes/what_dominates.md)."""
import argparse
import collections
import re
import sys


def events(lines):
    head, stack = None, []
    for line in lines:
        if not line.strip():
            if head is not None:
                yield head, stack
            head, stack = None, []
        elif not line[0].isspace():
            head, stack = line.strip(), []
        else:
            parts = line.split()
            stack.append(parts[1] if len(parts) > 1 else "?")
    if head is not None:
        yield head, stack


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("script", help="perf script output (- for stdin)")
    ap.add_argument("comm", help="the thread name to account for")
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--frames", type=int, default=5, help="kernel frames above schedule() to group by")
    a = ap.parse_args()
    f = sys.stdin if a.script == "-" else open(a.script)
    time_re = re.compile(r"(\d+\.\d+):")
    left = {}  # tid -> (time, key)
    total = collections.Counter()
    count = collections.Counter()
    for head, stack in events(f):
        m = time_re.search(head)
        if m is None or "sched_switch" not in head:
            continue
        t = float(m.group(1))
        prev = re.search(r"prev_comm=(.*?) prev_pid=(\d+).*prev_state=(\S+)", head)
        nxt = re.search(r"next_comm=(.*?) next_pid=(\d+)", head)
        if prev and prev.group(1) == a.comm:
            calls = [k for k in stack if k.startswith("__x64_sys_") or k.startswith("__do_sys_")]
            above = [k for k in stack if k not in ("__schedule", "schedule")][: a.frames]
            state = "R" if prev.group(3).startswith("R") else "S/D"
            left[prev.group(2)] = (t, (state, calls[0] if calls else "-", " <- ".join(above)))
        if nxt and nxt.group(1) == a.comm and nxt.group(2) in left:
            t0, key = left.pop(nxt.group(2))
            total[key] += t - t0
            count[key] += 1
    for key, secs in total.most_common(a.top):
        print("%8.3f s %6d  %-3s %-22s %s" % (secs, count[key], key[0], key[1], key[2]))
    print("%8.3f s off-CPU in all, %d switches" % (sum(total.values()), sum(count.values())))


if __name__ == "__main__":
    main()
