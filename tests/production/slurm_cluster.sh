#!/bin/bash
# A real single-node Slurm cluster for the tests: munged, slurmctld and slurmd on this
# machine, everything (config, keys, sockets, state, logs) under one folder, ports picked
# free at start, nothing in /etc touched. CTest runs `start` as the fixture setup and
# `stop` as its cleanup.
#   slurm_cluster.sh BIN SRC start|stop      folder: $HALO3D_SLURM_DIR (default: $TMPDIR/halo3d-slurm)
# After `start`, $HALO3D_SLURM_DIR/env.sh exports SLURM_CONF (and the fake GPU count) for
# the test scripts; every Slurm client the tests run reads that SLURM_CONF.
#
# The node advertises 8 CPUs (on 2 real cores: SlurmdParameters=config_overrides) and,
# when device nodes can be made, 4 GPUs as gres whose File= are stand-in character devices
# (/dev/null's numbers): Slurm then schedules --gpus-per-node and sets CUDA_VISIBLE_DEVICES
# exactly as on a GPU node, while halo3d (no usable GPU) falls back to its host backend.
# shellcheck source=tests/production/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
D=${HALO3D_SLURM_DIR:-${TMPDIR:-/tmp}/halo3d-slurm}

daemon_pids() {
  local f
  for f in "$D/slurmd.pid" "$D/slurmctld.pid" "$D/munge/munged.pid"; do
    [[ -s $f ]] && cat "$f"
  done
  return 0
}

stop() {
  [[ -d $D ]] || { log "no cluster folder $D: nothing to stop"; return 0; }
  if [[ -f $D/slurm.conf && -s $D/slurmctld.pid ]] && alive "$(cat "$D/slurmctld.pid")"; then
    export SLURM_CONF=$D/slurm.conf
    # cancel what is left, so that no job step outlives the cluster
    timeout 10 scancel --full --quiet --user="$(id -un)" 2>/dev/null || true
    local end=$((SECONDS + 20))
    while ((SECONDS < end)) && [[ -n $(timeout 5 squeue -h -o %i 2>/dev/null) ]]; do sleep 0.5; done
  fi
  local pids p
  pids=$(daemon_pids)
  for p in $pids; do kill -TERM "$p" 2>/dev/null || true; done
  local end=$((SECONDS + 15))
  for p in $pids; do
    while alive "$p" && ((SECONDS < end)); do sleep 0.2; done
    alive "$p" && { log "pid $p did not stop on SIGTERM: SIGKILL"; kill -KILL "$p" 2>/dev/null || true; }
  done
  rm -f "$D/env.sh" "$D/munge/munge.key"
  log "cluster in $D stopped (logs kept in $D/log)"
}

