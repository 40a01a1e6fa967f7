#!/usr/bin/env bash
# One device session on one card: default runs (one with --history), chip maps, dissect x3,
# `--device all` through the Slurm recipe's GPU step, the health profile, the noisy-neighbour
# run and `--exclusive` beside a second process. Results go to $OUT as one .tar.gz per part.
#
#   scripts/gpu/session.sh ARCHIVE.tar.gz RUNS ENVELOPE_DIR
set -uo pipefail
archive=${1:?archive}; runs=${2:-3}; envelope=${3:-}
OUT=${OUT:-out}
work=$(mktemp -d); tar xzf "$archive" -C "$work"; A=$work/gpubench-archive; B=$A/bin/cargo-gpubench
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1); short=${uuid:4:8}
R=$OUT/s-$short; mkdir -p "$R"
log() { echo "$*" | tee -a "$R/summary.txt"; }
timed() { local s e rc; s=$(date +%s%N); "$@"; rc=$?; e=$(date +%s%N); echo "$rc $(( (e - s) / 1000000 ))"; }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,power.limit --format=csv > "$R/card.txt"
for i in $(seq 1 "$runs"); do
    extra=(); [ "$i" = 1 ] && extra=(--history "$R/history.db")
    read -r rc ms < <(timed "$B" --archive "$A" --no-baseline "${extra[@]}" -o "$R/$short-run$i.json" > "$R/$short-run$i.log" 2>&1)
    log "run $i on $short: exit $rc, $ms ms"
done
"$B" chipmap "$R/$short-run1.json" --benchmark '^latency/cg/(4MiB|256MiB)$' --out "$R/maps" > "$R/maps.txt" 2>&1
"$B" history --db "$R/history.db" > "$R/history.txt" 2>&1; log "history: exit $?"
for d in 1 2 3; do
    read -r rc ms < <(timed "$B" dissect --out "$R/dissect-$d" > "$R/dissect-$d.log" 2>&1)
    rm -rf "$R/dissect-$d/plots"; log "dissect $d: exit $rc, $ms ms"
done
# --device all through the batch recipe's GPU step, then the same card compared with run 1
read -r rc ms < <(timed deploy/slurm/gpubench-node.sh "$A" "$R/fleet" > "$R/fleet-node.log" 2>&1)
log "--device all (gpubench-node.sh): exit $rc, $ms ms"
"$B" compare "$R/$short-run1.json" "$R"/fleet/*/GPU-*.json > "$R/device-all-vs-run1.txt" 2>&1
log "compare run1 vs --device all: exit $? $(grep -o '[0-9]* REGRESSED[^.]*' "$R/device-all-vs-run1.txt" | head -1)"
# health profile against the class envelope (other cards' runs plus these)
mkdir -p "$R/env"; [ -n "$envelope" ] && cp -r "$envelope"/. "$R/env/"; cp "$R"/$short-run[23].json "$R/env/" 2>/dev/null
read -r rc ms < <(timed "$B" health --archive "$A" --envelope "$R/env" --out "$R/health" > "$R/health.log" 2>&1)
log "health: exit $rc, $ms ms: $(head -3 "$R/health.log" | tr '\n' ' ')"
rm -rf "$R/env"
# noisy neighbour against a baseline of runs 1..RUNS
"$B" baseline save "$R"/$short-run*.json --baseline-dir "$R/bl" > "$R/bl.log" 2>&1
NOISY_BASELINE_DIR="$R/bl" scripts/noisy-neighbour.sh "$A" "$R/noisy" > "$R/noisy.log" 2>&1
log "noisy neighbour: exit $? $(tail -1 "$R/noisy.log")"
# --exclusive beside a second process
python3 -c 'import torch,time;a=torch.randn(4096,4096,device="cuda");time.sleep(25)' & p=$!; sleep 12
"$B" --archive "$A" --exclusive --quick --no-baseline -o "$R/excl.json" > "$R/exclusive.log" 2>&1
log "--exclusive beside pid $p: exit $? ($(grep -m1 error "$R/exclusive.log"))"
kill $p 2>/dev/null; wait $p 2>/dev/null
rm -rf "$R/bl"
tar czf "$OUT/s-$short.tar.gz" -C "$OUT" "s-$short" && rm -rf "$R"
