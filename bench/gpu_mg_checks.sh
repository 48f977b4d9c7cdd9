#!/usr/bin/env bash
# Multigrid on the GPU machine, in one call: CUDA tests, CUDA vs host bitwise, bench and
# time to solution at 512^3. Usage: bench/gpu_mg_checks.sh BIN_DIR OUT_DIR
# (BIN_DIR holds halo3d, test_multigrid, test_parallel, test_kernels, h5diff and, for the
# float halo checks, test_transports). The mixed-precision checks: test_multigrid's Mixed*
# tests and test_kernels' FloatKernelTest/cuda (in the runs below), mixed cuda vs host
# bitwise, bench's mg_*_f32/mixed rows and the "mg mixed" time to solution.
set -uo pipefail
bin=$1; out=$2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader,tcp
export OMP_NUM_THREADS=4 NCCL_NVLS_ENABLE=0
mpi="mpirun --oversubscribe --bind-to none"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/gpu.txt"
step() { echo "=== $*"; }

step "tests on cuda"
for n in 1 2; do
  HALO3D_TEST_BACKEND=cuda $mpi -np $n "$bin/test_multigrid" > "$out/test_mg_cuda_np$n.log" 2>&1
  echo "test_multigrid cuda np$n rc=$?"; grep -E "PASSED|FAILED" "$out/test_mg_cuda_np$n.log" | tail -3
done
HALO3D_TEST_BACKEND=cuda $mpi -np 2 "$bin/test_parallel" > "$out/test_parallel_cuda.log" 2>&1
echo "test_parallel cuda np2 rc=$?"
"$bin/test_kernels" --gtest_filter='*cuda*:HostVsCuda*' > "$out/test_kernels_cuda.log" 2>&1
echo "test_kernels cuda rc=$?"
if command -v compute-sanitizer >/dev/null; then
  HALO3D_TEST_BACKEND=cuda compute-sanitizer --tool memcheck "$bin/test_multigrid" \
    --gtest_filter='*Symmetric*:*Modes*' > "$out/memcheck_mg.log" 2>&1
  echo "memcheck test_multigrid rc=$?"; grep -E "ERROR SUMMARY" "$out/memcheck_mg.log"
  for tool in racecheck synccheck; do
    HALO3D_TEST_BACKEND=cuda compute-sanitizer --tool $tool "$bin/test_multigrid" \
      --gtest_filter='*Symmetric*' > "$out/${tool}_mg.log" 2>&1
    echo "$tool test_multigrid rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$out/${tool}_mg.log"
  done
fi

step "cuda vs host, bitwise (/u and iterations)"
for case in "1 96,80,72" "2 96,80,72" "3 65,47,33"; do
  set -- $case
  for be in cuda host; do
    $mpi -np $1 "$bin/halo3d" solve --backend $be --grid $2 --rhs random --output "$out/u_${be}.h5" \
      --report "$out/r_${be}.json" | grep -E "converged|precond"
  done
  "$bin/h5diff" "$out/u_cuda.h5" "$out/u_host.h5" /u /u && echo "np$1 $2: /u cuda == host bitwise"
done
for case in "1 96,80,72" "2 96,80,72" "3 65,47,33"; do  # --precision mixed: the float V-cycle
  set -- $case
  for be in cuda host; do
    $mpi -np $1 "$bin/halo3d" solve --backend $be --grid $2 --rhs random --precision mixed \
      --output "$out/u_${be}.h5" | grep -E "converged|precond"
  done
  "$bin/h5diff" "$out/u_cuda.h5" "$out/u_host.h5" /u /u && echo "np$1 $2 mixed: /u cuda == host bitwise"
done
if [ -x "$bin/test_transports" ]; then
  HALO3D_TEST_BACKEND=cuda $mpi -np 2 "$bin/test_transports" --gtest_filter='*Float*:*Interleaved*' \
    > "$out/test_transports_float_cuda.log" 2>&1
  echo "test_transports float cuda np2 rc=$?"
fi
for np in 1 2; do
  for be in cuda host; do
    $mpi -np $np "$bin/halo3d" solve --backend $be --problem heat --time-scheme crank-nicolson --grid 64,48,40 \
      --steps 5 --dt 1e-3 --rhs random --output "$out/u_${be}.h5" | grep -E "CG iterations"
  done
  "$bin/h5diff" "$out/u_cuda.h5" "$out/u_host.h5" /u /u && echo "np$np implicit heat: /u cuda == host bitwise"
done
rm -f "$out"/u_*.h5
step "implicit heat 256^3 on cuda (backward Euler, dt 1e-3, 10 steps)"
"$bin/halo3d" solve --backend cuda --problem heat --time-scheme implicit --grid 256,256,256 --steps 10 \
  --dt 1e-3 --output none --quiet | grep -E "steps|error|time:"

step "bench 512^3"
"$bin/halo3d" bench --backend cuda --grid 512,512,512 --reps 20 --report "$out/bench512.json" 2>&1 | tee "$out/bench512.txt"

step "time to solution 512^3, random rhs, tol 1e-8 (set-up + solve from the report)"
tts() {  # label, options...
  local label=$1; shift
  "$bin/halo3d" solve --backend cuda --grid "${GRID:-512,512,512}" --rhs random --output none \
    --report "$out/tts.json" "$@" > "$out/tts.txt" 2>&1
  python3 - "$label" "$out/tts.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[2])); t = r["timing"]; res = r["result"]
print(f"{sys.argv[1]:28s} iterations {res['iterations']:5d}  setup {t.get('setup_s', 0)*1e3:8.1f} ms  "
      f"solve {t['solve_s']*1e3:9.1f} ms  total {(t.get('setup_s', 0) + t['solve_s'])*1e3:9.1f} ms  "
      f"true relres {res['true_relative_residual']:.2e}")
PY
}
for rep in 1 2 3; do
  tts "mg chebyshev 2+2 (default)"
  tts "mg mixed (float V-cycle)" --precision mixed
  tts "mg chebyshev 1+1" --mg-smooth 1
  tts "mg chebyshev 3+3" --mg-smooth 3
  tts "mg jacobi 2+2" --mg-smoother jacobi
done
GRID=511,511,511 tts "mg 511^3"
echo "phases of the last default 512^3 run:"; tts "mg chebyshev 2+2 (default)"; grep -E "^phase " "$out/tts.txt"
tts "plain CG (--precond none)" --precond none
