#!/usr/bin/env bash
# Two halo3d binaries in one call on one GPU, interleaved three times: 512^3 MG-PCG to 1e-8
# (random right-hand side; k = 1 and a 1e4 block in an octant), double and mixed, set-up +
# start and solve times from the reports; then `bench` of each. For changes the copy's drift
# between calls would hide (e.g. the hierarchy's first step: old 512 -> 341, new 512 -> 255).
# Usage: bench/gpu/compare_binaries.sh OLD_HALO3D NEW_HALO3D OUT_DIR
set -uo pipefail
old=$1 new=$2 out=$3
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=2
block='expr:(x<0.5 && y<0.5 && z<0.5) ? 1e4 : 1'
for rep in 1 2 3; do
  for v in old new; do
    b=$new; [ $v = old ] && b=$old
    for p in double mixed; do
      for k in 1 "$block"; do
        tag=k1; [ "$k" = 1 ] || tag=block
        timeout 120 mpirun -np 1 "$b" solve --backend cuda --grid 512,512,512 --rhs random --tol 1e-8 \
          --precision $p --coefficient "$k" --output none --report "$out/${v}_${p}_${tag}_$rep.json" \
          >"$out/${v}_${p}_${tag}_$rep.log" 2>&1
      done
    done
  done
done
for v in old new; do
  b=$new; [ $v = old ] && b=$old
  timeout 150 mpirun -np 1 "$b" bench --backend cuda --grid 512,512,512 --reps 10 >"$out/bench_$v.log" 2>&1
done
python3 - "$out" <<'PY'
import glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    j = json.load(open(f)); t = j["timing"]
    print(os.path.basename(f)[:-5], "set-up+start %.4f solve %.4f" % (t["setup_s"] + t.get("start_s", 0), t["solve_s"]),
          "iterations", j["result"]["iterations"])
PY
for v in old new; do
  echo "== bench $v"
  grep -E "^(copy|apply|mg_smooth|mg_restrict|mg_prolong|mg_vcycle|mg_pcg_iter)" "$out/bench_$v.log"
done
