#!/usr/bin/env bash
# Nsight Compute counters of the non-reducing operator sweep at 512^3 for each variant:
# DRAM and L2 bytes per point (what decides whether a sweep is DRAM- or L2-bound), time,
# achieved occupancy. Clocks left alone (--clock-control none).
# Usage: ncu_sweeps.sh BUILD_DIR OUT_DIR [APPLY ...]   (APPLY: naive, tile3d, smem)
set -uo pipefail
B=$1 out=$2
shift 2
metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,l1tex__t_bytes.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
for c in "$@"; do
  a=$c
  HALO3D_CUDA_APPLY=$a timeout 180 ncu --clock-control none \
    --kernel-name "regex:${a}_sweep" --launch-skip 1 --launch-count 1 --metrics "$metrics" --csv \
    "$B/halo3d" bench --backend cuda --grid 512,512,512 --reps 1 --warmup 1 >"$out/ncu_${a}.csv" 2>&1
  echo "== $c (points 134217728)"
  grep -E '"(gpu__time|dram__|lts__|l1tex__|sm__warps|launch__reg)' "$out/ncu_${a}.csv" | awk -F'","' '{print $(NF-2), $(NF-1), $NF}'
done
