#!/usr/bin/env python3
"""Figures of "Dissecting the memory hierarchy" from the committed dissect runs, one
"what: figure" line each:

    python3 scripts/dissect_figures.py

- tests/fixtures/dissect/h200-run{1,2}: the L2 steps, the L1 under each preferred carveout,
  the constant cache under divergent access, the empty timing bracket and the L1 hit;
- tests/fixtures/recorded/h200-default.json.gz (the card of h200-run2): the `latency` family's
  L1 hit;
- tests/fixtures/dissect/h100-run1 (footprint sweeps on the SM the scheduler picked),
  tests/fixtures/recorded/h100-dissect-every-sm/ and h100-dissect-two-cards.tar.xz (every-SM
  latencies, one value per SM), h200-dissect-two-cards.tar.xz (run times);
- baselines/*/dissect.json: the every-SM latencies of each card's runs.
"""
import gzip
import json
import os
import re
import statistics
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
KIB = 1024
MIB = 1024 * 1024
# Shared-memory configurations NVIDIA documents for H100 and H200, KB (of 1024 B), out of 256 KB.
CONFIGS_KB = [0, 8, 16, 32, 64, 100, 132, 164, 196, 228]
# The trace kernel's shared memory (24 KiB of records) and the 1 KB the driver reserves per block.
TRACE_SHARED_KIB = 24 + 1


