#!/bin/bash
# shellcheck disable=SC2015,SC2054  # "ok" never fails, so A && ok || bad is safe; --grid takes commas
# GPU checks of the halo transports (ctest label gpu), written for one GPU shared by 2-4
# ranks (also right with one GPU per rank). Needs only bash, mpirun and the build: the
# bitwise comparisons of /u run inside halo3d's own test binary (test_transports), and
# program-level results are compared through the JSON reports, so no python/h5py/h5diff.
#
#   tests/gpu/transports.sh BUILD_DIR [MPIEXEC]
set -euo pipefail

build=$(cd "${1:?usage: transports.sh BUILD_DIR [MPIEXEC]}" && pwd)
mpiexec=${2:-mpirun}
halo3d=$build/halo3d
tt=$build/tests/test_transports
[[ -x $halo3d && -x $tt ]] || { echo "transports.sh: $halo3d or $tt missing (build first)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/halo3d-transports.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

failed=0
ok() { echo "ok   $*"; }
bad() {
  echo "FAIL $*"
  sed 's/^/     | /' out | tail -25
  failed=1
}
# run RANKS CMD...: output in ./out, exit status in $rc; a hang is a failure, not a stall
run() {
  local n=$1
  shift
  set +e
  timeout 600 "$mpiexec" -np "$n" --oversubscribe "$@" >out 2>&1
  rc=$?
  set -e
}
# the lines of a JSON report that pin a CG run's result down to the last bit
result_lines() { grep -E '"(iterations|relative_residual|true_relative_residual|converged)"' "$1"; }
# halo3d's own lines on stderr/stdout (mpirun adds banners of its own)
halo_errors() { grep -c '^halo3d: error' out || true; }

run 1 "$halo3d" info
gpus=$(sed -n 's/.*cuda (\([0-9]*\) GPU(s) visible).*/\1/p' out | head -1)
[[ -n $gpus && $gpus -ge 1 ]] || { bad "halo3d info shows no GPU; this script needs one"; exit 1; }
echo "GPUs visible: $gpus"

# 1. Every transport, overlap on/off, bitwise vs mpi/overlap off (gtest, 2-4 ranks on the GPU).
for n in 2 3 4; do
  run "$n" env HALO3D_TEST_BACKEND=cuda "$tt"
  if [[ $rc -ne 0 ]]; then
    bad "test_transports on $n ranks (exit $rc)"
  elif grep -q "ipc not available" out; then
    bad "test_transports on $n ranks: ipc was not available"
  else
    ok "test_transports on $n ranks: $(grep -o 'PASSED.*' out | tail -1); $(grep -o '[a-z-]* not available here' out | sort -u | tr '\n' ' ')"
  fi
done

# 2. The program: ipc, overlap on and off, 2-4 ranks, same result as mpi/overlap off.
solve=(solve --backend cuda --grid 40,36,32 --rhs random --seed 3 --tol 1e-7 --output none)
for n in 2 3 4; do
  run "$n" "$halo3d" "${solve[@]}" --halo mpi --overlap off --report ref.json
  [[ $rc -eq 0 ]] || { bad "solve mpi/off on $n ranks (exit $rc)"; continue; }
  for ov in on off; do
    run "$n" "$halo3d" "${solve[@]}" --halo ipc --overlap "$ov" --report ipc.json
    if [[ $rc -ne 0 ]]; then
      bad "solve ipc/$ov on $n ranks (exit $rc)"
    elif ! grep -q "halo ipc" out || ! grep -q "halo rank 0: ipc: .*CUDA IPC" out; then
      bad "solve ipc/$ov on $n ranks: header or IPC detection lines missing"
    elif ! diff <(result_lines ref.json) <(result_lines ipc.json) >/dev/null; then
      bad "solve ipc/$ov on $n ranks: result differs from mpi/off: $(diff <(result_lines ref.json) <(result_lines ipc.json) | tr '\n' ' ')"
    elif ! grep -q '"hidden_fraction"' ipc.json; then
      bad "solve ipc/$ov on $n ranks: no overlap measurement in the report"
    else
      ok "solve ipc overlap $ov on $n ranks equals mpi/off ($(grep -m1 'halo rank 0' out | cut -c1-90))"
    fi
  done
done

# 3. Peer access switched off: still works, says so where it matters.
run 2 "$halo3d" "${solve[@]}" --halo ipc --peer-access off --report ipc.json
[[ $rc -eq 0 ]] && diff <(result_lines ref.json) <(result_lines ipc.json) >/dev/null &&
  ok "ipc with --peer-access off" || bad "ipc with --peer-access off (exit $rc)"
run 2 env HALO3D_CUDA_APPLY=bogus "$halo3d" "${solve[@]}" --halo ipc
[[ $rc -eq 2 && $(halo_errors) -eq 1 ]] && ok "HALO3D_CUDA_APPLY=bogus: exit 2, one line" ||
  bad "HALO3D_CUDA_APPLY=bogus: exit $rc, $(halo_errors) error lines"

# 4. nccl on one rank works (the NCCL init path, no faces).
run 1 "$halo3d" solve --backend cuda --grid 32,32,32 --halo nccl --output none
if grep -q "built without NCCL" out; then
  ok "nccl: not compiled in this build (skipped)"
  nccl=0
else
  nccl=1
  [[ $rc -eq 0 ]] && grep -q "halo nccl" out && ok "nccl on 1 rank" || bad "nccl on 1 rank (exit $rc)"
fi

# 5. nccl with 2 ranks: refused before NCCL is called when they share a GPU (exit 6, one
#    line naming the cause and the transports that work), else it runs.
if [[ $nccl -eq 1 ]]; then
  run 2 "$halo3d" "${solve[@]}" --halo nccl --report nccl.json
  if [[ $gpus -eq 1 ]]; then
    if [[ $rc -eq 6 && $(halo_errors) -eq 1 ]] && grep -q "^halo3d: error: --halo nccl: ranks 0 and 1 share GPU .*ipc" out; then
      ok "nccl on 2 ranks sharing a GPU: $(grep '^halo3d: error' out)"
    else
      bad "nccl on 2 ranks sharing a GPU: exit $rc (expected 6 and one clear line)"
    fi
  else
    [[ $rc -eq 0 ]] && diff <(result_lines ref.json) <(result_lines nccl.json) >/dev/null &&
      ok "nccl on 2 ranks (2 GPUs) equals mpi/off" || bad "nccl on 2 ranks, 2 GPUs (exit $rc)"
  fi
fi

# 6. mpi-cuda: runs where the MPI is CUDA-aware, else refused with exit 6 saying why.
run 2 "$halo3d" "${solve[@]}" --halo mpi-cuda --report mc.json
if [[ $rc -eq 6 ]]; then
  [[ $(halo_errors) -eq 1 ]] && grep -q "not CUDA-aware" out && ok "mpi-cuda refused: $(grep '^halo3d: error' out)" ||
    bad "mpi-cuda refusal message"
else
  [[ $rc -eq 0 ]] && diff <(result_lines ref.json) <(result_lines mc.json) >/dev/null &&
    ok "mpi-cuda (CUDA-aware MPI) equals mpi/off" || bad "mpi-cuda (exit $rc)"
fi

# 7. auto on 2 ranks: times the candidates, prints and records the choice.
run 2 "$halo3d" "${solve[@]}" --halo auto --report auto.json
if [[ $rc -eq 0 ]] && grep -q "^halo auto: chose" out && grep -q '"halo_selection"' auto.json &&
  grep -q '"candidates"' auto.json && diff <(result_lines ref.json) <(result_lines auto.json) >/dev/null; then
  chosen=$(sed -n 's/.*"chosen": "\([^"]*\)".*/\1/p' auto.json)
  grep -q "halo $chosen, overlap" out && ok "auto on 2 ranks: $(grep '^halo auto: chose' out)" ||
    bad "auto: header does not name the chosen transport $chosen"
else
  bad "auto on 2 ranks (exit $rc)"
fi
# The HDF5 attribute "halo" names the chosen transport (checked where h5dump exists).
if command -v h5dump >/dev/null; then
  run 2 "$halo3d" solve --backend cuda --grid 24,24,24 --halo auto --output auto.h5
  h5dump -a /halo auto.h5 2>/dev/null | grep -Eq '"(mpi|mpi-cuda|ipc|nccl)"' && ok "auto: HDF5 halo attribute" ||
    bad "auto: HDF5 halo attribute"
fi

# 8. probe on 2 ranks: table, JSON with ipc measured, topology section.
run 2 "$halo3d" probe --backend cuda --reps 5 --topology --grid 512,512,512 --report probe.json
if [[ $rc -eq 0 && -s probe.json ]] && grep -q '"ipc": \[' probe.json && grep -q '"mpi": \[' probe.json &&
  grep -q "communication wall" out && grep -q '"topology"' probe.json; then
  ok "probe on 2 ranks: $(grep -m1 'peer access:' out)"
else
  bad "probe on 2 ranks (exit $rc)"
fi
grep -A16 '^ranks 0-1' out | sed 's/^/     /' || true

((failed == 0)) && echo "all GPU transport checks passed" || echo "SOME GPU TRANSPORT CHECKS FAILED"
exit $failed
