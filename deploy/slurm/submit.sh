#!/usr/bin/env bash
# Submits the fleet recipe: one job of NODES whole GPU nodes (GPUS_PER_NODE GPUs each) that
# runs the GPU step once per node, then the fleet report as a job that runs after it, however
# it ended.
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
gpu=$(sbatch --parsable --nodes="$nodes" --ntasks-per-node=1 --gres=gpu:"$gpus" --chdir="$shared" --export="$env" "$@" \
    "$here/gpubench-nodes.sbatch")
gpu=${gpu%%;*}
fleet=$(sbatch --parsable --dependency=afterany:"$gpu" --chdir="$shared" --export="$env" "$@" \
    "$here/gpubench-fleet.sbatch")
fleet=${fleet%%;*}
echo "GPU job $gpu ($nodes nodes), fleet job $fleet; report: $shared/fleet.txt"
