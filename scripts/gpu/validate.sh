#!/usr/bin/env bash
# One device call on one card, from archives built here (`cargo gpubench archive`, unpacked or
# as a .tar.xz / .tar.gz):
#   runs    BEFORE.tar.xz AFTER.tar.xz N  one default run of BEFORE (none when BEFORE is -), N of
#           AFTER (same card), then
#           AFTER's run 1 against BEFORE's run, leave-one-run-out calibration over AFTER's runs,
#           and every AFTER run against the committed class baseline
#   extra   AFTER.tar.xz                  three dissect runs, the full DRAM / L2 / stream profile,
#           and the dissect kernels' SASS where cuobjdump exists
# Results go to $OUT/<what>-<card>.tar.gz and the summary to $OUT/<what>-<card>.txt.
set -uo pipefail
what=${1:?runs|extra}; shift
OUT=${OUT:-out}
# an archive: an unpacked folder, or a .tar.xz / .tar.gz of one
unpack() {
    if [ -d "$1" ]; then echo "$1"; return; fi
    local d; d=$(mktemp -d); tar xf "$1" -C "$d"; echo "$d/gpubench-archive"
}
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1); short=${uuid:4:8}
R=$OUT/$what-$short; mkdir -p "$R"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv > "$R/card.txt"
# t CMD... > FILE: runs CMD; `took` then says its exit code and wall time
t() { local s; s=$(date +%s%N); "$@"; local rc=$?; echo "exit $rc, $(( ($(date +%s%N) - s) / 1000000 )) ms" > "$R/.took"; }
took() { cat "$R/.took"; }
log() { echo "$*" | tee -a "$R/log.txt"; }
case "$what" in
runs)
    after=$(unpack "$2"); n=${3:-5}; B=$after/bin/cargo-gpubench
    if [ "$1" != - ]; then
        before=$(unpack "$1")
        "$before/bin/cargo-gpubench" --archive "$before" --no-baseline -o "$R/before.json" > "$R/before.log" 2>&1
        log "before run: exit $?"
    fi
    for i in $(seq 1 "$n"); do
        t "$B" --archive "$after" --no-baseline -o "$R/after-$i.json" > "$R/after-$i.log" 2>&1; log "after run $i: $(took)"
    done
    if [ -f "$R/before.json" ]; then
        "$B" compare "$R/before.json" "$R/after-1.json" --all > "$R/refactor-compare.txt" 2>&1
        log "after run 1 vs before: exit $? $(grep -Eo '[0-9]+ REGRESSED.*' "$R/refactor-compare.txt" | tail -1)"
    fi
    "$B" calibrate "$R"/after-*.json > "$R/calibrate.txt" 2>&1; log "calibrate: exit $?"
    case "$(sed -n 2p "$R/card.txt")" in
        *H100*) class=baselines/nvidia-h100-80gb-hbm3-cc90-132sm-79gib/class.json.xz ;;
        *) class=baselines/nvidia-h200-cc90-132sm-140gib/class.json.xz ;;
    esac
    for i in $(seq 1 "$n"); do
        "$B" compare "$class" "$R/after-$i.json" > "$R/vs-class-$i.txt" 2>&1
        log "after run $i vs $class: exit $? $(grep -Eo '[0-9]+ REGRESSED.*' "$R/vs-class-$i.txt" | head -1)"
    done
    "$B" chipmap "$R/after-1.json" --benchmark '^latency/cg/(4MiB|256MiB)$' --out "$R/maps" > "$R/maps.txt" 2>&1
    ;;
extra)
    after=$(unpack "$1"); B=$after/bin/cargo-gpubench
    for d in 1 2 3; do
        t "$B" dissect --out "$R/dissect-$d" > "$R/dissect-$d.log" 2>&1; log "dissect $d: $(took)"
        rm -rf "$R/dissect-$d/plots"
    done
    t "$B" --archive "$after" --full --bench dram --bench l2_bandwidth --bench stream --no-baseline -o "$R/bw-full.json" > "$R/bw-full.log" 2>&1; log "full bandwidth: $(took)"
    if [ -x scripts/gpu/dissect-sass.sh ]; then
        t env OUT="$R" scripts/gpu/dissect-sass.sh "$after" sm_90 > "$R/sass.log" 2>&1; log "sass: $(took)"
    fi
    ;;
esac
python3 scripts/gpu/validate_summary.py "$what" "$R" > "$OUT/$what-$short.txt" 2>&1
cat "$R/log.txt" >> "$OUT/$what-$short.txt"
tar czf "$OUT/$what-$short.tar.gz" -C "$OUT" "$what-$short" && rm -rf "$R"
cat "$OUT/$what-$short.txt"
