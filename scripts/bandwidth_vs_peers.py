#!/usr/bin/env python3
"""The table of gpubench's bandwidths against the peers' best figure on the same card, from the
folders (or .tar.xz/.tar.gz of them) that scripts/gpu/bandwidth-vs-peers.sh writes.

    python3 scripts/bandwidth_vs_peers.py FOLDER_OR_TARBALL...
    python3 scripts/bandwidth_vs_peers.py --notes FOLDER_OR_TARBALL...

DRAM figures are also given as a share of the card's theoretical DRAM bandwidth (two transfers
per memory clock over the bus width, as the run recorded them). `--notes` prints, as
"what: figure" lines, the peers' settings as their output records them (BabelStream's array
length, gpu-l2-cache's best footprint) and the wall times of gpubench's default profile on one GPU
and on all GPUs of a machine at once (wall.txt), per GPU model.
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


def l2_cache_best_footprint(text):
    """gpu-l2-cache's data set (kB) at its best read bandwidth."""
    rows = [(float(m.group(2)), int(m.group(1)))
            for m in re.finditer(r"^\s*\d+ kB\s+(\d+) kB.*?%\s+([\d.]+) GB/s", text, re.M)]
    return max(rows)[1] if rows else None


def range_s(vals):
    lo, hi = min(vals), max(vals)
    return f"{lo:.1f} s" if lo == hi else f"{lo:.1f}-{hi:.1f} s"


def notes(folders):
    elements, footprints, one, every = set(), set(), {}, {}
    for files in folders:
        names = {row["index"].strip(): row[" name"].strip()
                 for row in csv.DictReader(io.StringIO(files["gpus.csv"].decode()))}
        model = " and ".join(sorted(set(names.values())))
        for name, raw in files.items():
            text = raw.decode(errors="replace")
            if name.startswith("babel-"):
                elements.update(int(m.group(1)) for m in re.finditer(r"^Number of elements: (\d+)", text, re.M))
            elif name.startswith("gpu-l2-cache-"):
                footprints.add(l2_cache_best_footprint(text))
        for line in files.get("wall.txt", b"").decode().splitlines():
            m = re.match(r"(one GPU|all \d+ GPUs): ([\d.]+) s, exit 0$", line)
            if m:
                (one if m.group(1) == "one GPU" else every).setdefault(model, []).append(float(m.group(2)))
    lines = []
    for n in sorted(elements):
        power = n.bit_length() - 1
        lines.append(f"BabelStream doubles per array: {'2^%d' % power if n == 1 << power else n}")
    for kb in sorted(footprints):
        size = f"{kb / 1024:g} MiB" if kb % 512 == 0 else f"{kb} kB"
        lines.append(f"gpu-l2-cache best footprint: {size}")
    for model in sorted(one):
        single = statistics.median(one[model])
        lines.append(f"{model} one GPU: {range_s(one[model])} (median {single:.1f} s)")
        if model in every:
            both = statistics.median(every[model])
            lines.append(f"{model} all GPUs at once: {range_s(every[model])} (median {both:.1f} s, "
                         f"{100 * (both / single - 1):+.1f} %)")
    return lines


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--notes"]
    folders = [folder for arg in args for folder in folders_of(arg)]
    if "--notes" in sys.argv[1:]:
        print("\n".join(notes(folders)))
    else:
        print("| GPU | card | figure | gpubench GB/s | of DRAM peak | best peer GB/s | gpubench vs peer |")
        print("| --- | --- | --- | ---: | ---: | --- | ---: |")
        for folder in folders:
            print("\n".join(table(folder)))
