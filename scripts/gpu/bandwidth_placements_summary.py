"""Summary of scripts/gpu/bandwidth-placements.sh: bandwidth against the peak, and the
run-to-run spread of atomics at 32 and 256 placements."""
import glob, os, statistics, sys

from results_io import load, medians

R = sys.argv[1]
print(open(os.path.join(R, "card.txt")).read().strip())

bw = load(os.path.join(R, "bw-full.json"))
if bw:
    ms = medians(bw)
    print("\n== bandwidth (full profile) ==")
    for k, v in ms.items():
        if k.startswith(("dram/", "l2_bandwidth/", "stream/")):
            print(f"{k:60s} {v:12.2f}")
    for b in bw.get("benchmarks", []):
        if b["id"].startswith(("dram/", "l2_bandwidth/")) and "config" in (b.get("chosen") or {}):
            print(f"  chosen {b['id']}: {b['chosen'].get('config')}")

print("\n== atomics: run-to-run spread of run medians ==")
for p in (32, 256):
    runs = [load(f) for f in sorted(glob.glob(os.path.join(R, f"atomics-p{p}-*.json")))]
    runs = [medians(r) for r in runs if r]
    if not runs:
        continue
    keys = sorted(set.intersection(*[set(r) for r in runs]))
    cvs = []
    print(f"-- {p} placements, {len(runs)} runs")
    for k in keys:
        vals = [r[k] for r in runs]
        mean = statistics.mean(vals)
        if mean == 0 or len(vals) < 2:
            continue
        cv = statistics.stdev(vals) / abs(mean) * 100
        cvs.append(cv)
        print(f"   {k:55s} cv {cv:6.2f} %  median {statistics.median(vals):.4g}")
    if cvs:
        print(f"   median cv {statistics.median(cvs):.2f} %, max {max(cvs):.2f} %")

d = load(os.path.join(R, "default.json"))
if d:
    print(f"\ndefault profile wall time {d.get('wall_time_s', 0):.1f} s, {len(d.get('benchmarks', []))} benchmarks")
