#!/usr/bin/env bash
# The GPU step of the fleet recipe: measure every GPU of this node with the archive and write
# <shared>/<host>/<UUID>.json per GPU plus <shared>/<host>/node.json (how the run ended).
# Runs under Slurm (gpubench-nodes.sbatch, once per node) or by hand on any GPU node:
#   deploy/slurm/gpubench-node.sh ARCHIVE_DIR SHARED_DIR [extra cargo-gpubench arguments]
# ARCHIVE_DIR is the unpacked `cargo gpubench archive` (it holds bin/cargo-gpubench).
# Exits with the run's exit code (0 ok, 1 regression, 3 no GPU, ...; README "Exit codes").
set -uo pipefail
if [ $# -lt 2 ]; then
    echo "usage: $0 ARCHIVE_DIR SHARED_DIR [cargo-gpubench arguments]" >&2
    exit 2
fi
archive=$1
shared=$2
shift 2
host=$(hostname -s)
out="$shared/$host"
mkdir -p "$out" || exit 5
cli="$archive/bin/cargo-gpubench"
if [ ! -x "$cli" ]; then
    echo "error: $cli not found: unpack gpubench-archive.tar.gz first" >&2
    code=5
    reason="no cargo-gpubench in $archive"
else
    # stderr to the job log as it comes and to run.err, through a pipeline (not a process
    # substitution, which the script could read before tee has written the last line)
    { "$cli" --archive "$archive" --device all -o "$out" --no-baseline "$@" 2>&1 1>&3 3>&- |
        tee "$out/run.err" >&2 3>&-; code=${PIPESTATUS[0]}; } 3>&1
    reason=$(grep '^error: ' "$out/run.err" | tail -n 1 | sed 's/^error: //')
fi
# node.json, written atomically, JSON-safe (quotes and backslashes dropped from the reason).
reason=$(printf '%s' "$reason" | tr -d '"\\' | tr '\n\t' '  ')
printf '{"schema":"gpubench.node/1","host":"%s","exit_code":%d,"reason":"%s"}\n' "$host" "$code" "$reason" \
    > "$out/.node.json.tmp" && mv "$out/.node.json.tmp" "$out/node.json"
echo "gpubench on $host: exit $code${reason:+ ($reason)}"
exit "$code"
