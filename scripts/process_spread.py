#!/usr/bin/env python3
"""How far the runs of one card, each its own process, stray from each other, per metric: a
Markdown table over the cards of results files, folders or .tar.xz / .tar.gz archives of them.

    python3 scripts/process_spread.py tests/corpus [BENCHMARK:METRIC ...]
    python3 scripts/process_spread.py --cards PATHS... BENCHMARK:METRIC
    python3 scripts/process_spread.py --levels PATHS... BENCHMARK:METRIC...

Paths may also be baseline files (their runs are read; a run given twice is read once). Per metric: the cards with three runs or more, the spread of a card's run medians (sample standard
deviation over their mean; the median over the cards, and the largest) and the largest gap
between two runs of a card (largest over smallest run median). Without metrics, the atomics
metrics whose launches are batched to 1 ms of GPU time per iteration. With --cards, one metric
card by card: each card's mean of its run medians and each run median, against the median of the
cards' means. With --levels, the levels processes land on: for each path (one set of processes,
each run its own process) and metric, the processes and every run median (4 significant digits)
with how many processes read it.
"""
import os
import statistics
import sys

from recorded import documents

ATOMICS = ["atomics/types:f32/distinct", "atomics/contention:k=1", "atomics/types:u64/distinct",
           "atomics/contention:k=4", "atomics/types:f64/distinct", "atomics/add_u32/distinct:ops_per_s"]


def median(doc, key):
    bid, _, name = key.partition(":")
    for b in doc["benchmarks"]:
        if b["id"] == bid:
            for m in b["metrics"]:
                if m["name"] == name:
                    return m["summary"]["median"]
    return None


args = [a for a in sys.argv[1:] if a not in ("--cards", "--levels")]
paths = [a for a in args if ":" not in a]
keys = [a for a in args if ":" in a] or ATOMICS
if "--levels" in sys.argv:
    print("| processes of | metric | processes | run medians (processes) |")
    print("| --- | --- | ---: | --- |")
    for path in paths:
        runs = list(documents(path))
        for key in keys:
            values = [v for d in runs if (v := median(d, key)) is not None]
            counts = {}
            for v in values:
                label = f"{v:.4g}"
                counts[label] = counts.get(label, 0) + 1
            levels = ", ".join(f"{k} ({n})" for k, n in sorted(counts.items(), key=lambda kv: float(kv[0])))
            print(f"| `{os.path.basename(path)}` | `{key}` | {len(values)} | {levels} |")
    sys.exit(0)
docs = [d for p in paths for d in documents(p)]
if "--cards" in sys.argv:
    key = keys[0]
    cards = {}
    for d in sorted(docs, key=lambda d: d["created_unix_s"]):
        v = median(d, key)
        if v is not None:
            runs = cards.setdefault(d["gpu"]["uuid"], {})
            runs.setdefault(d["created_unix_s"], v)
    means = {u: statistics.fmean(r.values()) for u, r in cards.items()}
    mid = statistics.median(means.values())
    pct = lambda v: f"{100 * (v / mid - 1):+.2f} %"
    print(f"| card | runs | `{key}`: card mean against the median card | each run |")
    print("| --- | ---: | ---: | --- |")
    for u in sorted(cards):
        print(f"| {u[:12]} | {len(cards[u])} | {pct(means[u])} | {', '.join(pct(v) for v in cards[u].values())} |")
    sys.exit(0)
print("| metric | cards | spread of a card's runs (median over cards) | largest | largest gap between two runs |")
print("| --- | ---: | ---: | ---: | ---: |")
for key in keys:
    cards = {}
    for d in docs:
        v = median(d, key)
        if v is not None:
            cards.setdefault(d["gpu"]["uuid"], []).append(v)
    runs = [v for v in cards.values() if len(v) >= 3]
    spreads = [100 * statistics.stdev(v) / statistics.fmean(v) for v in runs]
    gap = max(100 * (max(v) / min(v) - 1) for v in runs)
    print(f"| `{key}` | {len(runs)} | {statistics.median(spreads):.2f} % | {max(spreads):.2f} % | {gap:.1f} % |")
