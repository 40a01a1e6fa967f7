#!/usr/bin/env bash
# One device call on one card, from an archive built here (`cargo gpubench archive`, as a
# .tar.xz or .tar.gz), run in the repository root: RUNS default-profile runs, each in its own
# process and each judged as a new card is, against the committed class baseline of its GPU
# class (baselines/, gpubench.toml: atomics judged as a family too). Runs, verdicts and logs
# land in $OUT/family-<card>.tar.gz, one line per run and the family lines in
# $OUT/family-<card>.txt.
#
#   scripts/gpu/family-check.sh ARCHIVE RUNS
set -uo pipefail
archive=${1:?archive}; runs=${2:-3}
OUT=${OUT:-out}
work=$(mktemp -d); tar xf "$archive" -C "$work"; A=$work/gpubench-archive; B=$A/bin/cargo-gpubench
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1); short=${uuid:4:8}
R=$OUT/family-$short; mkdir -p "$R"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv,noheader > "$R/card.txt"
for i in $(seq 1 "$runs"); do
    s=$(date +%s%N)
    "$B" --archive "$A" --baseline-dir baselines --config gpubench.toml -o "$R/GPU-$short-run-$i.json" \
        --verdicts-json "$R/verdicts-$i.json" > "$R/run-$i.log" 2>&1
    rc=$?
    echo "default run $i on $short: exit $rc, $(( ($(date +%s%N) - s) / 1000000 )) ms, $(grep -m1 '^verdicts:' "$R/run-$i.log")" >> "$R/log.txt"
    grep '^family:' "$R/run-$i.log" | sed "s/^/  run $i /" >> "$R/log.txt"
done
tar czf "$OUT/family-$short.tar.gz" -C "$OUT" "family-$short"
{ cat "$R/card.txt"; cat "$R/log.txt"; } > "$OUT/family-$short.txt"
rm -rf "$R"
cat "$OUT/family-$short.txt"
