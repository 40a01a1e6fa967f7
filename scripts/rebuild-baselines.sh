#!/usr/bin/env bash
# Rebuilds the committed class baselines (baselines/<class>/class.json.xz) from the committed
# runs with the documented command, `cargo gpubench baseline save --cards 3 RUNS...`:
#
# - the runs (scripts/recorded.py): the first three of every card, among the runs that the class
#   baseline holds and those of tests/corpus/<class>/, of the code the class baseline holds (every
#   kernel source and its cubin's hash as its runs recorded them; runs of other code are judged by
#   the tests, never learned from);
# - the baseline keeps the runs of the three cards that span the others and learns its noise
#   model (run-to-run and between-card spreads per metric, family priors and tails) from all of
#   them;
# - calibration.md beside it: `cargo gpubench calibrate` on those runs (A/A false alarms and
#   detection power, same card and every card left out against the others).
#
# Reproducible: the same runs give the same file, apart from its `updated_unix_s`; rebuilding a
# rebuilt baseline gives it again (the runs it keeps are in the corpus too).
#
#   scripts/rebuild-baselines.sh [CARGO_GPUBENCH]   (default: cargo run -q --release -p cargo-gpubench --)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then tool=("$1"); else tool=(cargo run -q --release -p cargo-gpubench --); fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
for b in baselines/*/class.json.xz; do
    class=$(basename "$(dirname "$b")")
    mkdir -p "$work/$class/runs" "$work/$class/out"
    python3 scripts/recorded.py "$b" "$work/$class/runs"
    # oldest first, as `baseline save` takes them
    "${tool[@]}" gpubench baseline save --cards 3 "$work/$class"/runs/*.json --baseline-dir "$work/$class/out" --force
    new=$(ls "$work/$class"/out/*/class.json*)
    case "$new" in
        *.xz) cp "$new" "$b" ;;
        *) xz -9e -T1 -c "$new" > "$b" ;;
    esac
    "${tool[@]}" gpubench calibrate "$work/$class/runs" > "$(dirname "$b")/calibration.md"
    echo "rebuilt $b and $(dirname "$b")/calibration.md"
done
