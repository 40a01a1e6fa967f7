"""Summary table of scripts/gpu/validate.sh: bandwidth against the peak, kernel clock against
NVML's, wall times, dissect facts."""
import glob, os, statistics, sys

from results_io import load, medians

what, R = sys.argv[1], sys.argv[2]
print(open(os.path.join(R, "card.txt")).read().strip())

KEYS = ["dram/copy:efficiency", "dram/scale:efficiency", "dram/add:efficiency", "dram/triad:efficiency",
        "dram/read:efficiency", "dram/write:efficiency", "dram/triad:bandwidth",
        "l2_bandwidth/read:bandwidth", "l2_bandwidth/read:bytes_per_clk_per_sm",
        "l2_bandwidth/private:bandwidth", "l2_bandwidth/private:bytes_per_clk_per_sm",
        "l2_bandwidth/whole:bandwidth", "l2_bandwidth/whole:bytes_per_clk_per_sm",
        "latency/cg/4MiB:cycles_per_access", "latency/cg/256MiB:cycles_per_access"]

files = sorted(glob.glob(os.path.join(R, "after-*.json"))) + sorted(glob.glob(os.path.join(R, "bw-full.json")))
docs = [(os.path.basename(f), load(f)) for f in files]
docs = [(n, d) for n, d in docs if d]
if docs:
    print("\n" + " " * 44 + "".join(f"{n[:-5]:>12s}" for n, _ in docs))
    ms = [medians(d) for _, d in docs]
    for k in KEYS:
        row = [m.get(k) for m in ms]
        if any(v is not None for v in row):
            print(f"{k:44s}" + "".join(f"{v:12.2f}" if v is not None else f"{'-':>12s}" for v in row))
    for n, d in docs:
        clocks = []
        for b in d["benchmarks"]:
            cyc = sum(c["cycles"] for c in b.get("clocks", []) if c)
            ns = sum(c["ns"] for c in b.get("clocks", []) if c)
            if ns > 0:
                clocks.append(cyc / ns * 1e3)
        nvml = [t["sm_mhz"] for b in d["benchmarks"] for t in b.get("telemetry", []) if t and t.get("sm_mhz")]
        print(f"{n}: wall {d.get('wall_time_s', 0):.1f} s, kernel clock max {max(clocks):.1f} MHz "
              f"(median {statistics.median(clocks):.1f}), NVML max {max(nvml) if nvml else float('nan'):.0f} MHz")
for f in sorted(glob.glob(os.path.join(R, "dissect-*", "dissect.json"))):
    d = load(f)
    if not d:
        continue
    facts = (d.get("dissection") or {}).get("facts") or []
    line = ", ".join(f"{x.get('name')}={x.get('value')}({x.get('confidence', 0):.2f})" for x in facts
                     if isinstance(x, dict) and x.get("name", "").startswith(("l2.", "l1.size", "tlb.")))
    print(f"{os.path.basename(os.path.dirname(f))}: {line[:900]}")
