#!/usr/bin/env python3
"""The recorded runs of a GPU class that its committed baseline is built from, and how results
documents are read from files, folders, archives and baseline files.

    python3 scripts/recorded.py baselines/<class>/class.json.xz OUT_DIR

writes them to OUT_DIR, one `<created>-<uuid>.json` each (oldest first by name): the first three
runs (oldest first) of every card, among the runs the class baseline holds and those of
tests/corpus/<class>/, of the code the class baseline holds (every kernel source with its cubin's
hash). Runs of other code are judged by the tests, never learned from.
"""
import gzip
import json
import lzma
import os
import sys
import tarfile

RUNS_PER_CARD = 3


def documents(path):
    """Every results document under `path` (a folder, a .tar.xz / .tar.gz archive, a results or
    baseline file, plain or compressed), in name order; a baseline file gives its runs."""
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
    elif path.endswith((".json", ".json.gz", ".json.xz")):
        with (gzip.open if path.endswith(".gz") else lzma.open if path.endswith(".xz") else open)(path, "rt") as f:
            doc = json.load(f)
        if doc.get("schema") == "gpubench.results/1":
            yield doc
        elif doc.get("schema") == "gpubench.baseline/1":
            yield from doc["runs"]


def code(run):
    """The generated code of a run: every kernel source with its cubin's hash."""
    return sorted({(k["source"], k["cubin_sha256"]) for b in run["benchmarks"] for k in b["kernels"]})


def recorded_runs(class_file):
    """The runs the class baseline `class_file` is built from, oldest first."""
    held = list(documents(class_file))
    corpus = os.path.join("tests", "corpus", os.path.basename(os.path.dirname(class_file)))
    current = code(held[0])
    by_card = {}
    for run in held + (list(documents(corpus)) if os.path.isdir(corpus) else []):
        if code(run) == current:
            by_card.setdefault(run["gpu"]["uuid"], {}).setdefault(run["created_unix_s"], run)
    runs = [card[t] for card in by_card.values() for t in sorted(card)[:RUNS_PER_CARD]]
    return sorted(runs, key=lambda r: (r["created_unix_s"], r["gpu"]["uuid"]))


if __name__ == "__main__":
    class_file, out = sys.argv[1:]
    runs = recorded_runs(class_file)
    for run in runs:
        with open(os.path.join(out, f"{run['created_unix_s']}-{run['gpu']['uuid']}.json"), "w") as f:
            json.dump(run, f)
    cards = len({r["gpu"]["uuid"] for r in runs})
    print(f"{class_file}: {len(runs)} runs of {cards} cards of its code", file=sys.stderr)
