#!/bin/bash
# halo3d on one machine without a batch system: one MPI rank per GPU, each pinned to the
# CPUs next to its GPU (jobs/bind.sh); without GPUs, one rank per core (CPU fallback).
#
# Usage: jobs/run-workstation.sh [-n N] [--dry-run] [--] SUBCOMMAND [halo3d options...]
#   jobs/run-workstation.sh solve --grid 256,256,256 --report run.json
#   jobs/run-workstation.sh info
#   HALO3D_NGPUS=2 jobs/run-workstation.sh solve ...   # use only 2 of the GPUs
#
#   -n, --np N    ranks (default: the GPU count; with no GPU, HALO3D_NP or the core count)
#   --dry-run     print the mpirun command line instead of running it
#
# Environment (all optional):
#   HALO3D_BIN           halo3d binary (default: halo3d on PATH, else build*/halo3d of this checkout)
#   HALO3D_NGPUS         GPU count (default: `nvidia-smi -L`; 0 forces the CPU fallback)
#   HALO3D_NP            ranks for the CPU fallback (default: physical cores)
#   HALO3D_MPIRUN        the launcher (default: mpirun)
#   HALO3D_MPIRUN_FLAGS  extra launcher flags, word-split (e.g. "--mca btl self,vader,tcp")
#   HALO3D_BIND          auto|none, see jobs/bind.sh
#   OMP_NUM_THREADS      threads per rank (default: cores/GPUs with GPUs, 1 for the CPU fallback)
#   HALO3D_SITE_ENV      site settings file (default: jobs/site.sh)
# Exit code: halo3d's (0 ok, 2 bad input, 3 not converged, 75 stopped by a signal after a
# checkpoint, ...); 2 for a bad option of this script.
set -euo pipefail

jobs_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib/common.sh
source "$jobs_dir/lib/common.sh"
h3d_load_site "$jobs_dir"

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

np='' dry=0
while (($#)); do
  case $1 in
    -h | --help) usage; exit 0 ;;
    -n | --np) [[ $# -ge 2 ]] || h3d_die "$1 needs a value"; np=$2; shift 2 ;;
    --np=*) np=${1#*=}; shift ;;
    --dry-run) dry=1; shift ;;
    --) shift; break ;;
    *) break ;;
  esac
done
(($#)) || { usage >&2; exit 2; }
[[ -z $np || $np =~ ^[1-9][0-9]*$ ]] || h3d_die "--np $np: expected a positive integer"

bin=$(h3d_find_bin "$jobs_dir")
mpirun=${HALO3D_MPIRUN:-mpirun}
read -r -a extra <<<"${HALO3D_MPIRUN_FLAGS:-}"

# Physical cores (hyperthreads do not help a bandwidth-bound stencil).
cores=$(lscpu -p=CORE,SOCKET 2>/dev/null | grep -v '^#' | sort -u | wc -l) || cores=0
((cores > 0)) || cores=$(getconf _NPROCESSORS_ONLN)  # not nproc: it obeys OMP_NUM_THREADS

# GPUs: HALO3D_NGPUS, else count nvidia-smi's lines; any failure means none.
if [[ -n ${HALO3D_NGPUS:-} ]]; then
  [[ $HALO3D_NGPUS =~ ^[0-9]+$ ]] || h3d_die "HALO3D_NGPUS=$HALO3D_NGPUS: expected a count"
  gpus=$HALO3D_NGPUS
else
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
  gpus=${gpus:-0}
fi

if ((gpus > 0)); then
  # One rank per GPU; bind.sh does the pinning, so mpirun must not bind first.
  np=${np:-$gpus}
  ((np <= gpus)) || h3d_warn "$np ranks on $gpus GPU(s): ranks will share GPUs"
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(( cores / np > 0 ? cores / np : 1 ))}
  launch=("$mpirun" -np "$np" --map-by slot --bind-to none -x OMP_NUM_THREADS -x CUDA_DEVICE_ORDER=PCI_BUS_ID
          "${extra[@]}" "$jobs_dir/bind.sh" "$bin" "$@")
  what="$np rank(s), one per GPU ($gpus GPU(s) found), $OMP_NUM_THREADS thread(s) each"
else
  # CPU fallback: one single-threaded rank per core, each bound to its core.
  np=${np:-${HALO3D_NP:-$cores}}
  [[ $np =~ ^[1-9][0-9]*$ ]] || h3d_die "HALO3D_NP=$np: expected a positive integer"
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
  if ((np * OMP_NUM_THREADS <= cores)); then
    bind=(--map-by "slot:PE=$OMP_NUM_THREADS" --bind-to core)
  else
    # More ranks than cores cannot be bound one per core; let them float.
    h3d_warn "$np rank(s) x $OMP_NUM_THREADS thread(s) > $cores core(s): not binding, oversubscribing"
    bind=(--oversubscribe --bind-to none)
  fi
  launch=("$mpirun" -np "$np" "${bind[@]}" -x OMP_NUM_THREADS "${extra[@]}" "$bin" "$@")
  what="$np rank(s) on CPU cores (no GPU found), $OMP_NUM_THREADS thread(s) each"
fi

if ((dry)); then
  printf '%q ' "${launch[@]}"
  printf '\n'
  exit 0
fi
h3d_log "run-workstation: $what: ${launch[*]}" >&2
exec "${launch[@]}"
