#!/usr/bin/env bash
# The machine code of the dissect chase kernels, on a machine with NVRTC and cuobjdump but no
# cargo: compiles every embedded kernel for sm_90 with the archive's CLI (`kernels --out`),
# disassembles each cubin, and prints for every dissect chase kernel the loads it times between
# two reads of the SM clock. Expected on sm_90 (tests/sass.rs, `check_dissect_sass`):
#
#   dissect_{hist,trace}_ca     LDG.E.STRONG.SM        (ld.global.ca)
#   dissect_{hist,trace}_cg     LDG.E.STRONG.GPU       (ld.global.cg)
#   dissect_{hist,trace}_nc     LDG.E.CONSTANT         (ld.global.nc, the read-only path)
#   dissect_{hist,trace}_tex    TEX* or TLD*           (tex.1d, the texture path; never an LDG)
#   dissect_hist_const          LDC ... c[0x3][...]    (the __constant__ array)
#   dissect_hist_tlb            LDG.E.64.STRONG.GPU
#   dissect_timer               no load
#
# Commit $OUT/sass/dissect.sass as tests/fixtures/sass/sm_90-dissect.sass: CI then checks it
# without NVRTC or cuobjdump (`recorded_dissect_sass_times_one_load_of_each_path`).
#
#   scripts/gpu/dissect-sass.sh ARCHIVE.tar.gz|ARCHIVE_DIR [ARCH]
set -uo pipefail
archive=${1:?archive (from cargo gpubench archive)}; arch=${2:-sm_90}
OUT=${OUT:-out}
work=$(mktemp -d)
if [ -d "$archive" ]; then A=$archive; else tar xf "$archive" -C "$work"; A=$work/gpubench-archive; fi
B=$A/bin/cargo-gpubench
tool=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump 2>/dev/null | head -1)
[ -n "$tool" ] || { echo "cuobjdump not found (PATH, /usr/local/cuda/bin)"; exit 2; }
S=$OUT/sass; mkdir -p "$S"
"$B" kernels --arch "$arch" --out "$work/kernels" > "$S/kernels.txt" 2>&1 || { cat "$S/kernels.txt"; exit 1; }
for c in "$work"/kernels/*.cubin; do
    n=$(basename "$c" .cubin)
    "$tool" -sass "$c" > "$S/$n.sass" 2>&1 || echo "cuobjdump failed on $n"
done
cp "$work/kernels/dissect.ptx" "$S/dissect.ptx" 2>/dev/null
"$tool" --version | tail -1 > "$S/cuobjdump-version.txt"
# Per kernel: the memory loads between each pair of consecutive clock reads.
awk '
    /Function : / { fn = $3; clocks = 0; next }
    fn !~ /^dissect_(hist|trace|timer)/ { next }
    /\/\*[0-9a-f]+\*\// {
        line = $0; sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]*/, "", line); sub(/[ \t]*;.*$/, "", line)
        split(line, w, " "); op = (w[1] ~ /^@/) ? w[2] : w[1]
        if (line ~ /SR_CLOCKLO/) {
            kernels[fn] = 1
            if (clocks > 0 && span != "") n[fn "\t" span]++
            clocks++; span = ""; next
        }
        if (clocks > 0 && (op ~ /^LDG/ || op ~ /^TEX/ || op ~ /^TLD/ || (op ~ /^LDC/ && line !~ /c\[0x0\]/)))
            span = span (span == "" ? "" : " + ") op (op ~ /^LDC/ && line ~ /c\[0x3\]/ ? "(c3)" : "")
        if (clocks > 0 && (op ~ /^LDL/ || op ~ /^STL/)) spill[fn] = 1
    }
    END {
        for (f in kernels) {
            any = 0
            for (k in n) { split(k, p, "\t"); if (p[1] == f) { printf "%-22s %3d x %s\n", f, n[k], p[2]; any = 1 } }
            if (!any) printf "%-22s no load between clock reads\n", f
            if (f in spill) printf "%-22s SPILLS to local memory\n", f
        }
    }
' "$S/dissect.sass" | sort > "$S/dissect-timed-loads.txt"
printf '%-22s %s\n' kernel "timed accesses x the loads each holds (one expected)"
cat "$S/dissect-timed-loads.txt"
echo "SASS of every kernel under $S; dissect: $S/dissect.sass"
