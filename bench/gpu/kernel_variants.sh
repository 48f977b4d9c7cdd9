#!/usr/bin/env bash
# Correctness and speed of every CUDA kernel variant (HALO3D_CUDA_APPLY x HALO3D_CUDA_ROWS)
# in one go, on a machine with a GPU. Usage: bench/gpu/kernel_variants.sh BUILD_DIR [OUT_DIR]
# Writes OUT_DIR/variants.log (everything) and OUT_DIR/variants.md (the table).
set -uo pipefail
bin=$1
out=${2:-${OUT:-/tmp/halo3d-gpu}}
grid=${GRID:-512,512,512}
mkdir -p "$out"
log=$out/variants.log
table=$out/variants.md
echo "| apply | rows | tests | copy GB/s | apply | apply+dot | axpby | cg_update | CG iteration ms (GB/s) |" >"$table"
echo "|---|---|---|---:|---:|---:|---:|---:|---:|" >>"$table"
for a in ${APPLY_VARIANTS:-auto naive tile3d smem}; do
  for r in ${ROWS_VARIANTS:-flat vec2}; do
    export HALO3D_CUDA_APPLY=$a HALO3D_CUDA_ROWS=$r
    echo "=== $a/$r" >>"$log"
    timeout 120 "$bin/tests/test_kernels" '--gtest_filter=*cuda*:HostVsCuda*' >>"$log" 2>&1 && tests=pass || tests=FAIL
    timeout 120 "$bin/halo3d" bench --backend cuda --grid "$grid" --reps "${REPS:-20}" --report "$out/b.json" >>"$log" 2>&1
    # name -> GB/s (and ms for the CG iteration) from the bench table
    row() { awk -v n="$1" '$1 == n {printf "%.0f", $4}' <(tail -8 "$log"); }
    cg_ms=$(awk '$1 == "cg_iteration" {printf "%.3f", $3}' <(tail -8 "$log"))
    echo "| $a | $r | $tests | $(row copy) | $(row apply) | $(row apply_dot) | $(row axpby) | $(row cg_update) | $cg_ms ($(row cg_iteration)) |" >>"$table"
  done
done
rm -f "$out/b.json"
cat "$table"
