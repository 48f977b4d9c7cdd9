#!/usr/bin/env bash
# Issue 23 on the GPU machine, in one call each part:
#   tests   the CUDA tests (multigrid invariance on 1-8 ranks under MPS), CUDA against host
#           bitwise on a 2,2,1 odd grid whose coarse levels stay distributed
#   scaling MG-PCG solve time at 512^3 and 256^3 (random, tol 1e-8) on 1, 2, 4 and 8 ranks
#           sharing the GPU under MPS, this binary against OLD_HALO3D back to back; and 2
#           ranks without MPS (the cost the start-up warning names)
#   gather  --mg-gather 4096, 32768 and 262144 at 512^3 on 1-8 ranks under MPS, and bench's
#           per-level table (time, exchanges, messages, halo bytes) on 1 and 8 ranks
#   links   probe (ipc and mpi latency) with 2 and 8 ranks under MPS; MG-PCG 512^3 on 8
#           ranks with --halo mpi against ipc; the host backend at 256^3 on 1-16 cores
#           (solve, and bench on 16 ranks), one rank per core
#   default --mg-gather 32768 to 2097152 on the GPU (4 and 8 ranks, 512^3 and 256^3) and on
#           16 host cores (256^3, 512^3): the measurements behind the default
#   invariance  tests/invariance_test.py on the CUDA backend (14 process grids of 1-8 ranks
#           sharing the GPU under MPS, double and mixed, bitwise against 1 rank)
#   round3  --overlap auto on top of round2: MG-PCG solve time at 512^3 (1-8 ranks) and 256^3 (1
#           and 4 ranks) against OLD_HALO3D back to back, bench's level table on 2 and 8
#           ranks, and the 16 host cores: halo3d against hypre PFMG-PCG (bench/peers/compare.sh,
#           PEERS=dir of halo3d_peer_hypre) at 256^3 and 512^3, bench --backend host at 256^3
#   round2  the gather over CUDA IPC and the one-face-per-round exchange: the BoxGather test
#           on CUDA (2-8 ranks), MG-PCG solve time at 512^3 (1-8 ranks) and 256^3 (4 ranks)
#           against OLD_HALO3D back to back, --mg-gather 262144 to 8388608 now that
#           the gather stays on the GPU, and bench's level table on 2 and 8 ranks
# Usage: bench/gpu_mg_scaling.sh tests|scaling|gather|links|default|invariance BIN_DIR OUT_DIR [OLD_HALO3D]
set -uo pipefail
part=$1; bin=$2; out=$3; old=${4:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader,tcp
export OMP_NUM_THREADS=2 NCCL_NVLS_ENABLE=0
bind=none  # ranks sharing one GPU; one rank per core for the host backend
mpi() { mpirun --oversubscribe --bind-to $bind "$@"; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/gpu.txt"
mps_on() {
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps CUDA_MPS_LOG_DIRECTORY=/tmp/mpslog
  mkdir -p /tmp/mps /tmp/mpslog; nvidia-cuda-mps-control -d; sleep 1
}
mps_off() { echo quit | nvidia-cuda-mps-control; sleep 2; unset CUDA_MPS_PIPE_DIRECTORY; }
solve_line() {  # np binary args...: iterations and the solve time
  local np=$1 b=$2; shift 2
  mpi -np "$np" "$b" solve --rhs random --tol 1e-8 --output none "$@" 2>&1 |
    grep -E "^warning|^note|converged after|time: solve" | sed 's/ on the slowest rank.*//' | tr '\n' ' '
  echo
}

if [ "$part" = tests ]; then
  "$bin/test_kernels" --gtest_filter='*cuda*:HostVsCuda*' > "$out/test_kernels_cuda.log" 2>&1
  echo "test_kernels cuda rc=$?"
  mps_on
  for n in 1 2 3 4 5 6 7 8; do
    filter='*'; [ $n -gt 4 ] && filter='Multigrid.VcycleBitwiseOnEveryProcessGrid'
    HALO3D_TEST_BACKEND=cuda timeout 300 mpirun --oversubscribe --bind-to none -np $n "$bin/test_multigrid" --gtest_filter="$filter" \
      > "$out/mg_cuda_np$n.log" 2>&1
    echo "test_multigrid cuda np$n rc=$? $(grep -cE '^.*OK \]' "$out/mg_cuda_np$n.log") ok"
    grep -E "FAILED|Failure" "$out/mg_cuda_np$n.log" | head -3
  done
  for n in 1 4; do
    HALO3D_TEST_BACKEND=cuda timeout 300 mpirun --oversubscribe --bind-to none -np $n "$bin/test_parallel" > "$out/par_cuda_np$n.log" 2>&1
    echo "test_parallel cuda np$n rc=$?"; grep -E "FAILED" "$out/par_cuda_np$n.log" | head -3
    HALO3D_TEST_BACKEND=cuda timeout 300 mpirun --oversubscribe --bind-to none -np $n "$bin/test_transports" > "$out/tr_cuda_np$n.log" 2>&1
    echo "test_transports cuda np$n rc=$?"; grep -E "FAILED" "$out/tr_cuda_np$n.log" | head -3
  done
  for prec in double mixed; do
    for be in cuda host; do
      mpi -np 4 "$bin/halo3d" solve --backend $be --grid 45,38,52 --procs 2,2,1 --rhs random \
        --seed 11 --tol 1e-10 --precision $prec --output "$out/u_$be.h5" --quiet | grep -E "converged"
    done
    mpi -np 1 "$bin/halo3d" solve --backend cuda --grid 45,38,52 --rhs random --seed 11 \
      --tol 1e-10 --precision $prec --output "$out/u_one.h5" --quiet | grep -E "converged"
    "$bin/h5diff" "$out/u_cuda.h5" "$out/u_host.h5" /u /u && "$bin/h5diff" "$out/u_cuda.h5" "$out/u_one.h5" /u /u &&
      echo "$prec: 4 ranks 2,2,1 cuda == host == 1 rank, /u bitwise"
  done
  rm -f "$out"/u_*.h5 "$out"/*.xdmf
  mps_off
fi

if [ "$part" = scaling ]; then
  mps_on
  for g in 512 256; do
    for np in 1 2 4 8; do
      [ $g = 256 ] && [ $np = 8 ] && continue
      for which in new old; do
        b="$bin/halo3d"; [ $which = old ] && b=$old
        [ -x "$b" ] || continue
        echo "$g^3 np$np $which: $(solve_line $np "$b" --grid $g,$g,$g --halo ipc)"
      done
    done
  done
  mps_off
  echo "256^3 np2 without MPS: $(solve_line 2 "$bin/halo3d" --grid 256,256,256 --halo ipc)"
  echo "256^3 np1 without MPS: $(solve_line 1 "$bin/halo3d" --grid 256,256,256)"
fi
if [ "$part" = gather ]; then
  mps_on
  ls -la /tmp/mps
  for np in 1 2 4 8; do
    for gp in 4096 32768 262144; do
      echo "512^3 np$np --mg-gather $gp: $(solve_line $np "$bin/halo3d" --grid 512,512,512 --halo ipc --mg-gather $gp)"
    done
  done
  for np in 1 8; do
    mpi -np $np "$bin/halo3d" bench --grid 512,512,512 --halo ipc --reps 10 > "$out/bench_np$np.txt" 2>&1
    echo "bench np$np rc=$?"; grep -E "^copy|^mg_vcycle |^mg_pcg_iteration |^level|^[0-9] " "$out/bench_np$np.txt"
  done
  mps_off
fi
if [ "$part" = links ]; then
  mps_on
  for np in 2 8; do
    mpi -np $np "$bin/halo3d" probe --backend cuda --sizes 8,4K,64K,1M --reps 20 > "$out/probe_np$np.txt" 2>&1
    echo "probe np$np rc=$?"; grep -E "^ *[0-9]+ [KMG]?i?B" "$out/probe_np$np.txt" | head -8
  done
  for h in ipc mpi; do
    echo "512^3 np8 --halo $h: $(solve_line 8 "$bin/halo3d" --grid 512,512,512 --halo $h)"
  done
  mps_off
  export OMP_NUM_THREADS=1; bind=core
  for np in 1 2 4 8 16; do
    echo "host 256^3 np$np: $(solve_line $np "$bin/halo3d" --backend host --grid 256,256,256)"
  done
  mpi -np 16 "$bin/halo3d" bench --backend host --grid 256,256,256 --reps 5 > "$out/bench_host_np16.txt" 2>&1
  grep -E "^copy|^mg_vcycle |^mg_pcg_iteration |^level|^[0-9]+ " "$out/bench_host_np16.txt"
fi
if [ "$part" = default ]; then
  mps_on
  for case in "4 512" "8 512" "4 256" "8 256"; do
    set -- $case
    for gp in 32768 262144 1048576 2097152; do
      echo "$2^3 np$1 --mg-gather $gp: $(solve_line $1 "$bin/halo3d" --grid $2,$2,$2 --halo ipc --mg-gather $gp)"
    done
  done
  mps_off
  export OMP_NUM_THREADS=1; bind=core
  for g in 256 512; do
    for gp in 32768 262144; do
      echo "host $g^3 np16 --mg-gather $gp: $(solve_line 16 "$bin/halo3d" --backend host --grid $g,$g,$g --mg-gather $gp)"
    done
  done
fi
if [ "$part" = round2 ]; then
  mps_on
  for n in 2 3 4 8; do
    HALO3D_TEST_BACKEND=cuda timeout 120 mpirun --oversubscribe --bind-to none -np $n "$bin/test_transports" \
      --gtest_filter='*BoxGather*:*Bitwise*:*Repeated*' > "$out/tr_cuda_np$n.log" 2>&1
    echo "test_transports cuda np$n rc=$? $(grep -c 'OK \]' "$out/tr_cuda_np$n.log") ok"; grep -E "FAILED|wrong" "$out/tr_cuda_np$n.log" | head -3
  done
  for rep in 1 2; do
    for case in "512 1" "512 2" "512 4" "512 8" "256 4"; do
      set -- $case
      for which in new old; do
        b="$bin/halo3d"; [ $which = old ] && b=$old
        echo "$1^3 np$2 $which: $(solve_line $2 "$b" --grid $1,$1,$1 --halo ipc)"
      done
    done
  done
  for case in "512 2" "512 4" "512 8" "256 4"; do
    set -- $case
    for gp in 262144 2097152 8388608; do
      echo "$1^3 np$2 --mg-gather $gp: $(solve_line $2 "$bin/halo3d" --grid $1,$1,$1 --halo ipc --mg-gather $gp)"
    done
  done
  for np in 2 8; do
    mpi -np $np "$bin/halo3d" bench --grid 512,512,512 --halo ipc --reps 10 > "$out/bench_np$np.txt" 2>&1
    echo "bench np$np rc=$?"; grep -E "^preconditioner|^copy|^mg_vcycle |^mg_pcg_iteration |^level|^[0-9]+ " "$out/bench_np$np.txt"
  done
  mps_off
fi
if [ "$part" = round3 ]; then
  mps_on
  for rep in 1 2; do
    for case in "512 1" "512 2" "512 4" "512 8" "256 1" "256 4"; do
      set -- $case
      for which in new old; do
        b="$bin/halo3d"; [ $which = old ] && b=$old
        echo "$1^3 np$2 $which: $(solve_line $2 "$b" --grid $1,$1,$1 --halo ipc | sed 's/note: [^)]*) //')"
      done
    done
  done
  for np in 2 8; do
    mpi -np $np "$bin/halo3d" bench --grid 512,512,512 --halo ipc --reps 10 > "$out/bench_np$np.txt" 2>&1
    echo "bench np$np rc=$?"; grep -E "^overlap|^copy|^mg_vcycle |^mg_pcg_iteration |^level|^[0-9]+ " "$out/bench_np$np.txt"
  done
  mps_off
  export OMP_NUM_THREADS=1 MPIRUN="mpirun --oversubscribe" MPIRUN_ARGS="--bind-to core"
  here=$(cd "$(dirname "$0")/.." && pwd)
  for g in 256 512; do
    reps=3; [ $g = 512 ] && reps=1
    bash "$here/bench/peers/compare.sh" --grid $g,$g,$g --ranks 16 --repeats $reps --solvers halo3d-mg,hypre-pfmg \
      --backend host --build "$PEERS" --halo3d "$bin/halo3d" --log "$out/peers_$g.log" 2>&1 | tail -8
  done
  bind=core
  mpi -np 16 "$bin/halo3d" bench --backend host --grid 256,256,256 --reps 5 > "$out/bench_host_np16.txt" 2>&1
  grep -E "^overlap|^copy|^apply|^operator|^cg_iter|^mg_smooth |^mg_vcycle |^mg_pcg_iteration |^level|^[0-9]+ " "$out/bench_host_np16.txt"
fi
if [ "$part" = invariance ]; then
  mps_on
  here=$(cd "$(dirname "$0")/.." && pwd)
  python3 "$here/tests/invariance_test.py" "$bin/halo3d" "mpirun --bind-to none" cuda > "$out/invariance_cuda.log" 2>&1
  echo "invariance_test cuda rc=$? $(grep -c '^ok' "$out/invariance_cuda.log") ok, $(grep -c '^FAIL' "$out/invariance_cuda.log") failed"
  grep -E "^FAIL" "$out/invariance_cuda.log" | head -5
  mps_off
fi
exit 0
