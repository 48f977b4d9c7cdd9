#!/bin/bash
# Checkpoint/restart round trips and refusals, with mpirun (no Slurm).
#   test_checkpoint.sh BIN SRC cg|jacobi|heat   stop a run at iteration K with a checkpoint, restart it
#       on the same process grid (must be bitwise the uninterrupted run), on 3 ranks as 1,3,1 and on
#       1 rank (must agree to 1e-12 of max|u|; the test says whether it was bitwise too)
#   test_checkpoint.sh BIN SRC refuse           a checkpoint of another grid/problem/solver/rhs/modes/
#       seed/version, a solution file and a non-HDF5 file are refused with exit 2 and one error line;
#       a missing one with exit 5
# shellcheck source=tests/production/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_python_h5py
new_workdir "checkpoint-$CASE"
cd "$WORK"

# run NAME RANKS ARGS...: halo3d solve under mpirun; output in NAME.out/NAME.err, rc in $rc.
run() {
  local name=$1 np=$2
  shift 2
  rc=0
  mpi -np "$np" "$BIN" solve "$@" >"$name.out" 2>"$name.err" || rc=$?
}

round_trip() {
  local k=$1 stop_rc=$2
  shift 2
  local problem=("$@")
  # for heat the run length is --steps: stop with --steps K, finish with the full count
  local stop_opts=(--max-iters "$k") full_opts=()
  if [[ $CASE == heat ]]; then stop_opts=(--steps "$k"); full_opts=(--steps 400); fi

  log "reference: uninterrupted on 2 ranks (2,1,1)"
  run ref 2 "${problem[@]}" "${full_opts[@]}" --procs 2,1,1 --output ref.h5
  expect_rc 0 "$rc" "uninterrupted run ($(tail -n1 ref.err))"

  log "stopped at iteration $k with --checkpoint-every $k"
  run part 2 "${problem[@]}" "${stop_opts[@]}" --procs 2,1,1 --output none --checkpoint ck.h5 --checkpoint-every "$k"
  expect_rc "$stop_rc" "$rc" "stopped run ($(tail -n1 part.err))"
  [[ -f ck.h5 ]] && ! compgen -G "ck.h5.partial*" >/dev/null || fail "no checkpoint ck.h5 (or a leftover ck.h5.partial*)"
  got=$(h5 checkpoint ck.h5) || fail "ck.h5 is not a readable checkpoint: $got"
  [[ $got == "$k" ]] || fail "checkpoint is at iteration $got, expected $k"
  cp ck.h5 ck-orig.h5

  log "restart on the same process grid (also checkpointing into the file it restarts from)"
  run same 2 "${problem[@]}" "${full_opts[@]}" --procs 2,1,1 --output same.h5 --report same.json \
      --restart ck.h5 --checkpoint ck.h5 --checkpoint-every 1000000
  expect_rc 0 "$rc" "restart on 2 ranks ($(tail -n1 same.err))"
  grep -q "restarted from ck.h5 at iteration $k" same.out || fail "no 'restarted from' line: $(cat same.out)"
  grep -q "\"restarted_from\": $k" same.json || fail "report does not say restarted_from $k"
  h5 same ref.h5 same.h5 || fail "restart on the same grid is not bitwise the uninterrupted run"

  for spec in "3 1,3,1" "1 1,1,1"; do
    read -r np procs <<<"$spec"
    log "restart on $np rank(s) as $procs from the 2-rank checkpoint"
    run "other$np" "$np" "${problem[@]}" "${full_opts[@]}" --procs "$procs" --output "other$np.h5" --restart ck-orig.h5
    expect_rc 0 "$rc" "restart on $np ranks ($(tail -n1 "other$np.err"))"
    h5 same ref.h5 "other$np.h5" --close 1e-12 || fail "restart on $np ranks differs from the uninterrupted run by more than rounding"
  done
}

