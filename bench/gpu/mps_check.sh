#!/usr/bin/env bash
# Issue 23's MPS targets in one call, on a machine with one GPU: MG-PCG 512^3 (1, 2, 4, 8
# ranks) and 256^3 (1, 4 ranks), random right-hand side to 1e-8, --halo ipc, twice each,
# interleaved; then bench's per-level table (rounds, messages, halo bytes) on 8 ranks.
# Starts MPS when none runs (and stops it). Usage: bench/gpu/mps_check.sh BUILD_DIR OUT_DIR
set -uo pipefail
bin=$1 out=$2
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=2
source "$(dirname "$0")/mps_env.sh"
mps_start
run() {  # name ranks args...
  mps_solve "$@"
  echo "$1 rc=$?"
}
for rep in 1 2; do
  for np in 1 2 4 8; do run "s512_np${np}_$rep" "$np" --grid 512,512,512; done
  for np in 1 4; do run "s256_np${np}_$rep" "$np" --grid 256,256,256; done
done
timeout 150 mpirun --oversubscribe --bind-to none -np 8 "$bin/halo3d" bench --backend cuda \
  --grid 512,512,512 --halo ipc --reps 5 >"$out/bench8.log" 2>&1
echo "bench8 rc=$?"
mps_stop
python3 - "$out" <<'PY'
import glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "s*.json"))):
    j = json.load(open(f))
    print(os.path.basename(f)[:-5], "solve_s %.4f" % j["timing"]["solve_s"],
          "iterations", j["result"]["iterations"], "residual %.4e" % j["result"]["relative_residual"])
PY
sed -n '/^multigrid levels (own/,/^multigrid levels of the float/p' "$out/bench8.log"