start() {
  [[ $(id -u) == 0 ]] || skip "starting slurmctld/slurmd/munged as a test needs root (SlurmdUser=root)"
  local b
  for b in munged munge slurmctld slurmd sbatch srun scontrol sinfo squeue scancel; do
    command -v "$b" >/dev/null || skip "no $b (apt-get install slurm-wlm munge)"
  done
  stop >/dev/null 2>&1 || true # a cluster left over from an interrupted run
  rm -rf "$D"
  mkdir -p "$D"/{state,spool,log,dev,munge,munge-run}
  chmod 700 "$D/munge"
  chmod 755 "$D/munge-run"
  local host
  host=$(hostname -s)

  # munge: its own key and socket; the key never leaves this folder
  dd if=/dev/urandom of="$D/munge/munge.key" bs=1024 count=1 status=none
  chmod 600 "$D/munge/munge.key"
  local sock=$D/munge-run/munge.socket
  munged --force --socket="$sock" --key-file="$D/munge/munge.key" --log-file="$D/log/munged.log" \
    --pid-file="$D/munge/munged.pid" --seed-file="$D/munge/munged.seed" </dev/null >>"$D/log/munged.out" 2>&1 ||
    fail "munged did not start: $(tail -n5 "$D/log/munged.log" 2>/dev/null)"
  wait_for 10 "munged's socket" test -S "$sock"
  munge -S "$sock" -n </dev/null | unmunge -S "$sock" >/dev/null || fail "munge/unmunge round trip failed"

  # two free TCP ports on the loopback for slurmctld and slurmd
  local ports
  ports=$("$PY" -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
  read -r pctl pd <<<"$ports"

  # fake GPUs: character devices with /dev/null's numbers, for gres File=
  local gres_node="" gres_types="" gpus=0 i
  if for i in 0 1 2 3; do mknod "$D/dev/fakegpu$i" c 1 3 || exit 1; done 2>/dev/null; then
    gpus=4 gres_node="Gres=gpu:4" gres_types="GresTypes=gpu"
    echo "NodeName=$host Name=gpu File=$D/dev/fakegpu[0-3]" >"$D/gres.conf"
  else
    log "cannot create device nodes here: the test cluster has no (fake) GPUs"
    : >"$D/gres.conf"
  fi
  : >"$D/plugstack.conf"

  cat >"$D/slurm.conf" <<EOF
# halo3d production-test cluster (written by tests/production/slurm_cluster.sh)
ClusterName=h3dtest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$pctl
SlurmdPort=$pd
AuthType=auth/munge
# cred_expire also holds a requeued job back before it may start again (default 120 s)
AuthInfo=socket=$sock,cred_expire=10
CredType=cred/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$D/plugstack.conf
MailProg=/bin/true
# no cgroups in a test container: processes are tracked by their parent pids
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1,bf_interval=1
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobRequeue=1
KillWait=10
MinJobAge=600
InactiveLimit=0
$gres_types
NodeName=$host NodeAddr=127.0.0.1 CPUs=8 Boards=1 SocketsPerBoard=1 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=4000 $gres_node State=UNKNOWN
# Preemption: a job in h3d-urgent preempts jobs in h3d, which get SIGTERM, GraceTime to
# checkpoint, and are requeued by Slurm (PreemptMode=REQUEUE).
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
PartitionName=h3d Nodes=$host Default=YES MaxTime=INFINITE State=UP PriorityTier=1 PreemptMode=REQUEUE GraceTime=20
PartitionName=h3d-urgent Nodes=$host MaxTime=INFINITE State=UP PriorityTier=10 PreemptMode=OFF
EOF
  export SLURM_CONF=$D/slurm.conf
  # daemons get no terminal fds: CTest waits for the test's pipes to close
  slurmctld -f "$SLURM_CONF" </dev/null >>"$D/log/slurmctld.out" 2>&1 || fail "slurmctld did not start: $(tail -n5 "$D/log/slurmctld.log")"
  slurmd -f "$SLURM_CONF" </dev/null >>"$D/log/slurmd.out" 2>&1 || fail "slurmd did not start: $(tail -n5 "$D/log/slurmd.log")"

  node_idle() {
    local st
    st=$(timeout 5 sinfo -h -n "$host" -o %T 2>/dev/null) || return 1
    case $st in
      idle*) return 0 ;;
      *drain* | *inval* | *down*) timeout 5 scontrol update nodename="$host" state=resume >/dev/null 2>&1 || true; return 1 ;;
      *) return 1 ;;
    esac
  }
  wait_for 60 "node $host to be idle ($(tail -n2 "$D/log/slurmd.log" 2>/dev/null))" node_idle
  timeout 60 srun -N1 -n1 -t 1 true || fail "a one-task srun on the new cluster failed"
  local mpis
  mpis=$(srun --mpi=list 2>&1 | tr -s '\n\t ' ' ')
  cat >"$D/env.sh" <<EOF
export SLURM_CONF=$D/slurm.conf
export HALO3D_TEST_GPUS_PER_NODE=$gpus
EOF
  log "cluster h3dtest up: node $host, 8 CPUs, $gpus fake GPU(s), slurmctld :$pctl, slurmd :$pd, SLURM_CONF=$SLURM_CONF"
  log "srun --mpi=list: $mpis"
}

case $CASE in
  start) start ;;
  stop) stop ;;
  *) fail "usage: slurm_cluster.sh BIN SRC start|stop" ;;
esac
