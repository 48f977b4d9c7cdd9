# Sourced by the bench/gpu scripts whose ranks share one GPU: mps_start starts the CUDA MPS
# daemon when none runs and nvidia-cuda-mps-control exists (ranks then run concurrently
# instead of taking turns); mps_stop stops it again only if mps_start started it.
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
