#!/usr/bin/env bash
# One short device call: the card's board identity (VBIOS, board and GPU part numbers, InfoROM)
# and a run of the benchmarks whose between-card spread splits a class (DRAM chases, shared
# atomics on one or two threads per address, stride-32 loads), into $OUT/probe-<card>.json.
#
#   scripts/gpu/board-probe.sh ARCHIVE
set -uo pipefail
archive=$(realpath "${1:?archive}")
OUT=$(realpath "${OUT:-out}")
work=$(mktemp -d); tar xf "$archive" -C "$work"; A=$work/gpubench-archive; B=$A/bin/cargo-gpubench
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1); short=${uuid:4:8}
nvidia-smi -q > "$OUT/smi-$short.txt"
ident=$(nvidia-smi --query-gpu=name,uuid,vbios_version,inforom.img,pci.sub_device_id --format=csv,noheader)
part=$(grep -m1 "Board Part Number" "$OUT/smi-$short.txt" | sed 's/.*: //')
(cd /tmp && "$B" --archive "$A" --no-baseline -o "$OUT/probe-$short.json" \
    '^(latency/c[ag]/(32|128)MiB|atomics/shared|access_patterns/coalescing)' > "$OUT/probe-$short.log" 2>&1)
echo "$ident, $part, exit $?"
