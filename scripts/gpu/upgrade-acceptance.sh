#!/usr/bin/env bash
# Acceptance of `cargo gpubench upgrade` on a GPU machine, from an archive built here
# (`cargo gpubench archive`):
#   1. A/A on two cards: the same archive as both stacks on GPUs 0 and 1. Expected: exit 0, no
#      REGRESSED on either card, every kernel "identical".
#   2. NVRTC 12 against NVRTC 13 on one card: stack A loads the libnvrtc.so.12 of the
#      nvidia-cuda-nvrtc-cu12 wheel (carried as a file: the .whl or the library itself), stack B
#      LIBNVRTC13 (default: the machine's own). Expected: A's runs record NVRTC 12.x and B's 13.x
#      (stack lines of the report), a code column on every flagged metric, the exit code one of
#      0, 1, 11 (12 means a card was not judged).
# With cuobjdump in $CUDA_HOME/bin or on the PATH the code column compares inner loops; without
# it, cubin hashes (the report says which). QUICK=1 runs the quick profile (about 20 s a run
# instead of about a minute); ROUNDS (default 3). STAGES (default "aa nvrtc") picks the stages;
# NVRTC_DEVICES (default 0) the cards of the NVRTC stage.
#
#   scripts/gpu/upgrade-acceptance.sh ARCHIVE NVRTC12_WHEEL_OR_LIB [LIBNVRTC13]
set -uo pipefail
archive=${1:?archive}; nvrtc12=${2:?libnvrtc.so.12 or the nvidia-cuda-nvrtc-cu12 wheel}; nvrtc13=${3:-}
OUT=${OUT:-out}; ROUNDS=${ROUNDS:-3}
profile=(); [ "${QUICK:-0}" = 1 ] && profile=(--quick)
mkdir -p "$OUT"
work=$(mktemp -d); tar xf "$archive" -C "$work"; A=$work/gpubench-archive; B=$A/bin/cargo-gpubench
if [ "${nvrtc12%.whl}" != "$nvrtc12" ]; then
    mkdir -p "$work/wheel" && python3 -m zipfile -e "$nvrtc12" "$work/wheel"
    nvrtc12=$(find "$work/wheel" -name 'libnvrtc.so.12*' ! -name '*builtins*' | head -1)
fi
nvidia-smi --query-gpu=index,name,uuid,driver_version --format=csv > "$OUT/cards.txt"
log() { echo "$*" | tee -a "$OUT/acceptance.txt"; }

STAGES=${STAGES:-aa nvrtc}
if [[ " $STAGES " == *" aa "* ]]; then
s=$(date +%s)
"$B" upgrade --a "$A" --b "$A" --device 0,1 --rounds "$ROUNDS" "${profile[@]}" \
    --out "$OUT/aa" > "$OUT/aa.txt" 2> "$OUT/aa.log"; rc=$?
log "A/A on GPUs 0,1: exit $rc (expected 0), $(( $(date +%s) - s )) s"
grep -E "^NVIDIA|^upgrade:|^code:" "$OUT/aa.txt" | tee -a "$OUT/acceptance.txt"
fi
if [[ " $STAGES " == *" nvrtc "* ]]; then

b_nvrtc=(); [ -n "$nvrtc13" ] && b_nvrtc=(--b-nvrtc "$nvrtc13")
s=$(date +%s)
"$B" upgrade --archive "$A" --a-nvrtc "$nvrtc12" "${b_nvrtc[@]}" --device "${NVRTC_DEVICES:-0}" --rounds "$ROUNDS" \
    "${profile[@]}" --out "$OUT/nvrtc" > "$OUT/nvrtc.txt" 2> "$OUT/nvrtc.log"; rc=$?
log "NVRTC 12 vs 13 on GPUs ${NVRTC_DEVICES:-0}: exit $rc (expected 0, 1 or 11), $(( $(date +%s) - s )) s"
grep -E "^stack|^NVIDIA|^upgrade:|^code:|^note:" "$OUT/nvrtc.txt" | tee -a "$OUT/acceptance.txt"
python3 - "$OUT/nvrtc/upgrade.json" <<'EOF' | tee -a "$OUT/acceptance.txt"
import json, sys
r = json.load(open(sys.argv[1]))
for s in r["stacks"]:
    print(f"stack {s['label']}: NVRTC {', '.join(s['nvrtc'])}")
for c in r["cards"]:
    k = [f"{x['source']}: {x['verdict']} ({x['by']})" for x in c["kernels"]]
    print(f"{c['uuid']}: {c['outcome']}; kernels: " + "; ".join(k))
    for m in (c.get("comparison") or {}).get("metrics", []):
        if m["verdict"] in ("REGRESSED", "IMPROVED"):
            print(f"  {m['verdict']} {m['benchmark']}:{m['metric']}: {m['code']['line']}")
EOF
fi
tar czf "$OUT/upgrade-acceptance.tar.gz" -C "$OUT" --ignore-failed-read aa nvrtc aa.txt nvrtc.txt aa.log nvrtc.log cards.txt
rm -rf "$work"
