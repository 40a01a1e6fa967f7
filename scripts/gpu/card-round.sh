#!/usr/bin/env bash
# One device call on one card, from an archive built here (`cargo gpubench archive`, as a
# .tar.xz or .tar.gz): DISSECTS dissect runs, then RUNS default-profile runs, each in its own
# process. Everything lands in $OUT/round-<card>.tar.gz, a summary in $OUT/round-<card>.txt.
#
#   scripts/gpu/card-round.sh ARCHIVE DISSECTS RUNS
set -uo pipefail
archive=${1:?archive}; dissects=${2:-3}; runs=${3:-2}
OUT=${OUT:-out}
work=$(mktemp -d); tar xf "$archive" -C "$work"; A=$work/gpubench-archive; B=$A/bin/cargo-gpubench
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1); short=${uuid:4:8}
R=$OUT/round-$short; mkdir -p "$R"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv > "$R/card.txt"
log() { echo "$*" | tee -a "$R/log.txt"; }
for d in $(seq 1 "$dissects"); do
    s=$(date +%s%N)
    "$B" dissect --out "$R/dissect-$d" > "$R/dissect-$d.log" 2>&1; rc=$?
    log "dissect $d on $short: exit $rc, $(( ($(date +%s%N) - s) / 1000000 )) ms"
    rm -rf "$R/dissect-$d/plots"
done
for i in $(seq 1 "$runs"); do
    s=$(date +%s%N)
    "$B" --archive "$A" --no-baseline -o "$R/run-$i.json" > "$R/run-$i.log" 2>&1; rc=$?
    log "default run $i on $short: exit $rc, $(( ($(date +%s%N) - s) / 1000000 )) ms"
done
tar czf "$OUT/round-$short.tar.gz" -C "$OUT" "round-$short"
{
    cat "$R/card.txt"; cat "$R/log.txt"
    for d in $(seq 1 "$dissects"); do
        echo "dissect $d:"; grep -E "L2 near|L2 far|DRAM" "$R/dissect-$d/report.txt" 2>/dev/null | head -3
    done
} > "$OUT/round-$short.txt"
rm -rf "$R"
cat "$OUT/round-$short.txt"
