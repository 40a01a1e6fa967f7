#!/usr/bin/env bash
# The Slurm recipe (deploy/slurm/) against a real one-node Slurm cluster on this machine:
# munged, slurmctld and slurmd from the distribution's packages, started and stopped here.
#  1. the GPU job (one task per node, srun) runs the GPU step; without a GPU it fails cleanly
#     with exit code 3;
#  2. the dependent fleet job reports the node as failed with that reason and prints its
#     drain command (without running it);
#  3. the success path: with a stand-in archive whose GPU step writes a recorded result (the
#     real CLI still runs the fleet step), the node's run ends 0 and the fleet job reports it
#     OK and exits 0;
#  4. the health check, wired as HealthCheckProgram, drains the node with its no-GPU reason.
# Fails (exit 1, with the reason) where it cannot run: not root, packages that cannot be
# installed, daemons that do not start. Nothing is skipped.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

fail() { echo "slurm test: FAILED: $*"; exit 1; }

[ "$(id -u)" = 0 ] || fail "not root (needs to install and start munge and Slurm)"
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    command -v apt-get >/dev/null || fail "no apt-get to install slurm-wlm and munge"
    export DEBIAN_FRONTEND=noninteractive
    timeout 300 apt-get install -y --no-install-recommends slurm-wlm munge >/tmp/slurm-test-apt.log 2>&1 ||
        { timeout 120 apt-get update >/dev/null 2>&1 &&
          timeout 300 apt-get install -y --no-install-recommends slurm-wlm munge >/tmp/slurm-test-apt.log 2>&1; } ||
        fail "apt-get install slurm-wlm munge failed (see /tmp/slurm-test-apt.log: $(tail -n 1 /tmp/slurm-test-apt.log))"
fi
if [ -e /usr/lib/x86_64-linux-gnu/libcuda.so.1 ] || [ -e /usr/lib64/libcuda.so.1 ]; then
    fail "this machine has a CUDA driver: the test expects the no-GPU failure"
fi

cargo build -q -p cargo-gpubench || fail "cargo build"
work=$(mktemp -d /tmp/gpubench-slurm.XXXXXX)
chmod 755 "$work"
host=$(hostname -s)
# A stand-in for the unpacked archive: the CLI is all the no-GPU path reaches.
mkdir -p "$work/archive/bin" "$work/shared" "$work/spool/ctld" "$work/spool/d" "$work/munge" "$work/munge-run"
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
cp "$target_dir/debug/cargo-gpubench" "$work/archive/bin/"

