#!/usr/bin/env python3
"""Figures of the runs the committed class baselines are built from (scripts/recorded.py: the
first three runs of every recorded card of the code the baseline holds), one "what: figure" line
each, per GPU model:

    python3 scripts/baseline_figures.py baselines/*/class.json.xz

- the runs: how many, of how many cards, the driver and CUDA version, the day(s) recorded (UTC);
- latency/cg/4MiB (an L2 hit) and latency/cg/256MiB (a DRAM access) over the SMs: the median over
  runs of the fastest and of the slowest SM, and how far apart they are;
- the correlation of two per-SM maps of latency/cg/4MiB: two runs of one card (the smallest),
  two cards (the range over pairs of runs of different cards);
- the share of the per-SM variance of latency/cg/4MiB that the SM groups explain (between-group
  sum of squares over the total), the range over runs;
- atomics/global_latency (add): the median over runs of the fastest and slowest SM's chain, the
  spread of the card means (sample standard deviation over their mean) and the largest gap
  between two runs of a card;
- l2_bandwidth/read: the median gap between two runs of a card;
- dram/triad efficiency (% of the theoretical DRAM bandwidth): the median over runs.
"""
import datetime
import itertools
import statistics
import sys

from recorded import recorded_runs


def short(name):
    """"NVIDIA H100 80GB HBM3" -> "H100"."""
    return next((w for w in name.split() if w[:1] == "H" and w[1:].isdigit()), name)


def bench(run, bid):
    return next((b for b in run["benchmarks"] if b["id"] == bid), None)


def median_of(run, bid, metric):
    b = bench(run, bid)
    m = next(m for m in b["metrics"] if m["name"] == metric)
    return m["summary"]["median"]


def sm_map(run, bid, metric):
    return next(m for m in bench(run, bid)["sm_maps"] if m["metric"] == metric)


def corr(a, b):
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    cov = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    return cov / (sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b)) ** 0.5


def group_share(values, groups):
    mean = statistics.fmean(values)
    total = sum((v - mean) ** 2 for v in values)
    by = {}
    for v, g in zip(values, groups):
        by.setdefault(g, []).append(v)
    return sum(len(vs) * (statistics.fmean(vs) - mean) ** 2 for vs in by.values()) / total, len(by)


def by_card(runs, value):
    out = {}
    for r in runs:
        out.setdefault(r["gpu"]["uuid"], []).append(value(r))
    return out


def figures(runs):
    gpu = short(runs[0]["gpu"]["name"])
    cards = by_card(runs, lambda r: r)
    stacks = sorted({f"driver {r['stack']['driver_version']}, CUDA {r['stack']['cuda_driver_api']}" for r in runs})
    days = sorted({datetime.datetime.fromtimestamp(r["created_unix_s"], datetime.timezone.utc).date().isoformat()
                   for r in runs})
    lines = [f"{gpu} runs: {len(cards)} cards, {len(runs)} runs",
             f"{gpu} stack: {'; '.join(stacks)}",
             f"{gpu} recorded: {', '.join(days)}"]

    for bid, what in (("latency/cg/4MiB", "L2 hit"), ("latency/cg/256MiB", "DRAM access")):
        spreads = [sm_map(r, bid, "cycles_per_access")["spread"] for r in runs]
        lo = statistics.median(s["min"] for s in spreads)
        hi = statistics.median(s["max"] for s in spreads)
        lines.append(f"{gpu} {what} over SMs ({bid}), cycles: {lo:.0f}-{hi:.0f}")
        if bid == "latency/cg/4MiB":
            lines.append(f"{gpu} {what} slowest SM over fastest: {100 * (hi / lo - 1):.0f} %")

    maps = [(r["gpu"]["uuid"], sm_map(r, "latency/cg/4MiB", "cycles_per_access")) for r in runs]
    same, other = [], []
    for (u1, m1), (u2, m2) in itertools.combinations(maps, 2):
        assert m1["sm"] == m2["sm"]
        (same if u1 == u2 else other).append(corr(m1["values"], m2["values"]))
    floor4 = int(min(same) * 1e4) / 1e4
    lines.append(f"{gpu} SM maps of two runs of a card correlate at: {floor4:.4f} or more")
    lines.append(f"{gpu} SM maps of two cards correlate at: {min(other):.2f}-{max(other):.2f}")

    shares = [group_share(m["values"], m["group"]) for _, m in maps if m.get("group")]
    groups = sorted({n for _, n in shares})
    lo, hi = min(s for s, _ in shares), max(s for s, _ in shares)
    lines.append(f"{gpu} SM groups: {'/'.join(map(str, groups))}")
    lines.append(f"{gpu} L2-hit variance the groups explain: {100 * lo:.0f}-{100 * hi:.0f} %")

    spreads = [sm_map(r, "atomics/global_latency", "add")["spread"] for r in runs]
    lo = statistics.median(s["min"] for s in spreads)
    hi = statistics.median(s["max"] for s in spreads)
    lines.append(f"{gpu} dependent global atomic chain over SMs, cycles: {lo:.0f}-{hi:.0f}")
    chains = by_card(runs, lambda r: median_of(r, "atomics/global_latency", "add"))
    means = [statistics.fmean(v) for v in chains.values()]
    cv = 100 * statistics.stdev(means) / statistics.fmean(means)
    lines.append(f"{gpu} mean chain over SMs, spread of the cards: {cv:.2f} % over {len(means)} cards")
    gap = max(100 * (max(v) / min(v) - 1) for v in chains.values())
    lines.append(f"{gpu} mean chain over SMs, two runs of a card agree within: {gap:.2f} %")

    reads = by_card(runs, lambda r: median_of(r, "l2_bandwidth/read", "bandwidth"))
    gaps = [100 * (max(v) / min(v) - 1) for v in reads.values() if len(v) > 1]
    lines.append(f"{gpu} l2_bandwidth/read, two runs of a card apart by (median over cards): "
                 f"{statistics.median(gaps):.1f} %")

    eff = statistics.median(median_of(r, "dram/triad", "efficiency") for r in runs)
    lines.append(f"{gpu} dram/triad of theoretical peak: {eff:.1f} %")
    return lines


for path in sys.argv[1:]:
    print("\n".join(figures(recorded_runs(path))))
