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
        b = "bare@1cpu" if w.endswith("@1cpu") else "bare"  # a pinned way against pinned bare
        s["ratio"] = median([r[w]["wall"] / r[b]["wall"] for r in runs if w in r and b in r])
        s["cmd_ratio"] = median([r[w]["cmd"] / r[b]["cmd"] for r in runs if w in r and b in r])
        s["cpu_ratio"] = median([r[w]["cpu"] / r[b]["cpu"] for r in runs
                                 if w in r and b in r and r[w].get("cpu") and r[b].get("cpu")])
        s["n"] = len(per)
        out[w] = s
    return out
