#!/bin/bash
# Submits halo3d batch jobs: one rank per GPU (--ntasks-per-node = --gpus-per-node), a new
# unique results folder per run or study (never an earlier one's), the job log inside it.
#
# Usage:
#   jobs/submit.sh solve  [options] [-- HALO3D_SOLVE_OPTIONS...]
#   jobs/submit.sh weak   [options] [--local NX,NY,NZ] [--counts 1,2,4,...] [-- HALO3D_SOLVE_OPTIONS...]
#   jobs/submit.sh strong [options] [--grid NX,NY,NZ]  [--counts 1,2,4,...] [-- HALO3D_SOLVE_OPTIONS...]
# Examples:
#   jobs/submit.sh solve -p gpu -A proj -t 04:00:00 -N 2 -g 4 -- --grid 1024,1024,1024 --tol 1e-8
#   jobs/submit.sh weak -N 4 -g 4 --local 256,256,256          # 1,2,4,8,16 GPUs in one allocation
#   jobs/submit.sh strong -N 2 -g 4 --grid 512,512,512 --counts 1,2,4,8
#
# Options (default in brackets; each has an environment variable, which jobs/site.sh may set):
#   -p, --partition P        [HALO3D_PARTITION; unset: the cluster's default partition]
#   -A, --account A          [HALO3D_ACCOUNT; unset: your default account]
#   -q, --qos Q              [HALO3D_QOS; unset]
#   -t, --time T             [HALO3D_TIME=01:00:00]
#   -N, --nodes N            [HALO3D_NODES=1]
#   -g, --gpus-per-node G    [HALO3D_GPUS_PER_NODE=1]; 0: CPU nodes, no GPU requested
#   --tasks-per-node T       [HALO3D_TASKS_PER_NODE; default G, or 1 when G=0]
#   --cpus-per-task C        [HALO3D_CPUS_PER_TASK; unset: the site's default]
#   --signal-lead S          SIGUSR1 this many seconds before the time limit [HALO3D_SIGNAL_LEAD;
#                            default 300, or a quarter of a time limit under 20 minutes: Slurm
#                            signals as soon as less than S seconds are left, so S must stay
#                            well below the time limit]
#   --results DIR            root of the results folders [HALO3D_RESULTS=./results]
#   --name NAME              job name and folder prefix [halo3d-KIND]
#   --checkpoint-every N     solve: iterations between checkpoints [HALO3D_CHECKPOINT_EVERY=1000]
#   --run-dir DIR            solve: use this existing run folder instead of a new one, and
#                            continue from its checkpoint.h5 (after a crash or a cancelled job)
#   --counts LIST            weak/strong: rank (GPU) counts [HALO3D_COUNTS; 1,2,4,... up to N*T]
#   --local NX,NY,NZ         weak: points per rank [HALO3D_LOCAL=256,256,256]
#   --grid NX,NY,NZ          strong: global points [HALO3D_GRID=512,512,512]
#   --repeats R              weak/strong: runs per count, the median is used [HALO3D_REPEATS=1]
#   --sbatch-flags "..."     more sbatch options, word-split [HALO3D_SBATCH_FLAGS]
#   --dry-run                print the sbatch command, submit nothing
# After `--`: halo3d solve options. For solve they are the run; for weak/strong they replace
# the default "--rhs random --seed 1 --tol 1e-12 --max-iters 200" (--grid and --procs are
# set per point). Files (--output, --report, --checkpoint) are the scripts' business.
#
# Output (stdout, one per line, for scripts): HALO3D_JOB_ID=..., HALO3D_RUN_DIR=..., HALO3D_LOG=...
# Other environment: HALO3D_BIN, HALO3D_SRUN_MPI, HALO3D_SRUN_FLAGS, HALO3D_BIND,
# HALO3D_PYTHON (study tables; default: python3 or /usr/bin/python3, whichever has numpy and
# matplotlib): see jobs/slurm/*.sbatch. Exports go to the
# job (sbatch --export=ALL).
set -euo pipefail

jobs_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib/common.sh
source "$jobs_dir/lib/common.sh"
h3d_load_site "$jobs_dir"

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

(($#)) || { usage >&2; exit 2; }
case $1 in
  -h | --help) usage; exit 0 ;;
  solve | weak | strong) kind=$1; shift ;;
  *) h3d_die "first argument: solve, weak or strong (not '$1'); see --help" ;;
esac

