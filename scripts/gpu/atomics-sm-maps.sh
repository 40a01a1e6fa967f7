#!/usr/bin/env bash
# The atomics family alone, RUNS times on one card, each run in its own process, from an
# archive built here (`cargo gpubench archive`, .tar.xz or .tar.gz). The runs keep the per-SM
# rates of the shared-memory atomics (a chip map per k); the summary prints, per k, the median
# over SMs (the metric), the mean over SMs and the SMs' spread, so that cards can be compared
# on what the SMs of each do. Everything lands in $OUT/asm-<card>.tar.gz, the summary in
# $OUT/asm-<card>.txt.
#
#   scripts/gpu/atomics-sm-maps.sh ARCHIVE RUNS
set -uo pipefail
archive=${1:?archive}; runs=${2:-2}
OUT=${OUT:-out}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d); tar xf "$archive" -C "$work"; A=$work/gpubench-archive; B=$A/bin/cargo-gpubench
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1); short=${uuid:4:8}
R=$OUT/asm-$short; mkdir -p "$R"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,power.limit --format=csv > "$R/card.txt"
nvidia-smi -q > "$R/nvidia-smi-q.txt" 2>&1
for i in $(seq 1 "$runs"); do
    s=$(date +%s%N)
    "$B" --archive "$A" --no-baseline -o "$R/run-$i.json" '^atomics/' > "$R/run-$i.log" 2>&1; rc=$?
    echo "atomics run $i on $short: exit $rc, $(( ($(date +%s%N) - s) / 1000000 )) ms" | tee -a "$R/log.txt"
done
python3 "$here/atomics_sm_maps_summary.py" "$R" > "$OUT/asm-$short.txt" 2>&1
tar czf "$OUT/asm-$short.tar.gz" -C "$OUT" "asm-$short"
rm -rf "$R"
cat "$OUT/asm-$short.txt"
