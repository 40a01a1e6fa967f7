#!/usr/bin/env bash
# Rebuilds the committed class baselines (baselines/<class>/class.json.xz) from the runs they hold, with the
# documented command (`cargo gpubench baseline save RUNS...`): the baseline learns its noise
# model (run-to-run and between-card spreads per metric) from those runs. Reproducible: the same
# runs give the same file, apart from its `updated_unix_s`.
#
#   scripts/rebuild-baselines.sh [CARGO_GPUBENCH]   (default: cargo run -q -p cargo-gpubench --)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then tool=("$1"); else tool=(cargo run -q --release -p cargo-gpubench --); fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
for b in baselines/*/class.json.xz; do
    class=$(basename "$(dirname "$b")")
    mkdir -p "$work/$class/runs" "$work/$class/out"
    python3 - "$b" "$work/$class/runs" <<'PY'
import json, lzma, sys
baseline = json.load(lzma.open(sys.argv[1]))
for i, run in enumerate(baseline["runs"]):
    with open(f"{sys.argv[2]}/run-{i:03}.json", "w") as f:
        json.dump(run, f)
PY
    "${tool[@]}" gpubench baseline save "$work/$class"/runs/*.json --baseline-dir "$work/$class/out" --force
    new=$(ls "$work/$class"/out/*/class.json*)
    case "$new" in
        *.xz) cp "$new" "$b" ;;
        *) xz -9e -T1 -c "$new" > "$b" ;;
    esac
    echo "rebuilt $b from $(ls "$work/$class/runs" | wc -l) runs"
done
