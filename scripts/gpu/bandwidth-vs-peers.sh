#!/usr/bin/env bash
# gpubench's bandwidths against two peer suites on the same cards, in one job: BabelStream
# (copy, mul, add, triad, dot at 2^28 doubles) and gpu-benches' gpu-stream (init/read/scale/
# triad over occupancy) and gpu-l2-cache (read bandwidth over footprints). The peers are built
# here with nvcc from checkouts the caller provides (nothing of theirs is part of gpubench).
# Also times the default profile on one GPU and on every GPU at once (--device all).
#
#   scripts/gpu/bandwidth-vs-peers.sh ARCHIVE BABELSTREAM_SRC GPU_BENCHES_SRC
#   python3 scripts/bandwidth_vs_peers.py $OUT/peers-*     # the table
#
# Output: $OUT/peers-<first card>/ holding gpus.csv, ours/ (results per card), the peers'
# outputs per card (babel-<i>.txt, gpu-stream-<i>.txt, gpu-l2-cache-<i>.txt) and wall.txt.
set -uo pipefail
archive=${1:?archive}; babel=${2:?BabelStream checkout}; gb=${3:?gpu-benches checkout}
OUT=${OUT:-out}
work=$(mktemp -d); mkdir -p "$work/a"; tar xf "$archive" -C "$work/a"
B=$(ls "$work"/a/bin/cargo-gpubench "$work"/a/*/bin/cargo-gpubench 2>/dev/null | head -1); A=$(dirname "$(dirname "$B")")
ngpu=$(nvidia-smi -L | wc -l)
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1)
R=$OUT/peers-${uuid:4:8}; mkdir -p "$R/ours"
nvidia-smi --query-gpu=index,uuid,name,driver_version,persistence_mode,clocks.max.sm,clocks.max.mem --format=csv > "$R/gpus.csv"
export PATH=/usr/local/cuda/bin:$PATH CUDA_DEVICE_ORDER=PCI_BUS_ID
arch=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
cp -r "$babel" "$work/babel"; cp -r "$gb" "$work/gb"
# gpu-l2-cache reads hardware counters through CUPTI only in code that is commented out; build
# it without them.
sed -i 's|#include "../gpu-metrics/gpu-metrics.hpp"||; s|^\s*initMeasureMetric();||' "$work/gb/gpu-l2-cache/main.cu"
nvml=(-L/usr/local/cuda/lib64/stubs -lnvidia-ml)
( cd "$work/babel" && nvcc -O3 -std=c++17 -arch=$arch -DCUDA -DGRID_STRIDE --extended-lambda -Isrc -Isrc/cuda \
    src/main.cpp src/cuda/CUDAStream.cu -o babel "${nvml[@]}" ) > "$R/build.log" 2>&1 &
( cd "$work/gb/gpu-stream" && nvcc -O3 -std=c++17 -arch=$arch -Xcompiler -fopenmp -o stream main.cu -lcuda "${nvml[@]}" ) >> "$R/build.log" 2>&1 &
( cd "$work/gb/gpu-l2-cache" && nvcc -O3 -std=c++17 -arch=$arch -Xcompiler -fopenmp -o l2 main.cu -lcuda "${nvml[@]}" ) >> "$R/build.log" 2>&1 &
wait
cd "$work"
"$B" gpubench --quick --archive "$A" --device all -o "$work/warm" latency > "$R/warm.log" 2>&1
timed() { local log=$1; shift; local s; s=$(date +%s%N); "$@" > "$log" 2>&1; local rc=$?
    awk -v s="$s" -v e="$(date +%s%N)" -v rc=$rc 'BEGIN{printf "%.1f s, exit %d\n", (e-s)/1e9, rc}'; }
{ echo -n "one GPU: "; timed "$R/one.log" "$B" gpubench --archive "$A" --device 0 -o "$R/ours/one.json"
  if [ "$ngpu" -gt 1 ]; then
      echo -n "all $ngpu GPUs: "; timed "$R/all.log" "$B" gpubench --archive "$A" --device all -o "$R/ours/all"
  fi; } | tee "$R/wall.txt"
peer() {
    export CUDA_VISIBLE_DEVICES=$1
    "$work/babel/babel" -s 268435456 -n 100 > "$R/babel-$1.txt" 2>&1
    (cd "$work/gb/gpu-stream" && ./stream) > "$R/gpu-stream-$1.txt" 2>&1
    (cd "$work/gb/gpu-l2-cache" && ./l2) > "$R/gpu-l2-cache-$1.txt" 2>&1
}
for i in $(seq 0 $((ngpu - 1))); do peer "$i" & done; wait
rm -rf "$work"
