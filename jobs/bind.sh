#!/bin/bash
# Per-rank launcher: pins this rank to the CPUs next to its GPU, then execs the program.
#
#   mpirun -np 4 --bind-to none jobs/bind.sh halo3d solve ...
#   srun ... jobs/bind.sh halo3d solve ...
#
# Why: halo3d gives node-local rank L the GPU visible[L % count]; a rank whose CPU cores
# sit on the other socket pays for every kernel launch and every host-staged halo copy.
# The CPUs come from the GPU's PCI device in sysfs (local_cpulist), intersected with the
# CPUs this process may use (a Slurm cgroup or mpirun binding wins: never widened).
#
# Environment:
#   HALO3D_BIND=auto|none     auto (default): bind when the GPU's locality is known; none: exec as is
#   HALO3D_BIND_VERBOSE=1     one line per rank on stderr saying what was done
#   HALO3D_NVIDIA_SMI, HALO3D_SYSFS   nvidia-smi and /sys to use (tests point them at fakes)
# Without a GPU (or nvidia-smi) the program runs unbound by this script; the CPU binding
# of mpirun/srun applies then.
set -euo pipefail

(($# > 0)) || { echo "usage: bind.sh PROGRAM [ARGS...]" >&2; exit 2; }
mode=${HALO3D_BIND:-auto}
verbose=${HALO3D_BIND_VERBOSE:-0}
smi=${HALO3D_NVIDIA_SMI:-nvidia-smi}
sysfs=${HALO3D_SYSFS:-/sys}
# Node-local rank from whichever launcher started us (the same order halo3d's HostMap uses:
# world rank order within a host).
local_rank=${OMPI_COMM_WORLD_LOCAL_RANK:-${SLURM_LOCALID:-${MPI_LOCALRANKID:-${PMI_LOCAL_RANK:-0}}}}
# CUDA's default device order is "fastest first"; nvidia-smi's is PCI order. Make CUDA use
# PCI order so that index i means the same GPU to both (and to CUDA_VISIBLE_DEVICES).
export CUDA_DEVICE_ORDER=${CUDA_DEVICE_ORDER:-PCI_BUS_ID}

note() { [[ $verbose == 1 ]] && echo "bind: local rank $local_rank: $*" >&2 || true; }
run() { exec "$@"; }

[[ $mode == none ]] && { note "HALO3D_BIND=none, not binding"; run "$@"; }
[[ $mode == auto ]] || { echo "bind.sh: HALO3D_BIND=$mode: expected auto or none" >&2; exit 2; }

# expand "0-3,8,10-11" into one number per line
expand_cpulist() {
  local part lo hi
  local IFS=,
  for part in $1; do
    [[ -z $part ]] && continue
    if [[ $part == *-* ]]; then
      lo=${part%-*} hi=${part#*-}
      seq "$lo" "$hi"
    else
      echo "$part"
    fi
  done
}

gpus=$("$smi" --query-gpu=index,uuid,pci.bus_id --format=csv,noheader 2>/dev/null) || gpus=
if [[ -z $gpus ]]; then
  note "no GPU (or no $smi), not binding"
  run "$@"
fi

# index,uuid,bus per GPU, in nvidia-smi (PCI) order
declare -a idx uuid bus
while IFS=', ' read -r i u b; do
  [[ -n $i ]] || continue
  idx+=("$i") uuid+=("$u") bus+=("$b")
done <<<"$gpus"

# The GPUs this rank can see, as nvidia-smi positions.
declare -a visible
if [[ -n ${CUDA_VISIBLE_DEVICES+set} ]]; then
  IFS=, read -r -a cvd <<<"$CUDA_VISIBLE_DEVICES"
  for v in "${cvd[@]}"; do
    for k in "${!idx[@]}"; do
      if [[ $v == "${idx[k]}" || $v == "${uuid[k]}" || ${uuid[k]} == "$v"* ]]; then visible+=("$k"); fi
    done
  done
else
  visible=("${!idx[@]}")
fi
if ((${#visible[@]} == 0)); then
  note "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-} matches no GPU, not binding"
  run "$@"
fi
k=${visible[local_rank % ${#visible[@]}]}

# nvidia-smi prints 00000000:3B:00.0; sysfs names it 0000:3b:00.0
b=${bus[k],,}
[[ $b =~ ^[0-9a-f]{8}: ]] && b=${b:4}
dev=$sysfs/bus/pci/devices/$b
if [[ ! -r $dev/local_cpulist ]]; then
  note "GPU ${idx[k]} ($b): no $dev/local_cpulist, not binding"
  run "$@"
fi
numa=$(cat "$dev/numa_node" 2>/dev/null || echo -1)

# Intersect with what we are allowed to run on.
allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
mapfile -t near < <(expand_cpulist "$(cat "$dev/local_cpulist")")
declare -A ok=()
while read -r c; do ok[$c]=1; done < <(expand_cpulist "$allowed")
cpus=
for c in "${near[@]}"; do
  [[ -n ${ok[$c]:-} ]] && cpus+=${cpus:+,}$c
done
if [[ -z $cpus ]]; then
  note "GPU ${idx[k]} ($b, NUMA $numa): none of its CPUs ($(cat "$dev/local_cpulist")) are in this rank's set ($allowed), not binding"
  run "$@"
fi
note "GPU ${idx[k]} ($b, NUMA $numa) -> CPUs $cpus"
run taskset -c "$cpus" "$@"