partition=${HALO3D_PARTITION:-} account=${HALO3D_ACCOUNT:-} qos=${HALO3D_QOS:-}
time_limit=${HALO3D_TIME:-01:00:00} nodes=${HALO3D_NODES:-1} gpn=${HALO3D_GPUS_PER_NODE:-1}
tpn=${HALO3D_TASKS_PER_NODE:-} cpt=${HALO3D_CPUS_PER_TASK:-} lead=${HALO3D_SIGNAL_LEAD:-}
results=${HALO3D_RESULTS:-$PWD/results} name='' every=${HALO3D_CHECKPOINT_EVERY:-1000}
counts=${HALO3D_COUNTS:-} local_size=${HALO3D_LOCAL:-256,256,256} grid=${HALO3D_GRID:-512,512,512}
repeats=${HALO3D_REPEATS:-1} sbatch_flags=${HALO3D_SBATCH_FLAGS:-} dry=0 reuse_dir=

need() { [[ $# -ge 2 ]] || h3d_die "$1 needs a value"; }
while (($#)); do
  case $1 in
    -h | --help) usage; exit 0 ;;
    -p | --partition) need "$@"; partition=$2; shift 2 ;;
    -A | --account) need "$@"; account=$2; shift 2 ;;
    -q | --qos) need "$@"; qos=$2; shift 2 ;;
    -t | --time) need "$@"; time_limit=$2; shift 2 ;;
    -N | --nodes) need "$@"; nodes=$2; shift 2 ;;
    -g | --gpus-per-node) need "$@"; gpn=$2; shift 2 ;;
    --tasks-per-node) need "$@"; tpn=$2; shift 2 ;;
    --cpus-per-task) need "$@"; cpt=$2; shift 2 ;;
    --signal-lead) need "$@"; lead=$2; shift 2 ;;
    --results) need "$@"; results=$2; shift 2 ;;
    --name) need "$@"; name=$2; shift 2 ;;
    --checkpoint-every) need "$@"; every=$2; shift 2 ;;
    --run-dir) need "$@"; reuse_dir=$2; shift 2 ;;
    --counts) need "$@"; counts=$2; shift 2 ;;
    --local) need "$@"; local_size=$2; shift 2 ;;
    --grid) need "$@"; grid=$2; shift 2 ;;
    --repeats) need "$@"; repeats=$2; shift 2 ;;
    --sbatch-flags) need "$@"; sbatch_flags=$2; shift 2 ;;
    --dry-run) dry=1; shift ;;
    --) shift; break ;;
    *) h3d_die "unknown option $1 (halo3d options go after --); see --help" ;;
  esac
done
halo_args=("$@")

isnum() { [[ $2 =~ ^[0-9]+$ ]] || h3d_die "$1 $2: expected a whole number"; }
isnum --nodes "$nodes"; isnum --gpus-per-node "$gpn"
limit_s=$(h3d_slurm_seconds "$time_limit") || h3d_die "--time $time_limit: not a Slurm time (MM, MM:SS, HH:MM:SS, D-HH[:MM[:SS]])"
if [[ -z $lead ]]; then
  # the default must not fire at once in a short job (and requeue it again and again)
  lead=300
  ((limit_s > 0 && limit_s < 4 * lead)) && lead=$((limit_s / 4))
else
  isnum --signal-lead "$lead"
  ((limit_s == 0 || lead < limit_s)) || h3d_die "--signal-lead $lead is not shorter than --time $time_limit: the job would be signalled as soon as it starts"
  ((limit_s == 0 || 2 * lead <= limit_s)) || h3d_warn "--signal-lead $lead s is more than half of --time $time_limit"
fi
isnum --checkpoint-every "$every"; isnum --repeats "$repeats"
((nodes >= 1)) || h3d_die "--nodes must be at least 1"
[[ -z $tpn ]] && tpn=$((gpn > 0 ? gpn : 1))
isnum --tasks-per-node "$tpn"
((tpn >= 1)) || h3d_die "--tasks-per-node must be at least 1"
((gpn == 0 || tpn == gpn)) || h3d_warn "--tasks-per-node $tpn != --gpus-per-node $gpn: not one rank per GPU"
[[ -z $cpt ]] || isnum --cpus-per-task "$cpt"
h3d_reject_owned_options "${halo_args[@]}"
name=${name:-halo3d-$kind}
[[ $name =~ ^[A-Za-z0-9._-]+$ ]] || h3d_die "--name $name: letters, digits, . _ - only"

