#!/usr/bin/env bash
# How far atomics run medians stray between processes on one card under several settings: N
# processes of the atomics family per setting, the settings taken in turn (round robin), each
# setting a list of VAR=VALUE environment assignments joined by commas ("default" for none).
# Summary per setting and metric: cv of the run medians between processes, and the median
# within-process cv of the samples.
#   scripts/gpu/atomics-processes.sh ARCHIVE N SETTING...
#   scripts/gpu/atomics-processes.sh a.tar.xz 6 GPUBENCH_ATOMICS_ITERATION_US=0 default
set -uo pipefail
archive=${1:?archive}; n=${2:-8}; shift 2
settings=("$@"); [ ${#settings[@]} -gt 0 ] || settings=(default)
OUT=${OUT:-out}
work=$(mktemp -d); tar xf "$archive" -C "$work"; : > "$work/empty.toml"; A=$work/gpubench-archive; B=$A/bin/cargo-gpubench
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1); short=${uuid:4:8}
R=$OUT/atomics-processes-$short; mkdir -p "$R"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > "$R/card.txt"
for i in $(seq 1 "$n"); do
    for setting in "${settings[@]}"; do
        name=$(echo "$setting" | tr -c 'A-Za-z0-9=\n' '_' | sed 's/GPUBENCH_//g')
        envs=(); [ "$setting" = default ] || IFS=, read -ra envs <<< "$setting"
        s=$(date +%s%N)
        env "${envs[@]}" "$B" --archive "$A" --config "$work/empty.toml" --bench atomics --no-baseline \
            -o "$R/$name-$i.json" > "$R/$name-$i.log" 2>&1
        echo "$name $i: exit $?, $(( ($(date +%s%N) - s) / 1000000 )) ms" >> "$R/log.txt"
    done
done
python3 - "$R" "${settings[@]}" > "$R/summary.txt" <<'PY'
import json, glob, re, statistics as st, sys
R, settings = sys.argv[1], sys.argv[2:]
for setting in settings:
    name = re.sub(r"[^A-Za-z0-9=]", "_", setting).replace("GPUBENCH_", "")
    medians, within = {}, {}
    for f in sorted(glob.glob(f"{R}/{name}-*.json")):
        d = json.load(open(f))
        for b in d["benchmarks"]:
            for m in b["metrics"]:
                key = f"{b['id']}:{m['name']}"
                s = m["samples"]
                medians.setdefault(key, []).append(st.median(s))
                if len(s) > 1 and st.mean(s) != 0:
                    within.setdefault(key, []).append(100 * st.stdev(s) / st.mean(s))
    print(f"-- {setting}")
    for k, v in sorted(medians.items()):
        if len(v) > 1 and st.mean(v) != 0:
            w = st.median(within.get(k, [float("nan")]))
            print(f"   {k:55s} between {100 * st.pstdev(v) / st.mean(v):5.2f} %  within {w:5.2f} %  n={len(v)}  median {st.median(v):.4g}")
PY
tar czf "$OUT/atomics-processes-$short.tar.gz" -C "$OUT" "atomics-processes-$short"
cat "$R/card.txt" "$R/log.txt" "$R/summary.txt" > "$OUT/atomics-processes-$short.txt"; rm -rf "$R"
cat "$OUT/atomics-processes-$short.txt"
