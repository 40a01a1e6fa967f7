#!/usr/bin/env bash
# Two GPUs of one host: `--device all` (both at once) against each GPU alone, then dissect x3 on
# GPU 0. Results in $OUT/two-gpus.tar.gz.
#   scripts/gpu/two-gpus.sh ARCHIVE.tar.gz
set -uo pipefail
archive=${1:?archive}; OUT=${OUT:-out}
work=$(mktemp -d); tar xzf "$archive" -C "$work"; A=$work/gpubench-archive; B=$A/bin/cargo-gpubench
R=$OUT/two-gpus; mkdir -p "$R"
log() { echo "$*" | tee -a "$R/summary.txt"; }
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.max.sm,power.limit --format=csv > "$R/cards.txt"
nvidia-smi topo -m > "$R/topo.txt" 2>&1
t=$(date +%s%N); "$B" --archive "$A" --device all --no-baseline -o "$R/all" > "$R/all.log" 2>&1; rc=$?
log "--device all: exit $rc, $(ms "$t") ms"
for d in 0 1; do
    t=$(date +%s%N); "$B" --archive "$A" --device "$d" --no-baseline -o "$R/alone-$d.json" > "$R/alone-$d.log" 2>&1; rc=$?
    log "--device $d alone: exit $rc, $(ms "$t") ms"
done
for d in 0 1; do
    uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i "$d")
    "$B" compare "$R/alone-$d.json" "$R/all/$uuid.json" > "$R/compare-alone-vs-all-$d.txt" 2>&1
    log "GPU $d alone vs together: exit $? $(grep -E '^verdicts:' "$R/compare-alone-vs-all-$d.txt")"
done
"$B" fleet "$R/all" "$R"/alone-*.json --svg "$R/fleet-svg" --markdown "$R/fleet.md" > "$R/fleet.txt" 2>&1
log "fleet: exit $?"
for i in 1 2 3; do
    t=$(date +%s%N); "$B" dissect --out "$R/dissect-$i" > "$R/dissect-$i.log" 2>&1; rc=$?
    rm -rf "$R/dissect-$i/plots"; log "dissect $i: exit $rc, $(ms "$t") ms"
done
tar czf "$OUT/two-gpus.tar.gz" -C "$OUT" two-gpus && rm -rf "$R"