refuse() {
  # expect_refusal RC WHAT ARGS...: exit RC and exactly one "halo3d: error:" line about --restart.
  expect_refusal() {
    local want=$1 what=$2
    shift 2
    run refuse 2 "$@" --output none
    expect_rc "$want" "$rc" "$what"
    local n
    n=$(grep -c '^halo3d: error:' refuse.err || true)
    [[ $n == 1 ]] || fail "$what: $n 'halo3d: error:' lines, expected one: $(cat refuse.err)"
    grep '^halo3d: error:' refuse.err | grep -q -- '--restart' || fail "$what: the error does not name --restart"
    log "  refused ($what): $(grep '^halo3d: error:' refuse.err)"
  }
  local base=(--solver jacobi --grid 32,32,32 --mode 1,1,1 --tol 1e-8)
  run mk 2 "${base[@]}" --max-iters 100 --checkpoint ck.h5 --checkpoint-every 100 --output sol.h5
  expect_rc 3 "$rc" "making the checkpoint"
  run mkr 2 --solver jacobi --grid 32,32,32 --rhs random --seed 1 --max-iters 50 --checkpoint ckr.h5 --checkpoint-every 50 --output none
  expect_rc 3 "$rc" "making the random-rhs checkpoint"
  cp ck.h5 ckv.h5
  h5 set-attr ckv.h5 version 0.0.0-other
  echo "not a checkpoint" >text.h5

  expect_refusal 2 "other grid" --solver jacobi --grid 32,32,40 --mode 1,1,1 --restart ck.h5
  expect_refusal 2 "other problem" --problem heat --grid 32,32,32 --mode 1,1,1 --restart ck.h5
  expect_refusal 2 "other solver" --solver cg --grid 32,32,32 --mode 1,1,1 --restart ck.h5
  expect_refusal 2 "other rhs" --solver jacobi --grid 32,32,32 --rhs random --restart ck.h5
  expect_refusal 2 "other mode" --solver jacobi --grid 32,32,32 --mode 2,1,1 --restart ck.h5
  expect_refusal 2 "one more mode" --solver jacobi --grid 32,32,32 --mode 1,1,1 --mode 2,2,2 --restart ck.h5
  expect_refusal 2 "other seed" --solver jacobi --grid 32,32,32 --rhs random --seed 2 --restart ckr.h5
  expect_refusal 2 "other version" "${base[@]}" --restart ckv.h5
  expect_refusal 2 "a solution file" "${base[@]}" --restart sol.h5
  expect_refusal 2 "not an HDF5 file" "${base[@]}" --restart text.h5
  expect_refusal 5 "missing file" "${base[@]}" --restart missing.h5
  # and the matching run is accepted
  run ok 2 "${base[@]}" --max-iters 150 --restart ck.h5 --output none
  expect_rc 3 "$rc" "the matching restart ($(tail -n1 ok.err))"
  grep -q 'restarted from ck.h5 at iteration 100' ok.out || fail "matching restart did not restart"
}

case $CASE in
  # MG-PCG (the default) converges in about 9 iterations here: stop after 4.
  cg) round_trip 4 3 --grid 32,32,32 --rhs random --seed 3 --tol 1e-10 ;;
  cg-plain) round_trip 50 3 --precond none --grid 32,32,32 --rhs random --seed 3 --tol 1e-10 ;;
  jacobi) round_trip 300 3 --solver jacobi --grid 32,32,32 --rhs random --seed 5 --tol 1e-7 ;;
  heat)
    round_trip 100 0 --problem heat --grid 32,32,32 --rhs random --seed 5
    # heat's identity includes alpha and dt
    run dt 2 --problem heat --grid 32,32,32 --rhs random --seed 5 --steps 400 --dt 1e-5 --output none --restart ck-orig.h5
    expect_rc 2 "$rc" "heat restart with another --dt"
    log "  refused (other dt): $(grep '^halo3d: error:' dt.err)"
    ;;
  refuse) refuse ;;
  *) fail "unknown case '$CASE' (cg, cg-plain, jacobi, heat, refuse)" ;;
esac
log "PASS checkpoint $CASE"
cleanup_workdir_on_success
