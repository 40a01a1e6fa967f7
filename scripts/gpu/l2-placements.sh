#!/usr/bin/env bash
# One device call on one card: the L2 family alone in 2 x N processes, alternating one copy of
# the footprints (GPUBENCH_PLACEMENTS=1, what every run read before the copies) and the default
# copies, to see how the spread between processes falls; then RUNS default-profile runs.
# Results go to $OUT/l2p-<card>.tar.gz, a summary table to $OUT/l2p-<card>.txt.
#
#   scripts/gpu/l2-placements.sh ARCHIVE N RUNS
set -uo pipefail
archive=$(realpath "${1:?archive}"); n=${2:-6}; runs=${3:-3}
OUT=$(realpath "${OUT:-out}")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d); tar xf "$archive" -C "$work"; A=$work/gpubench-archive; B=$A/bin/cargo-gpubench
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1); short=${uuid:4:8}
R=$OUT/l2p-$short; mkdir -p "$R"
nvidia-smi --query-gpu=name,uuid,driver_version,vbios_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv > "$R/card.txt"
# t LOG COMMAND...: runs COMMAND with its output in LOG, prints its exit code and wall time
t() { local log=$1; shift; local s=$(date +%s%N); "$@" > "$log" 2>&1; local rc=$?; echo "exit $rc, $(( ($(date +%s%N) - s) / 1000000 )) ms"; }
cd /tmp
for i in $(seq 1 "$n"); do
    echo "l2 one copy $i: $(GPUBENCH_PLACEMENTS=1 t "$R/l2-p1-$i.log" "$B" --archive "$A" --no-baseline -o "$R/l2-p1-$i.json" '^l2_bandwidth/')" | tee -a "$R/log.txt"
    echo "l2 copies $i: $(t "$R/l2-pd-$i.log" "$B" --archive "$A" --no-baseline -o "$R/l2-pd-$i.json" '^l2_bandwidth/')" | tee -a "$R/log.txt"
done
for i in $(seq 1 "$runs"); do
    echo "default run $i: $(t "$R/run-$i.log" "$B" --archive "$A" --no-baseline -o "$R/run-$i.json")" | tee -a "$R/log.txt"
done
python3 "$here/l2_placements_summary.py" "$R" > "$OUT/l2p-$short.txt" 2>&1
cat "$R/log.txt" >> "$OUT/l2p-$short.txt"
tar czf "$OUT/l2p-$short.tar.gz" -C "$OUT" "l2p-$short" && rm -rf "$R"
cat "$OUT/l2p-$short.txt"
