#!/usr/bin/env bash
# Scans the tile3d/smem tuning knobs (HALO3D_CUDA_TILE_Z, HALO3D_CUDA_TILE,
# HALO3D_CUDA_STORE) at 512^3, each with the CUDA kernel tests. Usage: tile_scan.sh BUILD_DIR
set -uo pipefail
B=$1
scan() {  # scan APPLY Z TILE STORE
  export HALO3D_CUDA_APPLY=$1 HALO3D_CUDA_TILE=$3 HALO3D_CUDA_STORE=$4
  if [[ $2 == - ]]; then unset HALO3D_CUDA_TILE_Z; else export HALO3D_CUDA_TILE_Z=$2; fi
  local ok r
  ok=$(timeout 60 "$B/tests/test_kernels" '--gtest_filter=*cuda*:HostVsCuda*' >/dev/null 2>&1 && echo pass || echo FAIL)
  r=$(timeout 60 "$B/halo3d" bench --backend cuda --grid 512,512,512 --reps 20 2>&1 | tail -8)
  echo "| $1 | $2 | $3 | $4 | $ok | $(awk '$1=="copy"{printf "%.0f", $4}' <<<"$r") | $(awk '$1=="apply"{printf "%.0f", $4}' <<<"$r") | $(awk '$1=="apply_dot"{printf "%.0f", $4}' <<<"$r") | $(awk '$1=="cg_iteration"{print $3}' <<<"$r") |"
}
echo "| apply | tile z | tile | store | tests | copy GB/s | apply GB/s | apply+dot GB/s | CG ms |"
echo "|---|---|---|---|---|---:|---:|---:|---:|"
for z in 2 4 8; do for t in 32x8 64x4 32x4 128x2; do for s in plain stream; do
  scan tile3d "$z" "$t" "$s"
done; done; done
for t in 32x8 64x4; do for s in plain stream; do scan smem - "$t" "$s"; done; done
