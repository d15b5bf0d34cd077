"""Medians of the runs and paired ratios against bare."""
import statistics


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summarize(runs, ways):
    """runs: one dict per iteration, way name -> measurements. Returns way
    name -> {key: median, 'ratio': median of wall/bare wall of the same
    iteration, 'cmd_ratio': the same for the command alone}."""
    out = {}
    for w in ways:
        per = [r[w] for r in runs if w in r]
        keys = set().union(*(p.keys() for p in per)) if per else set()
        s = {k: median([p.get(k) for p in per]) for k in keys}
        s["ratio"] = median([r[w]["wall"] / r["bare"]["wall"] for r in runs if w in r and "bare" in r])
        s["cmd_ratio"] = median([r[w]["cmd"] / r["bare"]["cmd"] for r in runs if w in r and "bare" in r])
        s["n"] = len(per)
        out[w] = s
    return out
