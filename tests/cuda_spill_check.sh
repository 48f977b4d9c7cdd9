#!/bin/bash
# No stencil sweep spills registers: compiles kernels/cuda/cuda_kernels.cu as the build does
# (sm_90, -O3, --fmad=false) with `ptxas -v` and fails if an entry function named *_sweep
# (naive, tile3d, smem: the CUDA backend's stencil kernels) has a stack frame or spills.
# Why: a tile3d sweep bounded to 40 registers spilled 1.5 KB a thread once the variable-
# coefficient branch was compiled into it, and ran at 10% of the copy rate on an H100; no
# test on a CPU machine saw it. Needs only nvcc (no GPU).
#   tests/cuda_spill_check.sh NVCC SOURCE_DIR
set -euo pipefail
nvcc=$1 src=$2
log=$(mktemp)
obj=$(mktemp --suffix=.o)
trap 'rm -f "$log" "$obj"' EXIT
"$nvcc" -std=c++17 -O3 -DNDEBUG -DHALO3D_HAVE_CUDA=1 --fmad=false \
  --generate-code=arch=compute_90,code=sm_90 -I"$src/kernels" -I"$src/src/base" \
  -Xptxas -v -x cu -c "$src/kernels/cuda/cuda_kernels.cu" -o "$obj" >"$log" 2>&1 || {
  cat "$log" >&2
  echo "cuda_spill_check: nvcc failed" >&2
  exit 2
}
python3 - "$log" <<'PY'
import re, subprocess, sys
lines = open(sys.argv[1]).read().splitlines()
name, sweeps, bad = None, 0, []
for line in lines:
    m = re.search(r"Function properties for (\S+)", line)
    if m:
        name = m.group(1)
        continue
    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
    if m and name:
        demangled = subprocess.run(["c++filt", name], capture_output=True, text=True).stdout.strip()
        if re.search(r"_sweep<", demangled):
            sweeps += 1
            if any(int(g) for g in m.groups()):
                bad.append(f"{demangled}: {m.group(0)}")
        name = None
if sweeps == 0:
    sys.exit("cuda_spill_check: no *_sweep kernel in ptxas's output")
for b in bad:
    print("spills:", b)
print(f"cuda_spill_check: {sweeps} sweep kernels, {len(bad)} with a stack frame or spills")
sys.exit(1 if bad else 0)
PY
