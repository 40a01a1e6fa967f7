#!/usr/bin/env bash
# Runs on a GPU machine without a Rust toolchain: unpacks the archive, records the card, runs the
# default profile N times, draws the chip maps of the first run, and optionally the placement
# check (every SM at once vs each SM in turn). Everything lands in $OUT (or ./out).
#
#   scripts/gpu/card-runs.sh ARCHIVE.tar.gz RUNS [--placement] [--quick]
set -uo pipefail
archive=${1:?archive .tar.gz}
runs=${2:-3}
shift 2 || true
OUT=${OUT:-out}
work=$(mktemp -d)
tar xzf "$archive" -C "$work"
A=$work/gpubench-archive
B=$A/bin/cargo-gpubench
mkdir -p "$OUT/runs"
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1)
short=${uuid:4:8}
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,power.limit --format=csv > "$OUT/runs/card-$short.txt"
"$B" --archive "$A" info >> "$OUT/runs/card-$short.txt" 2>&1
for i in $(seq 1 "$runs"); do
    start=$(date +%s%N)
    "$B" --archive "$A" --no-baseline -o "$OUT/runs/$short-run$i.json" > "$OUT/runs/$short-run$i.log" 2>&1
    rc=$?
    end=$(date +%s%N)
    echo "run $i on $short: exit $rc, $(( (end - start) / 1000000 )) ms" | tee -a "$OUT/runs/wall-times.txt"
done
"$B" chipmap "$OUT/runs/$short-run1.json" --benchmark '^latency/' --out "$OUT/runs/maps-$short" > "$OUT/runs/maps-$short.txt" 2>&1
for arg in "$@"; do
    if [ "$arg" = --dissect ]; then
        for d in 1 2 3; do
            start=$(date +%s%N)
            "$B" dissect --out "$OUT/runs/dissect-$short-$d" > "$OUT/runs/dissect-$short-$d.log" 2>&1
            end=$(date +%s%N)
            echo "dissect $d on $short: exit $?, $(( (end - start) / 1000000 )) ms" | tee -a "$OUT/runs/wall-times.txt"
            rm -rf "$OUT/runs/dissect-$short-$d/plots"
        done
    fi
    if [ "$arg" = --history ]; then
        "$B" --archive "$A" --no-baseline -o "$OUT/runs/$short-hist.json" --history "$OUT/runs/history.db" > "$OUT/runs/$short-hist.log" 2>&1
        echo "history run: exit $?" | tee -a "$OUT/runs/wall-times.txt"
        "$B" history --db "$OUT/runs/history.db" >> "$OUT/runs/$short-hist.log" 2>&1
    fi
    if [ "$arg" = --placement ]; then
        "$B" --archive "$A" --full --no-baseline 'latency/placement' -o "$OUT/runs/$short-placement.json" > "$OUT/runs/$short-placement.log" 2>&1
        "$B" chipmap "$OUT/runs/$short-placement.json" >> "$OUT/runs/$short-placement.log" 2>&1
    fi
done
grep -E "latency/cg/(4MiB|256MiB|512MiB)|placement" "$OUT/runs/maps-$short.txt" "$OUT/runs/$short-placement.log" 2>/dev/null | cut -c1-200
tail -3 "$OUT/runs/$short-run1.log"
mv "$OUT/runs" "$OUT/runs-$short" && tar czf "$OUT/runs-$short.tar.gz" -C "$OUT" "runs-$short" && rm -rf "$OUT/runs-$short"
