#!/usr/bin/env bash
# How far atomics run medians stray between processes on one card, and whether spreading the
# atomic targets' placements wider changes that: N processes of the atomics family at the
# default placement count, then N with GPUBENCH_PLACEMENTS=$WIDE. Summary: cv of run medians.
#   scripts/gpu/atomics-processes.sh ARCHIVE N WIDE
set -uo pipefail
archive=${1:?archive}; n=${2:-8}; wide=${3:-4096}
OUT=${OUT:-out}
work=$(mktemp -d); tar xf "$archive" -C "$work"; : > "$work/empty.toml"; A=$work/gpubench-archive; B=$A/bin/cargo-gpubench
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1); short=${uuid:4:8}
R=$OUT/atomics-processes-$short; mkdir -p "$R"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > "$R/card.txt"
for mode in default wide; do
    for i in $(seq 1 "$n"); do
        s=$(date +%s%N)
        if [ $mode = wide ]; then
            GPUBENCH_PLACEMENTS=$wide "$B" --archive "$A" --config "$work/empty.toml" --bench atomics --no-baseline -o "$R/$mode-$i.json" > "$R/$mode-$i.log" 2>&1
        else
            "$B" --archive "$A" --config "$work/empty.toml" --bench atomics --no-baseline -o "$R/$mode-$i.json" > "$R/$mode-$i.log" 2>&1
        fi
        echo "$mode $i: exit $?, $(( ($(date +%s%N) - s) / 1000000 )) ms" >> "$R/log.txt"
    done
done
python3 - "$R" > "$R/summary.txt" <<'PY'
import json, glob, statistics as st, sys
R = sys.argv[1]
for mode in ("default", "wide"):
    per = {}
    for f in sorted(glob.glob(f"{R}/{mode}-*.json")):
        d = json.load(open(f))
        for b in d["benchmarks"]:
            for m in b["metrics"]:
                if m["name"] in ("ops_per_s",) or "distinct" in m["name"] or m["name"].startswith("k=") or "warp" in m["name"]:
                    per.setdefault(f"{b['id']}:{m['name']}", []).append(st.median(m["samples"]))
    print(f"-- {mode}")
    for k, v in sorted(per.items()):
        if len(v) > 1 and st.mean(v) != 0:
            print(f"   {k:55s} cv {100 * st.pstdev(v) / st.mean(v):5.2f} %  n={len(v)}  median {st.median(v):.4g}")
PY
cat "$R/log.txt"
tar czf "$OUT/atomics-processes-$short.tar.gz" -C "$OUT" "atomics-processes-$short"
cat "$R/log.txt" "$R/summary.txt" > "$OUT/atomics-processes-$short.txt"; rm -rf "$R"
cat "$OUT/atomics-processes-$short.txt"
