#!/usr/bin/env bash
# The probe table and the overlap figures on a GPU machine, for docs/performance-log.md.
# Usage: bench/gpu/overlap_probe.sh BUILD_DIR [OUT_DIR]  (writes probe.json, overlap.log)
set -uo pipefail
bin=$1
out=${2:-${OUT:-/tmp/halo3d-gpu}}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader,tcp
export NCCL_NVLS_ENABLE=0 OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}
log=$out/overlap.log
timeout 200 mpirun --oversubscribe -np 2 "$bin/halo3d" probe --backend cuda --topology --grid 512,512,512 \
  --reps 10 --report "$out/probe.json" >>"$log" 2>&1
echo "=== probe rc=$?" >>"$log"
# 256^3 per rank on 2 ranks (a 256x256x512 grid split in z), CG on a random right-hand side.
for halo in ipc mpi; do
  for ov in on off; do
    echo "=== overlap halo=$halo overlap=$ov" >>"$log"
    timeout 120 mpirun --oversubscribe -np 2 "$bin/halo3d" solve --backend cuda --grid 256,256,512 \
      --rhs random --max-iters 100 --tol 1e-300 --halo "$halo" --overlap "$ov" --output none \
      --report "$out/ov_${halo}_${ov}.json" >>"$log" 2>&1
    echo "rc=$?" >>"$log"
  done
done
grep -E "^=== |^rc=|overlap:|s/iteration|chose|ranks [0-9]" "$log"
