#!/usr/bin/env bash
# Scans the sweep variants' tuning knobs (HALO3D_CUDA_TILE_Z, HALO3D_CUDA_TILE,
# HALO3D_CUDA_STORE) at 512^3, each with the CUDA kernel tests.
# Usage: tile_scan.sh BUILD_DIR [APPLY:Z:TILE:STORE[:VAR=VALUE,...] ...]   (Z '-' = default;
# the optional fifth field sets more knobs; no configs = the full scan below). Prints a
# markdown table.
set -uo pipefail
B=$1
shift
scan() {  # scan APPLY Z TILE STORE [VAR=VALUE,...]
  unset HALO3D_CUDA_SMEM_KZ
  export HALO3D_CUDA_APPLY=$1 HALO3D_CUDA_TILE=$3 HALO3D_CUDA_STORE=$4
  local kv
  for kv in ${5//,/ }; do export "$kv"; done
  if [[ $2 == - ]]; then unset HALO3D_CUDA_TILE_Z; else export HALO3D_CUDA_TILE_Z=$2; fi
  local ok r
  ok=$(timeout 90 "$B/tests/test_kernels" '--gtest_filter=*cuda*:HostVsCuda*' >/dev/null 2>&1 && echo pass || echo FAIL)
  r=$(timeout 60 "$B/halo3d" bench --backend cuda --grid 512,512,512 --reps "${REPS:-20}" 2>&1 | tail -8)
  echo "| $1 | $2 | $3 | $4 ${5:-} | $ok | $(awk '$1=="copy"{printf "%.0f", $4}' <<<"$r") | $(awk '$1=="apply"{printf "%.0f (%s)", $4, $5}' <<<"$r") | $(awk '$1=="apply_dot"{printf "%.0f (%s)", $4, $5}' <<<"$r") | $(awk '$1=="cg_iteration"{print $3}' <<<"$r") |"
}
echo "| apply | tile z | tile | store | tests | copy GB/s | apply GB/s (of copy) | apply+dot GB/s | CG ms |"
echo "|---|---|---|---|---|---:|---:|---:|---:|"
configs=("$@")
if ((${#configs[@]} == 0)); then
  for z in 2 4 8; do for t in 32x8 64x4 32x4 128x2; do for s in plain stream; do
    configs+=("tile3d:$z:$t:$s")
  done; done; done
  for t in 32x8 64x4; do for s in plain stream; do configs+=("smem:-:$t:$s"); done; done
fi
for c in "${configs[@]}"; do
  IFS=: read -r a z t s x <<<"$c"
  scan "$a" "$z" "$t" "$s" "${x:-}"
done
