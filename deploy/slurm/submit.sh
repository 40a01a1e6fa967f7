#!/usr/bin/env bash
# Submits the fleet recipe: an array of NODES tasks (one per GPU node, GPUS_PER_NODE GPUs
# each), then the fleet report as a job that runs after all of them, however they ended.
#   deploy/slurm/submit.sh NODES ARCHIVE_DIR SHARED_DIR [GPUS_PER_NODE] [extra sbatch arguments]
set -euo pipefail
if [ $# -lt 3 ]; then
    echo "usage: $0 NODES ARCHIVE_DIR SHARED_DIR [GPUS_PER_NODE] [sbatch arguments]" >&2
    exit 2
fi
nodes=$1
archive=$(readlink -f "$2")
shared=$(readlink -f "$3")
gpus=${4:-8}
shift $(($# >= 4 ? 4 : 3))
here=$(dirname "$(readlink -f "$0")")
mkdir -p "$shared"
env="ALL,GPUBENCH_ARCHIVE=$archive,GPUBENCH_SHARED=$shared,GPUBENCH_DEPLOY=$here"
array=$(sbatch --parsable --array=0-$((nodes - 1)) --gres=gpu:"$gpus" --chdir="$shared" --export="$env" "$@" \
    "$here/gpubench-array.sbatch")
array=${array%%;*}
fleet=$(sbatch --parsable --dependency=afterany:"$array" --chdir="$shared" --export="$env" "$@" \
    "$here/gpubench-fleet.sbatch")
fleet=${fleet%%;*}
echo "array job $array, fleet job $fleet; report: $shared/fleet.txt"
