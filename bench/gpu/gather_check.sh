#!/usr/bin/env bash
# --mg-gather on ranks sharing one GPU under MPS (issue 23): MG-PCG 512^3 on 4 and 8 ranks and
# 256^3 on 4, random right-hand side to 1e-8, --halo ipc, with the coarse levels gathered
# below 262144 (the default), 32768 and 4096 points; 1 rank of each grid as the reference;
# two runs each. Starts MPS when none runs. Usage: bench/gpu/gather_check.sh BUILD_DIR OUT_DIR
set -uo pipefail
bin=$1 out=$2
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=2
source "$(dirname "$0")/mps_env.sh"
mps_start
solve_timeout=100
solve() {  # name ranks args...
  local name=$1
  mps_solve "$@"
  python3 -c "import json; j = json.load(open('$out/$name.json')); print('$name', 'solve %.2f ms' % (j['timing']['solve_s'] * 1e3), 'iterations', j['result']['iterations'])"
}
for rep in 1 2; do
  solve "g512_np1_$rep" 1 --grid 512,512,512
  solve "g256_np1_$rep" 1 --grid 256,256,256
  for g in 262144 32768 4096; do
    solve "g512_np8_${g}_$rep" 8 --grid 512,512,512 --mg-gather $g
    solve "g512_np4_${g}_$rep" 4 --grid 512,512,512 --mg-gather $g
    solve "g256_np4_${g}_$rep" 4 --grid 256,256,256 --mg-gather $g
  done
done
mps_stop
