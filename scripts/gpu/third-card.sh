#!/usr/bin/env bash
# A card's default runs, the placement check (full profile) and three dissect runs.
#   scripts/gpu/third-card.sh ARCHIVE.tar.gz RUNS
set -uo pipefail
archive=${1:?archive}; runs=${2:-3}; OUT=${OUT:-out}
work=$(mktemp -d); tar xf "$archive" -C "$work"; A=$work/gpubench-archive; B=$A/bin/cargo-gpubench
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1); short=${uuid:4:8}
R=$OUT/c-$short; mkdir -p "$R"
log() { echo "$*" | tee -a "$R/summary.txt"; }
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,power.limit --format=csv > "$R/card.txt"
for i in $(seq 1 "$runs"); do
    t=$(date +%s%N); "$B" --archive "$A" --no-baseline -o "$R/$short-run$i.json" > "$R/$short-run$i.log" 2>&1; rc=$?
    log "run $i on $short: exit $rc, $(ms "$t") ms"
done
"$B" chipmap "$R/$short-run1.json" --benchmark '^latency/cg/' --out "$R/maps" > "$R/maps.txt" 2>&1
t=$(date +%s%N); "$B" --archive "$A" --full --no-baseline 'latency/placement' -o "$R/$short-placement.json" > "$R/placement.log" 2>&1
log "placement check: exit $?, $(ms "$t") ms"
"$B" chipmap "$R/$short-placement.json" > "$R/placement-maps.txt" 2>&1
for i in 1 2 3; do
    t=$(date +%s%N); "$B" dissect --out "$R/dissect-$i" > "$R/dissect-$i.log" 2>&1; rc=$?
    rm -rf "$R/dissect-$i/plots"; log "dissect $i: exit $rc, $(ms "$t") ms"
done
cut -c1-150 "$R/placement-maps.txt" | grep -E "cycles"
tar czf "$OUT/c-$short.tar.gz" -C "$OUT" "c-$short" && rm -rf "$R"
