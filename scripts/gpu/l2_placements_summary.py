"""Summary of scripts/gpu/l2-placements.sh: spread between processes of every L2 metric with
one copy of the footprints and with the default copies, and the same over the default runs."""
import glob, os, statistics, sys

from results_io import load, medians

R = sys.argv[1]
print(open(os.path.join(R, "card.txt")).read().strip())


def spread(pattern):
    runs = [medians(r) for r in (load(f) for f in sorted(glob.glob(os.path.join(R, pattern)))) if r]
    if len(runs) < 2:
        return len(runs), {}
    keys = sorted(set.intersection(*[set(r) for r in runs]))
    out = {}
    for k in keys:
        vals = [r[k] for r in runs]
        mean = statistics.mean(vals)
        if mean:
            out[k] = (statistics.stdev(vals) / abs(mean) * 100, mean)
    return len(runs), out


n1, one = spread("l2-p1-*.json")
nd, dflt = spread("l2-pd-*.json")
nr, runs = spread("run-*.json")
print(f"\nsd between processes, % of mean (one copy: {n1} processes, copies: {nd}, default runs: {nr})")
print(f"{'metric':48s} {'one copy':>9s} {'copies':>9s} {'runs':>9s} {'mean (copies)':>14s}")
for k in sorted(set(one) | set(dflt)):
    if not k.startswith("l2_bandwidth/"):
        continue
    a = one.get(k, (float("nan"), 0))[0]
    b, m = dflt.get(k, (float("nan"), 0))
    c = runs.get(k, (float("nan"), 0))[0]
    print(f"{k:48s} {a:8.2f}% {b:8.2f}% {c:8.2f}% {m:14.1f}")
