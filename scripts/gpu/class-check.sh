#!/usr/bin/env bash
# A card checked against the committed class baseline: the health profile (timed), then one
# default run compared with the baseline. Results in $OUT/class-<card>.tar.gz.
#   scripts/gpu/class-check.sh ARCHIVE.tar.gz
set -uo pipefail
archive=${1:?archive}; OUT=${OUT:-out}
work=$(mktemp -d); tar xf "$archive" -C "$work"; A=$work/gpubench-archive; B=$A/bin/cargo-gpubench
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1); short=${uuid:4:8}
R=$OUT/class-$short; mkdir -p "$R"
log() { echo "$*" | tee -a "$R/summary.txt"; }
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > "$R/card.txt"
t=$(date +%s%N); "$B" health --archive "$A" --out "$R/health" > "$R/health.log" 2>&1; rc=$?
log "health on $short: exit $rc, $(ms "$t") ms: $(head -1 "$R/health.log")"
t=$(date +%s%N); "$B" --archive "$A" -o "$R/$short-run1.json" --markdown "$R/verdicts.md" > "$R/run1.log" 2>&1; rc=$?
log "default run vs the class baseline: exit $rc, $(ms "$t") ms: $(grep -E '^verdicts|^against' "$R/run1.log" | tr '\n' ' ')"
tar czf "$OUT/class-$short.tar.gz" -C "$OUT" "class-$short" && rm -rf "$R"
