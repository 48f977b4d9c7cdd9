#!/usr/bin/env bash
# Issue 14's closing check on the GPU machine, in one call: the CUDA tests, CUDA against host
# bitwise, and `halo3d bench` at 512^3 of the binary from before the restructuring against
# the current one, run back to back (apply, operator, cg_iteration within 2%), plus the
# multigrid rows and time to solution of the current binary against the previous commit's.
# Usage: bench/gpu_structure_check.sh tests|bench BIN_DIR OUT_DIR [OLD_HALO3D [PREV_HALO3D]]
# (BIN_DIR holds halo3d, test_kernels, test_parallel, test_multigrid, test_transports, h5diff;
# each part fits one 10-minute call of the device tool.)
set -uo pipefail
part=$1; bin=$2; out=$3; old=${4:-}; prev=${5:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader,tcp
export OMP_NUM_THREADS=4 NCCL_NVLS_ENABLE=0
mpi="mpirun --oversubscribe --bind-to none"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/gpu.txt"
step() { echo "=== $*"; }

if [ "$part" = tests ]; then
step "tests on cuda"
"$bin/test_kernels" --gtest_filter='*cuda*:HostVsCuda*' > "$out/test_kernels_cuda.log" 2>&1
echo "test_kernels cuda rc=$?"; grep -E "PASSED|FAILED" "$out/test_kernels_cuda.log" | tail -2
for n in 1 2; do
  for t in test_parallel test_multigrid test_transports; do
    HALO3D_TEST_BACKEND=cuda $mpi -np $n "$bin/$t" > "$out/${t}_cuda_np$n.log" 2>&1
    echo "$t cuda np$n rc=$?"; grep -E "FAILED" "$out/${t}_cuda_np$n.log" | head -5
  done
done

step "cuda vs host, bitwise (/u, /residual_history and the report's results)"
same_report() {  # the result sections of two reports, compared exactly
  python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
keys = ("iterations", "relative_residual", "true_relative_residual", "l2_error", "max_error")
ra, rb = a["result"], b["result"]
diff = [k for k in keys if k in ra and ra.get(k) != rb.get(k)]
print("reports: identical results" if not diff else f"reports DIFFER in {diff}")
PY
}
for case in "1 96,80,72 double" "2 96,80,72 double" "3 65,47,33 double" "2 256,256,256 double" \
  "2 96,80,72 mixed" "3 65,47,33 mixed"; do
  set -- $case
  for be in cuda host; do
    $mpi -np $1 "$bin/halo3d" solve --backend $be --grid $2 --rhs random --precision $3 \
      --output "$out/u_${be}.h5" --report "$out/r_${be}.json" --quiet | grep -E "^error|converged"
  done
  "$bin/h5diff" "$out/u_cuda.h5" "$out/u_host.h5" /u /u &&
    "$bin/h5diff" "$out/u_cuda.h5" "$out/u_host.h5" /residual_history /residual_history &&
    echo "np$1 $2 $3: /u and /residual_history cuda == host bitwise"
  same_report "$out/r_cuda.json" "$out/r_host.json"
done
for np in 1 2; do
  for be in cuda host; do
    $mpi -np $np "$bin/halo3d" solve --backend $be --problem heat --time-scheme crank-nicolson \
      --grid 64,48,40 --steps 5 --dt 1e-3 --rhs random --output "$out/u_${be}.h5" --quiet |
      grep -E "CG iterations"
  done
  "$bin/h5diff" "$out/u_cuda.h5" "$out/u_host.h5" /u /u && echo "np$np implicit heat: /u cuda == host bitwise"
done
rm -f "$out"/u_*.h5 "$out"/*.xdmf
exit 0
fi

step "bench 512^3: before the restructuring (old) against now (new), interleaved"
rows="copy|apply|operator|cg_iteration|mg_smooth|mg_vcycle|mg_vcycle_mixed|mg_pcg_iteration|mg_pcg_iter_mixed"
for rep in 1 2; do
  for which in ${old:+old} ${prev:+prev} new; do
    case $which in old) b=$old ;; prev) b=$prev ;; new) b=$bin/halo3d ;; esac
    "$b" bench --backend cuda --grid 512,512,512 --reps 20 --report "$out/bench_${which}_$rep.json" \
      > "$out/bench_${which}_$rep.txt" 2>&1
    echo "$which rep $rep:"
    grep -E "^ *($rows) " "$out/bench_${which}_$rep.txt" | sed 's/^/    /'
  done
done

step "time to solution 512^3, random rhs, tol 1e-8 (set-up + solve from the report)"
tts() {  # label binary options...
  local label=$1 b=$2; shift 2
  "$b" solve --backend cuda --grid 512,512,512 --rhs random --output none \
    --report "$out/tts.json" "$@" > "$out/tts.txt" 2>&1
  python3 - "$label" "$out/tts.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[2])); t = r["timing"]; res = r["result"]
print(f"{sys.argv[1]:24s} iterations {res['iterations']:3d}  setup {t['setup_s']*1e3:6.1f} ms  "
      f"solve {t['solve_s']*1e3:7.1f} ms  total {(t['setup_s'] + t['solve_s'])*1e3:7.1f} ms")
PY
}
for rep in 1 2 3; do
  for p in double mixed; do
    [ -n "$prev" ] && tts "prev $p" "$prev" --precision $p
    tts "new $p" "$bin/halo3d" --precision $p
  done
done
