#!/usr/bin/env python3
"""How far the runs of one card, each its own process, stray from each other, per metric: a
Markdown table over the cards of results files, folders or .tar.xz / .tar.gz archives of them.

    python3 scripts/process_spread.py tests/corpus [BENCHMARK:METRIC ...]

Per metric: the cards with three runs or more, the spread of a card's run medians (sample standard
deviation over their mean; the median over the cards, and the largest) and the largest gap
between two runs of a card (largest over smallest run median). Without metrics, the atomics
metrics whose launches are batched to 1 ms of GPU time per iteration.
"""
import gzip
import json
import os
import statistics
import sys
import tarfile

ATOMICS = ["atomics/types:f32/distinct", "atomics/contention:k=1", "atomics/types:u64/distinct",
           "atomics/contention:k=4", "atomics/types:f64/distinct", "atomics/add_u32/distinct:ops_per_s"]


def documents(path):
    """Every results document under `path`, in name order."""
    if os.path.isdir(path):
        for name in sorted(os.listdir(path)):
            yield from documents(os.path.join(path, name))
    elif path.endswith((".tar.xz", ".tar.gz")):
        with tarfile.open(path) as t:
            for m in sorted(t.getmembers(), key=lambda m: m.name):
                if m.isfile() and m.name.endswith(".json"):
                    doc = json.load(t.extractfile(m))
                    if doc.get("schema") == "gpubench.results/1":
                        yield doc
    elif path.endswith((".json", ".json.gz")):
        with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
            doc = json.load(f)
        if doc.get("schema") == "gpubench.results/1":
            yield doc


def median(doc, key):
    bid, _, name = key.partition(":")
    for b in doc["benchmarks"]:
        if b["id"] == bid:
            for m in b["metrics"]:
                if m["name"] == name:
                    return m["summary"]["median"]
    return None


paths = [a for a in sys.argv[1:] if ":" not in a]
keys = [a for a in sys.argv[1:] if ":" in a] or ATOMICS
docs = [d for p in paths for d in documents(p)]
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