def load(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        return json.load(f)


def dissections():
    """(file name, dissect document) of every run of the fixtures and recordings, folders first."""
    out = []
    for top in ("dissect", os.path.join("recorded", "h100-dissect-every-sm")):
        for folder, _, names in sorted(os.walk(os.path.join(FIXTURES, top))):
            if "dissect.json" in names:
                out.append((os.path.relpath(folder, FIXTURES), load(os.path.join(folder, "dissect.json"))))
    for tarball in ("h100-dissect-two-cards.tar.xz", "h200-dissect-four-cards.tar.xz"):
        with tarfile.open(os.path.join(FIXTURES, "recorded", tarball)) as t:
            for m in sorted(t.getmembers(), key=lambda m: m.name):
                if m.isfile() and m.name.endswith(".dissect.json"):
                    out.append((f"{tarball}:{m.name}", json.load(t.extractfile(m))))
    return out


def fact(doc, name):
    return next(f for f in doc["dissection"]["facts"] if f["name"] == name)


def samples(doc, name):
    return next(l["samples"] for l in doc["dissection"]["latencies"] if l["name"] == name)


def row_latency(doc, level):
    return next(r["latency_cycles"] for r in doc["dissection"]["rows"] if r["level"] == level)


def span(vals, fmt="{:.0f}"):
    lo, hi = fmt.format(min(vals)), fmt.format(max(vals))
    return lo if lo == hi else f"{lo}-{hi}"


def first_number(pattern, text):
    return float(re.search(pattern, text).group(1))


def l2_lines(runs):
    lines = []
    for name, what in (("l2.near.size_bytes", "near"), ("l2.far.size_bytes", "far"), ("l2.size_bytes", "whole")):
        facts = [fact(d, name) for _, d in runs]
        lines.append(f"H200 L2 {what} (h200-run1, h200-run2): {span([f['value'] / MIB for f in facts])} MiB")
    conf = [fact(d, n)["confidence"] for _, d in runs for n in ("l2.near.size_bytes", "l2.far.size_bytes", "l2.size_bytes")]
    lines.append(f"H200 L2 confidence: {span(conf, '{:.2f}')}")
    halves = []
    for name in ("l2.near.size_bytes", "l2.size_bytes"):
        brackets = {re.search(r"through half of it between ([\d.]+) and ([\d.]+) MiB", fact(d, name)["method"]).groups()
                    for _, d in runs}
        assert len(brackets) == 1, brackets
        lo, hi = (float(x) for x in brackets.pop())
        halves.append(f"{lo:.1f}-{hi:.1f}")
    lines.append(f"H200 L2 steps bracketed at: {' and '.join(halves)} MiB")
    return lines


def l1_lines(runs):
    lines = []
    by = dict(runs)
    first = fact(by["dissect/h200-run1"], "l1.size_bytes")
    lines.append(f"h200-run1 L1: {first['value'] / KIB:g} KiB")
    doc = by["dissect/h200-run2"]
    size = fact(doc, "l1.size_bytes")
    hits = first_number(r"all accesses under \d+ cycles up to (\d+) B", size["method"])
    miss = first_number(r"not at (\d+) B", size["method"])
    half = re.search(r"half the drop between (\d+) and (\d+) B", size["method"]).groups()
    trace = fact(doc, "l1.trace_size_bytes")["value"]
    lines.append(f"h200-run2 L1 all hits up to: {hits / KIB:.1f} KiB")
    lines.append(f"h200-run2 l1.size_bytes: {size['value'] / KIB:g} KiB, at confidence {size['confidence']:.1f}")
    lines.append(f"h200-run2 L1 half-way bracket: {int(half[0]) / KIB:.1f} and {int(half[1]) / KIB:.1f} KiB")
    lines.append(f"h200-run2 L1 all hits, footprint chase and trace kernel: {hits / KIB:.1f} and {trace / KIB:g} KiB")
    lines.append(f"h200-run2 L1 first miss: {miss / KIB:.1f} KiB")
    config = min(c for c in CONFIGS_KB if c >= TRACE_SHARED_KIB)
    lines.append(f"shared memory configuration at least: {config} KB")
    lines.append(f"L1 at most: {256 - config} KiB, {256 - config - miss / KIB:.1f} KiB above the first miss")
    gaps = []
    for run in ("h200-run1", "h200-run2"):
        sizes, configs = [], []
        for p in (25, 50, 75):
            method = fact(by[f"dissect/{run}"], f"l1.carveout_{p}.size_bytes")["method"]
            kib = first_number(r"up to (\d+) B", method) / KIB
            config = max(c for c in CONFIGS_KB if 256 - c >= kib)
            sizes.append(f"{kib:.1f}")
            configs.append(str(config))
            gaps.append(256 - config - kib)
        lines.append(f"{run} all-hit sizes at carveouts 25 / 50 / 75 %: {' / '.join(sizes)} KiB")
        lines.append(f"{run} configurations: {' / '.join(configs)} KB")
    lines.append(f"all-hit sizes below 256 KiB minus the configuration: {span(gaps, '{:.1f}')} KiB")
    return lines


def latency_lines(runs):
    by = dict(runs)
    doc = by["dissect/h200-run2"]
    const = fact(doc, "const.divergent_access")["method"]
    at1 = first_number(r"([\d.]+) cycles at 1,", const)
    at32 = first_number(r"([\d.]+) at 32 ", const)
    step = first_number(r"\+([\d.]+) cycles per extra address", const)
    hit = statistics.median(samples(doc, "l1.hit"))
    results = load(os.path.join(FIXTURES, "recorded", "h200-default.json.gz"))
    assert results["gpu"]["uuid"] == doc["gpu"]["uuid"], "the same card"
    chase = next(m["summary"]["median"] for b in results["benchmarks"] if b["id"] == "latency/ca/4KiB"
                 for m in b["metrics"] if m["name"] == "cycles_per_access")
    brackets = {load(os.path.join(FIXTURES, "dissect", r, "sweeps.json.gz"))["timer_overhead_cycles"]
                for r in ("h100-run1", "h200-run1", "h200-run2")}
    return [
        f"H200 constant cache, divergent: {at1:.1f} cycles, +{step:.1f} per address, {at32:.1f} at 32",
        f"empty timing bracket (timer_overhead_cycles): {span(brackets)} cycles",
        f"H200 dissect l1.hit: {hit:.0f} cycles",
        f"H200 latency/ca/4KiB on the same card: {chase:.1f} cycles",
        f"dissect's L1 hit below the latency family's: {chase - hit:.1f} cycles",
    ]


def every_sm_lines(runs):
    lines = []
    one_sm = dict(runs)["dissect/h100-run1"]
    lines.append(f"H100 footprint sweeps on one SM (h100-run1): near hit {row_latency(one_sm, 'L2 near'):.0f}, "
                 f"DRAM {row_latency(one_sm, 'DRAM'):.0f} cycles")
    h100 = [d for n, d in runs if "h100-dissect" in n]
    for name, what in (("l2.near.hit", "near hit"), ("dram", "DRAM")):
        per_sm = [v for d in h100 for v in samples(d, name)]
        lines.append(f"H100 one SM's {what}, every-SM runs, cycles: {span(per_sm)}")
    for gpu in ("H100", "H200"):
        secs = [d["wall_time_s"] for n, d in runs if f"{gpu.lower()}-dissect" in n]
        lines.append(f"{gpu} dissect run (wall_time_s): {span(secs, '{:.1f}')} s")
    for path in sorted(os.listdir(os.path.join(ROOT, "baselines"))):
        if not os.path.isfile(os.path.join(ROOT, "baselines", path, "dissect.json")):
            continue
        base = load(os.path.join(ROOT, "baselines", path, "dissect.json"))
        cards = {}
        for run in base["runs"]:
            got = {b["id"]: b["metrics"][0]["summary"]["median"] for b in run["benchmarks"]}
            cards.setdefault(run["gpu"]["uuid"][:12], []).append(got)
        gpu = "H100" if "h100" in path else "H200"
        for card, got in cards.items():
            near, far, dram = ([g[f"dissect/{k}"] for g in got] for k in ("l2.near.hit", "l2.far.hit", "dram"))
            lines.append(f"{gpu} {card} every-SM latencies ({len(got)} runs): "
                         f"{span(near)}, {span(far)}, {span(dram)}")
    return lines


runs = dissections()
h200 = [(n, d) for n, d in runs if n in ("dissect/h200-run1", "dissect/h200-run2")]
for line in latency_lines(runs) + l2_lines(h200) + every_sm_lines(runs) + l1_lines(runs):
    print(line)
