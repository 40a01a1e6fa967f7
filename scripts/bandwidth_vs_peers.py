#!/usr/bin/env python3
"""The table of gpubench's bandwidths against the peers' best figure on the same card, from the
folders (or .tar.xz/.tar.gz of them) that scripts/gpu/bandwidth-vs-peers.sh writes.

    python3 scripts/bandwidth_vs_peers.py FOLDER_OR_TARBALL...

DRAM figures are also given as a share of the card's theoretical DRAM bandwidth (two transfers
per memory clock over the bus width, as the run recorded them).
"""
import csv
import io
import json
import re
import statistics
import sys
import tarfile

# our metric, then the peer figures it is set against (suite, column)
ROWS = [
    ("DRAM read", "dram/read", [("BabelStream", "Dot"), ("gpu-stream", "read")]),
    ("DRAM write", "dram/write", [("gpu-stream", "init")]),
    ("DRAM copy", "dram/copy", [("BabelStream", "Copy")]),
    ("DRAM triad", "dram/triad", [("BabelStream", "Triad"), ("gpu-stream", "triad")]),
    ("L2 peak", "l2_bandwidth/peak", [("gpu-l2-cache", "max")]),
]


def folders_of(arg):
    """The job folders of `arg` (a folder, or a tarball of folders), each as name -> bytes."""
    import os
    if os.path.isdir(arg):
        out = {}
        for root, _, names in os.walk(arg):
            for n in names:
                p = os.path.join(root, n)
                out[os.path.relpath(p, arg)] = open(p, "rb").read()
        return [out]
    groups = {}
    with tarfile.open(arg) as t:
        for m in t.getmembers():
            if m.isfile():
                top, _, rest = m.name.lstrip("./").partition("/")
                groups.setdefault(top, {})[rest] = t.extractfile(m).read()
    return [groups[k] for k in sorted(groups)]


def babel(text):
    return {m.group(1): float(m.group(2)) / 1000.0
            for m in re.finditer(r"^(Copy|Mul|Add|Triad|Dot)\s+([\d.]+)", text, re.M)}


def gpu_stream(text):
    cols, best = None, {}
    for line in text.splitlines():
        if "init" in line and "read" in line:
            cols = line.split("|")[1].split()
        elif cols and "GB/s:" in line:
            for c, v in zip(cols, line.split("GB/s:")[1].split()):
                best[c] = max(best.get(c, 0.0), float(v))
    return best


def gpu_l2_cache(text):
    vals = [float(m.group(1)) for m in re.finditer(r"%\s+([\d.]+) GB/s", text)]
    return {"max": max(vals)} if vals else {}


def ours(files):
    by_card = {}
    for name, raw in files.items():
        if name.startswith("ours/") and name.endswith(".json"):
            doc = json.loads(raw)
            card = by_card.setdefault(doc["gpu"]["uuid"], {"gpu": doc["gpu"], "runs": []})
            bw = {b["id"]: m["summary"]["median"] for b in doc["benchmarks"] for m in b["metrics"]
                  if m["name"] == "bandwidth"}
            card["runs"].append(bw)
    return by_card


def table(files):
    index = {row["index"].strip(): row[" uuid"].strip()
             for row in csv.DictReader(io.StringIO(files["gpus.csv"].decode()))}
    cards = ours(files)
    lines = []
    for i, uuid in sorted(index.items()):
        if uuid not in cards:
            continue
        g = cards[uuid]["gpu"]
        peak = 2 * g["mem_clock_khz"] * 1e3 * g["bus_width_bits"] / 8 / 1e9
        peers = {
            "BabelStream": babel(files.get(f"babel-{i}.txt", b"").decode()),
            "gpu-stream": gpu_stream(files.get(f"gpu-stream-{i}.txt", b"").decode()),
            "gpu-l2-cache": gpu_l2_cache(files.get(f"gpu-l2-cache-{i}.txt", b"").decode()),
        }
        runs = cards[uuid]["runs"]
        for label, metric, refs in ROWS:
            vals = [r[metric] for r in runs if metric in r]
            if not vals:
                continue
            mine = statistics.median(vals)
            cands = [(peers[s][c], f"{s} {c}") for s, c in refs if c in peers[s]]
            best, who = max(cands) if cands else (float("nan"), "-")
            share = f"{100 * mine / peak:.1f} %" if metric.startswith("dram") else ""
            lines.append(f"| {g['name']} | {uuid[:12]} | {label} | {mine:,.0f} | {share} | {best:,.0f} ({who}) "
                         f"| {100 * (mine / best - 1):+.1f} % |")
    return lines


print("| GPU | card | figure | gpubench GB/s | of DRAM peak | best peer GB/s | gpubench vs peer |")
print("| --- | --- | --- | ---: | ---: | --- | ---: |")
for arg in sys.argv[1:]:
    for folder in folders_of(arg):
        print("\n".join(table(folder)))