# The binary must exist where the job runs: resolve it now, absolute, and hand it over.
HALO3D_BIN=$(h3d_find_bin "$jobs_dir")
export HALO3D_BIN HALO3D_JOBS_DIR=$jobs_dir HALO3D_RESULTS=$results HALO3D_CHECKPOINT_EVERY=$every

sb=(sbatch --parsable --job-name="$name" --nodes="$nodes" --ntasks-per-node="$tpn" --time="$time_limit"
    --signal="USR1@$lead" --requeue --open-mode=append --export=ALL)
((gpn > 0)) && sb+=(--gpus-per-node="$gpn")
[[ -n $cpt ]] && sb+=(--cpus-per-task="$cpt")
[[ -n $partition ]] && sb+=(--partition="$partition")
[[ -n $account ]] && sb+=(--account="$account")
[[ -n $qos ]] && sb+=(--qos="$qos")
read -r -a extra <<<"$sbatch_flags"
sb+=("${extra[@]}")

if [[ -n $reuse_dir ]]; then
  [[ $kind == solve ]] || h3d_die "--run-dir is for solve (a study continues with scaling.sbatch --study-dir)"
  [[ -d $reuse_dir ]] || h3d_die "--run-dir $reuse_dir: no such folder"
  dir=$(cd "$reuse_dir" && pwd)
  [[ -f $dir/checkpoint.h5 ]] || h3d_warn "$dir has no checkpoint.h5: the solve starts from scratch"
elif ((dry)); then
  dir="$results/$name-YYYYmmdd-HHMMSS"
else
  dir=$(h3d_unique_dir "$results" "$name")
fi
sb+=(--output="$dir/slurm-%j.out")

case $kind in
  solve)
    script=(--run-dir "$dir" -- "${halo_args[@]}")
    sb+=("$jobs_dir/slurm/solve.sbatch")
    ;;
  weak | strong)
    max=$((nodes * tpn))
    if [[ -z $counts ]]; then
      counts=1
      for ((n = 2; n <= max; n *= 2)); do counts+=,$n; done
      # a final partial power of two still shows the full allocation
      [[ ,$counts, == *,$max,* ]] || counts+=,$max
    fi
    [[ $counts =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || h3d_die "--counts $counts: expected e.g. 1,2,4,8"
    IFS=, read -r -a cl <<<"$counts"
    for n in "${cl[@]}"; do ((n <= max)) || h3d_die "--counts: $n ranks do not fit $nodes node(s) x $tpn task(s)"; done
    if [[ $kind == weak ]]; then size=(--local "$local_size"); h3d_parse3 "$local_size" --local >/dev/null
    else size=(--grid "$grid"); h3d_parse3 "$grid" --grid >/dev/null; fi
    script=(--study "$kind" --study-dir "$dir" --counts "$counts" --repeats "$repeats" "${size[@]}")
    ((${#halo_args[@]})) && script+=(-- "${halo_args[@]}")
    sb+=("$jobs_dir/slurm/scaling.sbatch")
    ;;
esac

if ((dry)); then
  printf '%q ' "${sb[@]}" "${script[@]}"
  printf '\n'
  exit 0
fi
# Without a Slurm cluster (no sbatch, or no controller to reach), the same run or study
# runs on this machine with mpirun: say so in the error.
case $kind in
  solve) here="jobs/run-workstation.sh solve ..." ;;
  *) here="jobs/scaling-workstation.sh $kind [--local|--grid ...] [--counts ...] [-- ...]" ;;
esac
if ! command -v sbatch >/dev/null 2>&1; then
  [[ -n $reuse_dir ]] || rmdir "$dir" 2>/dev/null || true
  h3d_die "sbatch not found (no Slurm here); on this machine run: $here" 1
fi
out=$("${sb[@]}" "${script[@]}") || { [[ -n $reuse_dir ]] || rmdir "$dir" 2>/dev/null || true; h3d_die "sbatch failed (without a Slurm cluster, run on this machine: $here)" 1; }
job=${out%%;*}
echo "HALO3D_JOB_ID=$job"
echo "HALO3D_RUN_DIR=$dir"
echo "HALO3D_LOG=$dir/slurm-$job.out"
gpus_note=; ((gpn > 0)) && gpus_note=", $gpn GPU(s)/node"
h3d_log "submitted $kind job $job ($nodes node(s) x $tpn task(s)$gpus_note); results in $dir" >&2
