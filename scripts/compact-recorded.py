#!/usr/bin/env python3
"""Rewrites recorded documents (results, sweeps) the way gpubench now writes them: every float
to 7 significant digits (see src/results/numbers.rs), JSON on one line. Handles .json,
.json.gz, .tar.gz and .tar.xz (every .json member); other files are left alone. Rewriting a
file twice gives the same bytes.

With --without-sm-maps, the per-SM maps of every benchmark (`sm_maps`: a latency from every SM,
for `chipmap` and `fleet`'s outlier SMs) are left out too, but those of the benchmarks whose id
matches --sm-maps-of REGEX: the calibration corpus keeps what verdicts read (samples, clocks,
telemetry, kernels, settings) and the maps the book's figures read, and the recorded runs the
chip-map and fleet tests read keep all of theirs.

    scripts/compact-recorded.py [--without-sm-maps [--sm-maps-of REGEX]] FILE_OR_FOLDER...
"""
import gzip
import io
import json
import lzma
import os
import re
import sys
import tarfile

DIGITS = 7
WITHOUT_SM_MAPS = False
SM_MAPS_OF = None


def rounded(x):
    if isinstance(x, float):
        if x != x or x in (float("inf"), float("-inf")) or x == 0.0:
            return x
        if x.is_integer() and abs(x) < 2**53:  # whole numbers (sizes, cycles) stay exact
            return x
        return float(f"{x:.{DIGITS - 1}e}")
    if isinstance(x, list):
        return [rounded(v) for v in x]
    if isinstance(x, dict):
        return {k: rounded(v) for k, v in x.items()}
    return x


def compact_json(raw: bytes) -> bytes:
    doc = json.loads(raw)
    if WITHOUT_SM_MAPS and isinstance(doc, dict):
        for bench in doc.get("benchmarks") or []:
            if isinstance(bench, dict) and not (SM_MAPS_OF and SM_MAPS_OF.search(str(bench.get("id", "")))):
                bench.pop("sm_maps", None)
    return (json.dumps(rounded(doc), separators=(",", ":"), allow_nan=False) + "\n").encode()


def rewrite_tar(path: str, mode: str) -> bytes:
    src = tarfile.open(path, "r:*")
    out = io.BytesIO()
    dst = tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT)
    for m in src.getmembers():
        data = src.extractfile(m).read() if m.isfile() else None
        if data is not None and m.name.endswith(".json"):
            data = compact_json(data)
        info = tarfile.TarInfo(m.name)
        info.type, info.mode, info.mtime = m.type, m.mode, m.mtime
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        if data is not None:
            info.size = len(data)
            dst.addfile(info, io.BytesIO(data))
        else:
            dst.addfile(info)
    dst.close()
    raw = out.getvalue()
    if mode == "xz":
        return lzma.compress(raw, preset=9 | lzma.PRESET_EXTREME)
    return gzip.compress(raw, 9, mtime=0)


def rewrite(path: str) -> None:
    before = os.path.getsize(path)
    try:
        data = rewritten(path)
    except (ValueError, EOFError, OSError, tarfile.TarError) as e:
        print(f"{path}: left as it is ({e})", file=sys.stderr)
        return
    if data is None:
        return
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.replace(path + ".tmp", path)
    print(f"{path}: {before} -> {len(data)} bytes")


def rewritten(path: str):
    if path.endswith(".tar.xz"):
        data = rewrite_tar(path, "xz")
    elif path.endswith(".tar.gz"):
        data = rewrite_tar(path, "gz")
    elif path.endswith(".json.gz"):
        data = gzip.compress(compact_json(gzip.open(path).read()), 9, mtime=0)
    elif path.endswith(".json"):
        data = compact_json(open(path, "rb").read())
    else:
        return None
    return data


args = sys.argv[1:]
if "--sm-maps-of" in args:
    i = args.index("--sm-maps-of")
    SM_MAPS_OF = re.compile(args[i + 1])
    del args[i : i + 2]
if "--without-sm-maps" in args:
    WITHOUT_SM_MAPS = True
    args = [a for a in args if a != "--without-sm-maps"]
for arg in args:
    if os.path.isdir(arg):
        for root, _, files in os.walk(arg):
            for name in sorted(files):
                rewrite(os.path.join(root, name))
    else:
        rewrite(arg)
