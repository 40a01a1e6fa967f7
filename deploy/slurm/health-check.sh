#!/usr/bin/env bash
# Slurm HealthCheckProgram: the gpubench health profile on every GPU of this node, judged
# against the class envelope; drains the node with a one-line reason on failure.
# slurm.conf (see slurm.conf.example): HealthCheckProgram=/opt/gpubench/deploy/slurm/health-check.sh
# Settings come from /etc/default/gpubench-health (or the environment):
#   GPUBENCH_ARCHIVE   the unpacked archive (default /opt/gpubench/gpubench-archive)
#   GPUBENCH_ENVELOPE  a class baseline from `cargo gpubench fleet ... --save-envelope PATH`
#   GPUBENCH_HEALTH_ARGS  extra arguments, e.g. "--timeout 40"
set -uo pipefail
[ -r /etc/default/gpubench-health ] && . /etc/default/gpubench-health
archive=${GPUBENCH_ARCHIVE:-/opt/gpubench/gpubench-archive}
args=(health --drain --archive "$archive")
[ -n "${GPUBENCH_ENVELOPE:-}" ] && args+=(--envelope "$GPUBENCH_ENVELOPE")
cli="$archive/bin/cargo-gpubench"
if [ ! -x "$cli" ]; then
    scontrol update nodename="$(hostname -s)" state=drain reason="gpubench health: no $cli"
    exit 5
fi
exec "$cli" "${args[@]}" ${GPUBENCH_HEALTH_ARGS:-}
