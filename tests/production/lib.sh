# shellcheck shell=bash
# Helpers for the production tests (sourced). Every test script is called as
#   bash tests/production/test_X.sh HALO3D_BINARY SOURCE_DIR [CASE]
# and exits 0 (pass), 1 (fail) or 77 (skipped, with the reason printed; CTest SKIP_RETURN_CODE).
set -euo pipefail

[[ $# -ge 2 ]] || { echo "usage: $0 HALO3D_BINARY SOURCE_DIR [CASE]" >&2; exit 2; }
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
shift 2
CASE=${1:-}
HERE=$SRC/tests/production
JOBS=$SRC/jobs
[[ -x $BIN ]] || { echo "FAIL: $BIN is not executable" >&2; exit 1; }
# h5py and numpy are the system's packages: the system interpreter, unless told otherwise.
PY=${HALO3D_PYTHON:-/usr/bin/python3}
MPIRUN=${HALO3D_MPIEXEC:-mpirun}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
# 2 cores and up to 4 ranks: yield instead of spinning in MPI waits, or every test crawls.
export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}

T_START=$SECONDS
log() { printf '[%4ds] %s\n' "$((SECONDS - T_START))" "$*"; }
fail() {
  printf 'FAIL: %s\n' "$*" >&2
  exit 1
}
skip() {
  printf 'SKIP: %s\n' "$*"
  exit 77
}

# wait_for SECONDS WHAT COMMAND...: polls COMMAND every 0.2 s; fails the test after SECONDS.
wait_for() {
  local limit=$1 what=$2
  shift 2
  local end=$((SECONDS + limit))
  until "$@"; do
    ((SECONDS < end)) || fail "timed out after ${limit}s waiting for $what"
    sleep 0.2
  done
}

# A fresh work folder per test run, under the build tree; kept for inspection on failure,
# removed when the test passes (HALO3D_TEST_KEEP=1 keeps it).
new_workdir() {
  local root=${HALO3D_TEST_WORK:-${TMPDIR:-/tmp}}
  mkdir -p "$root"
  WORK=$(mktemp -d "$root/$1.XXXXXX")
  log "work folder $WORK"
}
cleanup_workdir_on_success() {
  if [[ ${HALO3D_TEST_KEEP:-0} != 1 && -n ${WORK:-} ]]; then rm -rf "$WORK"; fi
}

# mpirun as the tests use it (oversubscribed: 2 cores, up to 4 ranks).
mpi() { "$MPIRUN" --oversubscribe "$@"; }

# h5 FILE...: the h5tool.py helper (compare, checkpoint check, attribute forging).
h5() { "$PY" "$HERE/h5tool.py" "$@"; }

# expect_rc WANT GOT WHAT
expect_rc() { [[ $2 == "$1" ]] || fail "$3: exit code $2, expected $1"; }

need_python_h5py() {
  "$PY" -c 'import h5py, numpy' 2>/dev/null ||
    skip "$PY has no h5py/numpy (Debian: apt-get install python3-h5py python3-numpy; or set HALO3D_PYTHON)"
}

# start_ranks NAME NP SOLVE_ARGS...: halo3d solve under mpirun in the background. Each rank
# writes its pid to NAME.pid.R (the shell execs halo3d, so it is halo3d's pid), so a test can
# signal or kill one rank. Sets MPI_PID; output in NAME.out / NAME.err.
start_ranks() {
  local name=$1 np=$2
  shift 2
  rm -f "$name".pid.*
  # shellcheck disable=SC2016  # expanded by each rank's shell, not here
  # "$MPIRUN" itself, not the mpi function: a backgrounded function is a subshell, and
  # $! would be that shell's pid rather than mpirun's.
  "$MPIRUN" --oversubscribe -np "$np" sh -c 'echo $$ >"$0.pid.$OMPI_COMM_WORLD_RANK"; exec "$@"' "$PWD/$name" \
    "$BIN" solve "$@" >"$name.out" 2>"$name.err" &
  MPI_PID=$!
  local r
  for ((r = 0; r < np; r++)); do wait_for 30 "rank $r of $name to start" test -s "$name.pid.$r"; done
}
rank_pid() { cat "$1.pid.$2"; }
# alive PID: running (a zombie, exited but not yet reaped by us, does not count)
alive() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [[ ${stat%% *} != Z ]]
}
# progress NAME: the last iteration a --monitor line of NAME.out shows (0 before the first).
progress() { awk '$1 == "iter" || $1 == "step" { n = $2 } END { print n + 0 }' "$1.out"; }
# finish NAME LIMIT: waits at most LIMIT s for mpirun to exit; its exit code in $rc.
finish() {
  local name=$1 limit=$2
  wait_for "$limit" "mpirun of $name to exit" eval "! alive $MPI_PID"
  rc=0
  wait "$MPI_PID" || rc=$?
}

# ---- the test Slurm cluster (tests/production/slurm_cluster.sh) ----
# use_cluster: reads the cluster's env.sh (SLURM_CONF, fake GPU count) or skips the test.
use_cluster() {
  local d=${HALO3D_SLURM_DIR:-${TMPDIR:-/tmp}/halo3d-slurm}
  [[ -f $d/env.sh ]] || skip "no test Slurm cluster running ($d/env.sh missing: the production.slurm.start fixture was skipped or failed)"
  # shellcheck source=/dev/null
  source "$d/env.sh"
  timeout 10 sinfo -h >/dev/null 2>&1 || fail "the test cluster does not answer (SLURM_CONF=$SLURM_CONF)"
  # Job scripts as a user would run them, configured through the environment:
  export HALO3D_BIN=$BIN HALO3D_PYTHON=$PY
  # the plugin srun --mpi=list offers (pmix here; pmi2/none elsewhere)
  export HALO3D_SRUN_MPI=${HALO3D_SRUN_MPI:-auto}
  GPN=${HALO3D_TEST_GPUS_PER_NODE:-0}
}
# submit KIND ARGS...: jobs/submit.sh; sets JOB, RUN_DIR, JOBLOG.
submit() {
  local out
  out=$("$JOBS/submit.sh" "$@") || fail "jobs/submit.sh $* failed"
  JOB=$(sed -n 's/^HALO3D_JOB_ID=//p' <<<"$out")
  RUN_DIR=$(sed -n 's/^HALO3D_RUN_DIR=//p' <<<"$out")
  JOBLOG=$(sed -n 's/^HALO3D_LOG=//p' <<<"$out")
  [[ -n $JOB && -d $RUN_DIR ]] || fail "submit.sh printed no job id / run folder: $out"
  log "submitted job $JOB: jobs/submit.sh $*"
}
job_field() { timeout 10 scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1; }
# wait_job JOB LIMIT STATE...: until the job is in one of the states; fails on a final other one.
wait_job() {
  local job=$1 limit=$2
  shift 2
  local want=" $* " end=$((SECONDS + limit)) st
  while :; do
    st=$(job_field "$job" JobState)
    [[ $want == *" $st "* ]] && return 0
    case $st in
      COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | PREEMPTED | BOOT_FAIL | DEADLINE)
        fail "job $job ended $st (wanted $*): $(tail -n 30 "${JOBLOG:-/dev/null}" 2>/dev/null)" ;;
    esac
    ((SECONDS < end)) || fail "timed out after ${limit}s waiting for job $job to be $* (it is $st): $(tail -n 20 "${JOBLOG:-/dev/null}" 2>/dev/null)"
    sleep 0.5
  done
}
