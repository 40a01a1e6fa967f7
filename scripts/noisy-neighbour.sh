#!/usr/bin/env bash
# Noisy-neighbour check, for the GPU machine (no cargo, no network; python3 with torch):
# starts a bf16 matrix-multiply loop in a second process on the GPU, runs the archived
# cargo-gpubench with the default profile against the committed baseline, stops the loop, and
# writes the results, the comparison and a short summary to OUT_DIR.
#
#   scripts/noisy-neighbour.sh ARCHIVE_DIR [OUT_DIR]     (OUT_DIR defaults to $OUT, else ./noisy-out)
#
# Expected: 0 REGRESSED; every affected metric INCONCLUSIVE, naming the loop's pid and
# "python3". Exits 0 when that holds, 1 when not, 2 on a usage or set-up error.
#
# The committed baseline is of the H200 class. On another GPU class set NOISY_BASELINE=fresh:
# a clean run without the neighbour is first saved as the baseline in OUT_DIR/baselines; or
# NOISY_BASELINE_DIR=DIR to compare with a baseline already saved in DIR.
set -uo pipefail

archive=${1:-}
out=${2:-${OUT:-noisy-out}}
if [ -z "$archive" ] || [ ! -x "$archive/bin/cargo-gpubench" ]; then
  echo "usage: $0 ARCHIVE_DIR [OUT_DIR]  (ARCHIVE_DIR/bin/cargo-gpubench must exist)" >&2
  exit 2
fi
mkdir -p "$out"
device=${GPUBENCH_DEVICE:-0}

baseline_args=()
if [ -n "${NOISY_BASELINE_DIR:-}" ]; then
  baseline_args=(--baseline-dir "$NOISY_BASELINE_DIR")
elif [ "${NOISY_BASELINE:-committed}" = fresh ]; then
  echo "clean run first, saved as the baseline in $out/baselines"
  "$archive/bin/cargo-gpubench" --archive "$archive" --device "$device" --timeout 300 \
    --baseline-dir "$out/baselines" --save-baseline -o "$out/clean-results.json" \
    > "$out/clean.stdout" 2> "$out/clean.stderr" || { echo "the clean run failed:" >&2; tail -5 "$out/clean.stderr" >&2; exit 2; }
  baseline_args=(--baseline-dir "$out/baselines")
fi

# The neighbour: bf16 matmuls back to back until told to stop (a file) or killed.
cat > "$out/neighbour.py" <<'PY'
import os, sys, time, torch
stop, ready = sys.argv[1], sys.argv[2]
dev = torch.device("cuda", int(os.environ.get("GPUBENCH_DEVICE", "0")))
a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
c = a @ b
torch.cuda.synchronize(dev)
open(ready, "w").write(str(os.getpid()))
n = 0
t0 = time.time()
while not os.path.exists(stop):
    for _ in range(20):
        c = a @ b
    torch.cuda.synchronize(dev)
    n += 20
dt = time.time() - t0
print(f"neighbour: {n} matmuls in {dt:.1f} s, {2 * 8192**3 * n / max(dt, 1e-9) / 1e12:.0f} TFLOP/s", flush=True)
PY

stop_file="$out/neighbour.stop"
ready_file="$out/neighbour.ready"
rm -f "$stop_file" "$ready_file"
GPUBENCH_DEVICE=$device python3 "$out/neighbour.py" "$stop_file" "$ready_file" > "$out/neighbour.log" 2>&1 &
neighbour=$!

stop_neighbour() {
  touch "$stop_file"
  for _ in $(seq 1 100); do
    kill -0 "$neighbour" 2>/dev/null || break
    sleep 0.1
  done
  kill "$neighbour" 2>/dev/null
  wait "$neighbour" 2>/dev/null
}
trap stop_neighbour EXIT

for _ in $(seq 1 600); do
  [ -s "$ready_file" ] && break
  kill -0 "$neighbour" 2>/dev/null || { echo "the neighbour died:" >&2; cat "$out/neighbour.log" >&2; exit 2; }
  sleep 0.2
done
if [ ! -s "$ready_file" ]; then
  echo "the neighbour did not start within 120 s" >&2
  exit 2
fi
echo "neighbour running: pid $(cat "$ready_file")"
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv > "$out/nvidia-smi-apps.csv" 2>&1

"$archive/bin/cargo-gpubench" --archive "$archive" --device "$device" --timeout 300 "${baseline_args[@]}" \
  -o "$out/results.json" \
  --verdicts-json "$out/comparison.json" \
  --markdown "$out/comparison.md" \
  > "$out/run.stdout" 2> "$out/run.stderr"
rc=$?
echo "$rc" > "$out/exit-code"
stop_neighbour
trap - EXIT
cat "$out/neighbour.log"

python3 - "$out" "$(cat "$ready_file")" "$rc" <<'PY'
import json, os, sys
out, pid, rc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
path = os.path.join(out, "comparison.json")
if not os.path.exists(path):
    print(f"no comparison written (exit code {rc}); see {out}/run.stderr")
    sys.exit(1)
c = json.load(open(path))
metrics = c.get("metrics", [])
count = {}
for m in metrics:
    count[m["verdict"]] = count.get(m["verdict"], 0) + 1
named = [m for m in metrics if f"pid {pid}" in m.get("reason", "")]
# In a container NVML may report the neighbour under a host pid: count any named process too.
shared = [m for m in metrics if "used this GPU during the run" in m.get("reason", "")]
regressed = [m for m in metrics if m["verdict"].lower() == "regressed"]
print(f"exit code {rc}; verdicts {count}; {len(shared)} of {len(metrics)} metrics name another process, "
      f"{len(named)} its pid {pid}")
for m in shared[:1]:
    print(f"  e.g. {m['benchmark']}:{m['metric']}: {m['reason']}")
for m in regressed[:10]:
    print(f"  REGRESSED {m['benchmark']}:{m['metric']}: {m['reason']}")
ok = not regressed and len(shared) > 0 and rc == 0
print("noisy neighbour: " + ("PASS (0 REGRESSED, the neighbour named)" if ok else "FAIL"))
sys.exit(0 if ok else 1)
PY
