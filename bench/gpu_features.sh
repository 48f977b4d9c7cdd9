#!/usr/bin/env bash
# The input/output features on the GPU machine: each run on --backend cuda and host, /u (and
# the time series) compared bitwise with h5diff. Usage: bench/gpu_features.sh BIN_DIR OUT_DIR
set -uo pipefail
bin=$1; out=$2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader,tcp
mpi="mpirun --oversubscribe --bind-to none"
step() { echo "=== $*"; }
same() {  # label np options... : the run on cuda and host, then h5diff of /u (and /series)
  local label=$1 np=$2; shift 2
  for be in cuda host; do
    $mpi -np "$np" "$bin/halo3d" solve --backend $be --output "$out/f_$be.h5" --report none --quiet \
      "$@" > "$out/f_$be.txt" 2>&1 || { echo "$label: $be run failed:"; tail -3 "$out/f_$be.txt"; }
  done
  if "$bin/h5diff" "$out/f_cuda.h5" "$out/f_host.h5" /u /u >/dev/null; then
    echo "$label: /u cuda == host bitwise ($(grep -E 'converged|steps done' "$out/f_cuda.txt" | head -1))"
  else
    echo "$label: /u DIFFERS"
  fi
  if "$bin/h5diff" -q "$out/f_cuda.h5" "$out/f_host.h5" /series /series >/dev/null 2>&1; then
    echo "$label: /series cuda == host bitwise"
  fi
}
step "fields, boundaries, implicit heat with boundaries, time series"
$mpi -np 1 "$bin/halo3d" solve --grid 40,36,32 --rhs random --output "$out/src.h5" --report none --quiet >/dev/null
same "rhs file (the random rhs of a previous /u)" 2 --grid 40,36,32 --rhs "file:$out/src.h5:/u"
same "rhs expr gaussian + boundary faces" 2 --grid 48,40,36 \
  --rhs "expr:1000*exp(-100*((x-0.5)^2+(y-0.5)^2+(z-0.5)^2))" --boundary x0=1,y1=0.5
same "poisson boundary expr, 3 ranks" 3 --grid 33,31,29 --boundary "expr:1+2*x-y+0.5*z"
same "heat explicit, boundary x0=1" 2 --grid 32,30,28 --problem heat --steps 30 \
  --initial expr:0 --boundary x0=1
same "heat implicit, boundary expr, series every 4" 2 --grid 32,30,28 --problem heat \
  --time-scheme implicit --dt 0.002 --steps 10 --initial random --boundary "expr:1+x" --output-every 4
same "heat crank-nicolson, series every 3, 3 ranks" 3 --grid 31,29,27 --problem heat \
  --time-scheme crank-nicolson --dt 0.001 --steps 7 --output-every 3
rm -f "$out"/f_*.h5 "$out"/f_*.xdmf "$out"/src.h5 "$out"/src.xdmf
