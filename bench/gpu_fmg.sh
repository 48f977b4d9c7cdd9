#!/bin/bash
# --fmg against CG's zero first iterate on one GPU (issue 24 item 1: should --fmg be the
# default?). For each grid and precision, three times, interleaved:
#   acc   --rhs modes to --tol 1e-3 (with --fmg: the F-cycle's answer, at most one iteration)
#   acc5  --rhs modes to --tol 1e-5 (where the error against the continuous solution stops
#         changing without --fmg)
#   rand  --rhs random to --tol 1e-8
# and once --rhs modes to --tol 1e-10 (the converged run's continuous error). Each run writes
# its --report; bench/gpu_fmg_table.py reads them (set-up + start + solve, error, iterations).
# Usage: bench/gpu_fmg.sh BIN_DIR OUT_DIR [SIZES]; then bench/gpu_fmg_table.py OUT_DIR
# Written 2026-12-04 and checked on the CPU build (the table script on a 24^3 sample); not
# yet run on a GPU (none was lent after the session's first call).
set -uo pipefail
bin=$1; out=$2; sizes=${3:-128 256 512}
mkdir -p "$out"
run() {  # name args...
  local name=$1; shift
  "$bin/halo3d" solve --backend cuda --output none --report "$out/$name.json" "$@" >"$out/$name.log" 2>&1 ||
    echo "$name rc=$? $(tail -n2 "$out/$name.log" | tr '\n' ' ')"
}
for n in $sizes; do
  for p in double mixed; do
    g=(--grid "$n,$n,$n" --precision "$p")
    run "conv_${n}_${p}" "${g[@]}" --rhs modes --tol 1e-10
    for rep in 1 2 3; do
      for f in zero fmg; do
        a=(); [ $f = fmg ] && a=(--fmg)
        run "acc_${n}_${p}_${f}_$rep" "${g[@]}" "${a[@]}" --rhs modes --tol 1e-3
        run "acc5_${n}_${p}_${f}_$rep" "${g[@]}" "${a[@]}" --rhs modes --tol 1e-5
        run "rand_${n}_${p}_${f}_$rep" "${g[@]}" "${a[@]}" --rhs random --tol 1e-8
      done
    done
  done
done
"$bin/halo3d" bench --backend cuda --grid 512,512,512 --reps 10 >"$out/bench512.txt" 2>&1
grep -E "^copy|^mg_vcycle |^mg_fmg|^mg_pcg_iteration " "$out/bench512.txt"
