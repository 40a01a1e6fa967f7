#!/usr/bin/env bash
# One device session: the full DRAM and L2 bandwidth sweeps (grid shapes, array sizes to 4 GiB,
# near / whole L2 footprints), the atomics family in eight processes (four with the default 32
# placements of every target, four with 256) to see how the run-to-run spread falls with more
# placements, and one default run for the suite's wall time. Results go to $OUT/bp-<card>.tar.gz
# and a summary table to $OUT/bp-<card>.txt.
#
#   scripts/gpu/bandwidth-placements.sh ARCHIVE.tar.xz
set -uo pipefail
archive=${1:?archive}
OUT=${OUT:-out}
work=$(mktemp -d); tar xJf "$archive" -C "$work"; A=$work/gpubench-archive; B=$A/bin/cargo-gpubench
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1); short=${uuid:4:8}
R=$OUT/bp-$short; mkdir -p "$R"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv > "$R/card.txt"
t() { local s=$(date +%s%N); "$@"; local rc=$?; echo "$rc $(( ($(date +%s%N) - s) / 1000000 ))"; }
echo "bandwidth full: $(t "$B" --archive "$A" --full --bench dram --bench l2_bandwidth --bench stream --no-baseline -o "$R/bw-full.json" > "$R/bw-full.log" 2>&1)" | tee -a "$R/log.txt"
for p in 32 256; do
    for i in 1 2 3 4; do
        echo "atomics p=$p run $i: $(GPUBENCH_PLACEMENTS=$p t "$B" --archive "$A" --bench atomics --no-baseline -o "$R/atomics-p$p-$i.json" > "$R/atomics-p$p-$i.log" 2>&1)" | tee -a "$R/log.txt"
    done
done
echo "default: $(t "$B" --archive "$A" --no-baseline -o "$R/default.json" > "$R/default.log" 2>&1)" | tee -a "$R/log.txt"
python3 "$(dirname "$0")/bandwidth_placements_summary.py" "$R" > "$OUT/bp-$short.txt" 2>&1
cat "$R/log.txt" >> "$OUT/bp-$short.txt"
tar czf "$OUT/bp-$short.tar.gz" -C "$OUT" "bp-$short" && rm -rf "$R"
cat "$OUT/bp-$short.txt"
