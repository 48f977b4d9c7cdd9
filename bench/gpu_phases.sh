#!/usr/bin/env bash
# Set-up, right-hand side and verification phases on the GPU machine, old binary against
# new in one sitting, plus the CUDA-vs-host checks of the fields and self-checks.
# Usage: bench/gpu_phases.sh BIN_DIR OUT_DIR [OLD_HALO3D]
# (BIN_DIR holds halo3d, test_kernels, test_parallel, test_multigrid and h5diff.)
set -uo pipefail
bin=$1; out=$2; old=${3:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader,tcp
export NCCL_NVLS_ENABLE=0
mpi="mpirun --oversubscribe --bind-to none"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/gpu.txt"
step() { echo "=== $*"; }

step "kernel and solver tests on cuda"
"$bin/test_kernels" --gtest_filter='*cuda*:HostVsCuda*' > "$out/test_kernels_cuda.log" 2>&1
echo "test_kernels cuda rc=$?"; grep -E "PASSED|FAILED" "$out/test_kernels_cuda.log" | tail -3
for n in 1 2; do
  HALO3D_TEST_BACKEND=cuda $mpi -np $n "$bin/test_parallel" > "$out/test_parallel_cuda_np$n.log" 2>&1
  echo "test_parallel cuda np$n rc=$?"
  HALO3D_TEST_BACKEND=cuda $mpi -np $n "$bin/test_multigrid" > "$out/test_mg_cuda_np$n.log" 2>&1
  echo "test_multigrid cuda np$n rc=$?"
done

step "cuda vs host, bitwise (/u), errors printed by each"
for case in "1 96,80,72 modes" "2 96,80,72 modes" "3 65,47,33 random" "2 64,48,40 heat"; do
  set -- $case
  extra="--rhs $3"; [ "$3" = heat ] && extra="--problem heat --steps 20 --mode 1,2,3"
  for be in cuda host; do
    $mpi -np $1 "$bin/halo3d" solve --backend $be --grid $2 $extra --output "$out/u_${be}.h5" \
      --report none | grep -E "^error|converged|steps done"
  done
  "$bin/h5diff" "$out/u_cuda.h5" "$out/u_host.h5" /u /u && echo "np$1 $2 $3: /u cuda == host bitwise"
done
rm -f "$out"/u_*.h5

step "phases at 512^3 (rank 0), old vs new, interleaved"
run() {  # label binary options...
  local label=$1 b=$2; shift 2
  "$b" solve --backend cuda --grid 512,512,512 --report none "$@" > "$out/run.txt" 2>&1
  echo "$label: $(grep -E '^phase ' "$out/run.txt" | tr -s ' ' | paste -sd ';')"
  grep -E "^error|converged" "$out/run.txt" | sed 's/^/    /'
}
for rep in 1 2; do
  for rhs in modes random; do
    [ -n "$old" ] && run "old $rhs" "$old" --rhs $rhs --output none
    run "new $rhs" "$bin/halo3d" --rhs $rhs --output none
  done
done
[ -n "$old" ] && run "old modes +output" "$old" --output "$out/big.h5"
rm -f "$out/big.h5" "$out/big.xdmf"
run "new modes +output" "$bin/halo3d" --output "$out/big.h5"
rm -f "$out/big.h5" "$out/big.xdmf"

step "bench 512^3, old vs new, interleaved (apply, cg_iteration, operator rows)"
if [ -n "$old" ]; then
  for rep in 1 2; do
    for b in "$old" "$bin/halo3d"; do
      "$b" bench --backend cuda --grid 512,512,512 --reps 20 --report none > "$out/bench.txt" 2>&1
      echo "$( [ "$b" = "$old" ] && echo old || echo new ) rep $rep:"
      grep -E "^ *(copy|apply|operator|cg_iteration|mg_vcycle|mg_pcg_iteration) " "$out/bench.txt" | sed 's/^/    /'
    done
  done
fi
