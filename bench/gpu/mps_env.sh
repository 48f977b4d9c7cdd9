# Sourced by the bench/gpu scripts whose ranks share one GPU: mps_start starts the CUDA MPS
# daemon when none runs and nvidia-cuda-mps-control exists (ranks then run concurrently
# instead of taking turns); mps_stop stops it again only if mps_start started it;
# mps_solve runs one MG-PCG solve of the issue-23 measurements.
mps_started=0
mps_start() {
  if command -v nvidia-cuda-mps-control >/dev/null && [ -z "${CUDA_MPS_PIPE_DIRECTORY:-}" ]; then
    export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps CUDA_MPS_LOG_DIRECTORY=/tmp/mpslog
    mkdir -p /tmp/mps /tmp/mpslog && nvidia-cuda-mps-control -d && mps_started=1 && sleep 1
  fi
}
mps_stop() {
  if [ "$mps_started" = 1 ]; then echo quit | nvidia-cuda-mps-control; fi
  return 0
}
# mps_solve NAME RANKS ARGS...: `halo3d solve` on the CUDA backend, random right-hand side to
# 1e-8, halo over ipc, no output, ranks unbound; report $out/NAME.json, log $out/NAME.log
# ($bin: the build folder; $solve_timeout seconds, default 120). Returns mpirun's status.
mps_solve() {
  local name=$1 np=$2
  shift 2
  timeout "${solve_timeout:-120}" mpirun --oversubscribe --bind-to none -np "$np" "$bin/halo3d" \
    solve --backend cuda --rhs random --tol 1e-8 --output none --halo ipc \
    --report "$out/$name.json" "$@" >"$out/$name.log" 2>&1
}
