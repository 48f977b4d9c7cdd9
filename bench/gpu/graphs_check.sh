#!/usr/bin/env bash
# CUDA graphs for the multigrid's coarse levels (Kernels::record, HALO3D_CUDA_GRAPHS): their
# GPU tests, then `bench` and solves with them off and on, interleaved in one call (the copy
# varies between runs: compare within the call). Usage, on a machine with a GPU:
#   bench/gpu/graphs_check.sh BUILD_DIR [OUT_DIR]
# Ranks share the one GPU through MPS for the 8-rank solves (started and stopped here when
# nvidia-cuda-mps-control exists and none runs). Logs in OUT_DIR; the lines to read are
# summarised in OUT_DIR/graphs.md.
set -uo pipefail
bin=$1
out=${2:-${OUT:-/tmp/halo3d-gpu}}
grid=${GRID:-512,512,512}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
HALO3D_CUDA_GRAPHS=on timeout 300 "$bin/tests/test_kernels" --gtest_filter='*Record*' >"$out/record_test.log" 2>&1
echo "RecordReplaysTheSameWork: exit $?" >"$out/graphs.md"
source "$(dirname "$0")/mps_env.sh"
mps_start
for rep in 1 2; do
  for g in off on; do
    for p in double mixed; do
      HALO3D_CUDA_GRAPHS=$g timeout 200 "$bin/halo3d" bench --backend cuda --grid "$grid" --reps 10 \
        --precision $p >"$out/bench_${p}_${g}_$rep.log" 2>&1
      HALO3D_CUDA_GRAPHS=$g timeout 100 "$bin/halo3d" solve --backend cuda --grid "$grid" --rhs random \
        --tol 1e-8 --precision $p --output none --report "$out/solve_${p}_${g}_$rep.json" >/dev/null 2>&1
    done
    HALO3D_CUDA_GRAPHS=$g timeout 200 mpirun -np 8 --oversubscribe "$bin/halo3d" solve --backend cuda \
      --grid "$grid" --rhs random --tol 1e-8 --halo ipc --output none \
      --report "$out/solve8_${g}_$rep.json" >/dev/null 2>&1
  done
done
mps_stop
python3 - "$out" >>"$out/graphs.md" <<'PY'
import glob, json, os, re, sys
out = sys.argv[1]
print("| run | graphs | solve_s | iterations | relative residual |")
print("|---|---|---:|---:|---:|")
for f in sorted(glob.glob(os.path.join(out, "solve*.json"))):
    j = json.load(open(f))
    name = os.path.basename(f)[:-5]
    print(f"| {name} | {'on' if '_on_' in name else 'off'} | {j['timing']['solve_s']:.4f} | "
          f"{j['result']['iterations']} | {j['result']['relative_residual']:.4e} |")
for f in sorted(glob.glob(os.path.join(out, "bench_*.log"))):
    for line in open(f):
        if re.search(r"mg_vcycle|mg_pcg_iter", line):
            print(os.path.basename(f), line.rstrip())
PY
cat "$out/graphs.md"
