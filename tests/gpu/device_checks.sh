#!/usr/bin/env bash
# halo3d's checks and benchmarks on a machine with a GPU, in one go (a lent GPU has little
# time: everything that belongs together runs in one call). Usage:
#   tests/gpu/device_checks.sh BIN_DIR [OUT_DIR]
# BIN_DIR holds halo3d and tests/test_* (a build dir of the gpu preset);
# OUT_DIR (default $OUT or /tmp/halo3d-gpu) receives log.txt and the bench/solve JSONs.
set -uo pipefail
bin=$1
out=${2:-${OUT:-/tmp/halo3d-gpu}}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader,tcp
export NCCL_NVLS_ENABLE=0  # never NVLink multicast on shared machines
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}
log=$out/log.txt
fails=0
step() {  # step NAME CMD...: runs CMD, logs it, keeps going on failure
  local name=$1; shift
  echo "=== $name: $*" | tee -a "$log"
  local t0=$SECONDS
  # Bounded: a hang must cost one step's limit, not the whole lease.
  timeout -k 5 "${STEP_TIMEOUT:-150}" "$@" >>"$log" 2>&1
  local rc=$?
  echo "=== $name: rc=$rc ($((SECONDS - t0)) s)" | tee -a "$log"
  ((rc == 0)) || fails=$((fails + 1))
  return 0
}
work=$(mktemp -d)
{ nvidia-smi; nvcc --version 2>/dev/null | tail -1; lscpu | head -15; } >>"$log" 2>&1
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)

# Benchmark at 512^3 with the default kernels (bench/gpu/kernel_variants.sh compares variants).
step bench "$bin/halo3d" bench --backend cuda --grid 512,512,512 --reps 30 --report "$out/bench.json"
step solve512 "$bin/halo3d" solve --backend cuda --config "${HALO3D_INPUTS:-inputs}/poisson-large.toml" \
  --max-iters 200 --output none --report "$out/solve512.json"
step info mpirun --oversubscribe -np 2 "$bin/halo3d" info
step kernels "$bin/tests/test_kernels" '--gtest_filter=*cuda*:HostVsCuda*'
for n in 1 2 3 4; do
  step "parallel_cuda_np$n" mpirun --oversubscribe -np "$n" -x HALO3D_TEST_BACKEND=cuda "$bin/tests/test_parallel"
done
# The one-round ghost exchange: device pack_boxes/unpack_boxes, staged through pinned memory.
for n in 2 4 8; do
  step "exchange_cuda_np$n" mpirun --oversubscribe -np "$n" -x HALO3D_TEST_BACKEND=cuda "$bin/tests/test_exchange"
done
step memcheck "$sanitizer" --tool memcheck --error-exitcode 9 "$bin/tests/test_kernels" '--gtest_filter=*cuda*:HostVsCuda*'
for a in smem tile3d naive; do
  HALO3D_CUDA_APPLY=$a step "racecheck_$a" "$sanitizer" --tool racecheck --error-exitcode 9 "$bin/tests/test_kernels" '--gtest_filter=*cuda*'
done
step synccheck "$sanitizer" --tool synccheck --error-exitcode 9 "$bin/tests/test_kernels" '--gtest_filter=*cuda*'
step memcheck_mpi2 mpirun --oversubscribe -np 2 -x HALO3D_TEST_BACKEND=cuda "$sanitizer" --tool memcheck \
  --error-exitcode 9 "$bin/tests/test_parallel" '--gtest_filter=Poisson.*:Halo.*:Operator.*'

# The issue's acceptance run: 2 ranks, 256^3, CUDA against host, /u compared bitwise.
for be in cuda host; do
  step "solve256_$be" mpirun --oversubscribe -np 2 "$bin/halo3d" solve --backend "$be" --grid 256,256,256 \
    --mode 2,3,1 --mode 1,1,1 --output "$work/s256_$be.h5" --report "$out/solve256_$be.json"
done
step compare256 h5diff -r "$work/s256_cuda.h5" "$work/s256_host.h5" /u /u
for be in cuda host; do
  step "random96_$be" mpirun --oversubscribe -np 2 "$bin/halo3d" solve --backend "$be" --grid 96,80,72 \
    --rhs random --output "$work/r_$be.h5"
done
step compare_random h5diff -r "$work/r_cuda.h5" "$work/r_host.h5" /u /u

# The halo transports on this GPU (ipc, nccl, auto, probe; ranks share the GPU).
for n in 1 2 3 4; do
  step "transports_cuda_np$n" mpirun --oversubscribe -np "$n" -x HALO3D_TEST_BACKEND=cuda "$bin/tests/test_transports"
done
STEP_TIMEOUT=300 step transports_script bash "$(dirname "$0")/transports.sh" "$bin" mpirun
rm -rf "$work"
echo "=== failed steps: $fails" | tee -a "$log"