pids=()
cleanup() {
    for f in "$work"/slurmd.pid "$work"/slurmctld.pid "$work"/munge/munged.pid; do
        [ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null
    done
    sleep 1
    [ -n "${GPUBENCH_SLURM_KEEP:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT

# munge: a key of our own, a socket in our folder.
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chown -R munge:munge "$work/munge" "$work/munge-run" 2>/dev/null
chmod 700 "$work/munge"; chmod 755 "$work/munge-run"; chmod 400 "$work/munge/munge.key"
sock="$work/munge-run/munge.socket"
runuser -u munge -- munged --key-file="$work/munge/munge.key" --socket="$sock" \
    --pid-file="$work/munge/munged.pid" --log-file="$work/munge/munged.log" --seed-file="$work/munge/seed" ||
    fail "munged does not start here ($(tail -n 1 "$work/munge/munged.log" 2>/dev/null))"

cpus=$(nproc)
mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
conf="$work/slurm.conf"
write_conf() {
    cat >"$conf" <<CONF
ClusterName=gpubenchci
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
StateSaveLocation=$work/spool/ctld
SlurmdSpoolDir=$work/spool/d
SlurmctldPort=16817
SlurmdPort=16818
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
GresTypes=gpu
NodeName=$host CPUs=$cpus RealMemory=$mem Gres=gpu:1 State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP
$1
CONF
    # A stand-in GPU (a character device) so that --gres=gpu:1 schedules here.
    echo "NodeName=$host Name=gpu File=/dev/null" >"$work/gres.conf"
}
write_conf ""
export SLURM_CONF=$conf
slurmctld -f "$conf" || fail "slurmctld did not start ($(tail -n 3 "$work/slurmctld.log" 2>/dev/null))"
slurmd -f "$conf" || fail "slurmd did not start ($(tail -n 3 "$work/slurmd.log" 2>/dev/null))"
for _ in $(seq 30); do
    sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed)' && break
    sleep 1
done
sinfo -h -o %T | grep -qE '^(idle|mixed)' || fail "the node did not come up: $(sinfo 2>&1); $(tail -n 5 "$work/slurmd.log")"

# Submits the recipe (one node, one GPU) with ARCHIVE into SHARED and waits for the fleet job;
# sets $state to how it ended.
run_recipe() {
    local out fleet_job
    out=$(deploy/slurm/submit.sh 1 "$1" "$2" 1) || fail "submit: $out"
    echo "$out"
    fleet_job=$(echo "$out" | sed -n 's/.*fleet job \([0-9]*\).*/\1/p')
    for _ in $(seq 120); do
        state=$(scontrol show job "$fleet_job" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
        case "$state" in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) break ;; esac
        sleep 1
    done
    echo "fleet job $fleet_job: $state"
}

# 1 and 2: the GPU job (no GPU here) and the dependent fleet job.
run_recipe "$work/archive" "$work/shared"
node_json="$work/shared/$host/node.json"
[ -f "$node_json" ] || fail "no $node_json (GPU job output: $(cat "$work"/shared/gpubench-*.out 2>/dev/null))"
cat "$node_json"
grep -q '"exit_code":3' "$node_json" || fail "the GPU step did not fail with the no-GPU exit code 3"
grep -q '"reason":"no CUDA' "$node_json" || fail "the node status lacks the no-GPU reason"
report="$work/shared/fleet.txt"
[ -f "$report" ] || fail "the fleet job wrote no report ($(cat "$work"/shared/gpubench-fleet-*.out 2>/dev/null))"
cat "$report"
grep -q "node $host FAILED (exit 3): no CUDA" "$report" || fail "the fleet report does not name the failed node"
grep -q "scontrol update 'nodename=$host' state=drain 'reason=gpubench: run failed (exit 3): no CUDA" "$report" ||
    fail "the fleet report does not print the drain command"
[ "$state" = FAILED ] || fail "the fleet job should end FAILED (exit 9), it ended $state"
sinfo -h -o %T | grep -qE '^(idle|mixed)' || fail "the fleet job drained the node: it must only print the command"

# 3: the success path. The stand-in archive's CLI writes a recorded run for the GPU step and
# hands every other command (the fleet step) to the real CLI.
mkdir -p "$work/archive-ok/bin" "$work/shared-ok"
cp "$repo/tests/fixtures/recorded/h100-default.json.gz" "$work/archive-ok/recorded.json.gz"
cat >"$work/archive-ok/bin/cargo-gpubench" <<SH
#!/usr/bin/env bash
# Stand-in GPU step: the recorded run as this node's result.
[ "\$1" = fleet ] && exec "$work/archive/bin/cargo-gpubench" "\$@"
out=""
while [ \$# -gt 0 ]; do
    [ "\$1" = -o ] && out=\$2
    shift
done
[ -n "\$out" ] || { echo "error: stand-in needs -o DIR" >&2; exit 2; }
gzip -dc "$work/archive-ok/recorded.json.gz" >"\$out/recorded-run.json"
SH
chmod +x "$work/archive-ok/bin/cargo-gpubench"
run_recipe "$work/archive-ok" "$work/shared-ok"
cat "$work/shared-ok/$host/node.json" 2>/dev/null
grep -q '"exit_code":0' "$work/shared-ok/$host/node.json" ||
    fail "the stand-in GPU step did not end 0 ($(cat "$work"/shared-ok/gpubench-*.out 2>/dev/null))"
report="$work/shared-ok/fleet.txt"
[ -f "$report" ] || fail "the fleet job wrote no report ($(cat "$work"/shared-ok/gpubench-fleet-*.out 2>/dev/null))"
cat "$report"
grep -q "1 cards in 1 groups: 0 outlier cards, 0 failed nodes" "$report" || fail "the fleet report does not find the node OK"
grep -q "scontrol update" "$report" && fail "the fleet report asks to drain a node that is OK"
[ "$state" = COMPLETED ] || fail "the fleet job of an OK node should end COMPLETED (exit 0), it ended $state"

# 3: the health check as HealthCheckProgram drains the node with its no-GPU reason.
cat >"$work/health.env" <<ENV
GPUBENCH_ARCHIVE=$work/archive
ENV
cat >"$work/health-check.sh" <<SH
#!/usr/bin/env bash
export SLURM_CONF=$conf
set -a; . $work/health.env; set +a
exec $repo/deploy/slurm/health-check.sh
SH
chmod +x "$work/health-check.sh"
kill "$(cat "$work/slurmd.pid")"; sleep 1
write_conf "HealthCheckProgram=$work/health-check.sh
HealthCheckInterval=5
HealthCheckNodeState=ANY"
scontrol reconfigure || fail "scontrol reconfigure"
slurmd -f "$conf" || fail "slurmd did not restart"
reason=""
for _ in $(seq 60); do
    reason=$(scontrol show node "$host" | sed -n 's/^ *Reason=\(.*\)/\1/p')
    case "$reason" in "gpubench health: no CUDA"*) break ;; esac
    sleep 1
done
scontrol show node "$host" | grep -E 'State=|Reason='
scontrol show node "$host" | grep -qE 'State=[A-Z+]*DRAIN' || fail "the health check did not drain the node"
case "$reason" in
    "gpubench health: no CUDA"*) ;;
    *) fail "drain reason is '$reason', expected the no-GPU reason" ;;
esac
echo "slurm test: PASSED (GPU step exit 3, fleet reports the failed node; stand-in GPU step OK, fleet reports the node OK; health check drained $host: $reason)"
