"""Per-SM values of the runs in a folder (atomics-sm-maps.sh): per run, for every benchmark with
chip maps (shared-memory atomic rates per k, global chain latencies), the median over SMs, the
mean, the quartiles and a histogram of the SMs' values relative to the median; then the other
atomics metrics' run medians."""
import glob
import json
import statistics as st
import sys

folder = sys.argv[1]
for path in sorted(glob.glob(f"{folder}/run-*.json")):
    doc = json.load(open(path))
    print(f"{path.rsplit('/', 1)[-1]} {doc['gpu']['uuid']} sm clock {doc['telemetry'].get('median_sm_mhz', 0):.0f} MHz")
    for bench in doc["benchmarks"]:
        if bench.get("sm_maps"):
            name = bench["id"].split("/", 1)[-1]
            for m in bench["sm_maps"]:
                v = m["values"]
                med, mean = st.median(v), st.mean(v)
                q = st.quantiles(v, n=4)
                bins = {}
                for x in v:
                    b = round((x / med - 1) * 100)
                    bins[b] = bins.get(b, 0) + 1
                hist = " ".join(f"{b:+d}%:{n}" for b, n in sorted(bins.items()))
                print(f"  {name} {m['metric']:6s} SMs {len(v):3d} median {med:.4f} mean {mean:.4f} "
                      f"q1 {q[0]:.4f} q3 {q[2]:.4f} min {min(v):.4f} max {max(v):.4f} | {hist}")
    for bench in doc["benchmarks"]:
        if bench["id"].startswith("atomics/") and not bench.get("sm_maps"):
            line = " ".join(f"{m['name']}={st.median(m['samples']):.4g}" for m in bench["metrics"] if m["samples"])
            print(f"  {bench['id']}: {line}")
