#!/bin/bash
# A rank that dies (kill -9) ends the whole job within seconds: no hang, no final output file,
# and the last checkpoint is intact and restartable to the uninterrupted answer.
#   1. checkpoints every 500 iterations; kill -9 rank 1 mid-solve
#   2. checkpoints EVERY iteration (so the kill very likely lands inside a checkpoint write);
#      kill -9 rank 0, the rank that renames the finished file into place
#   3. restart from what phase 2 left -> /u bitwise the uninterrupted run's
# shellcheck source=tests/production/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_python_h5py
new_workdir kill-rank
cd "$WORK"

P=(--solver jacobi --grid 40,40,40 --mode 1,1,1 --tol 1e-9 --max-iters 8000 --procs 3,1,1 --monitor 250)
END_LIMIT=10  # seconds from the kill to the end of every rank

log "reference: uninterrupted on 3 ranks"
start_ranks ref 3 "${P[@]}" --output ref.h5
finish ref 120
[[ $rc == 0 || $rc == 3 ]] || fail "reference run: exit $rc: $(tail -n3 ref.err)"
ref_rc=$rc

# kill_one NAME RANK: kill -9 that rank; every rank and mpirun must be gone within END_LIMIT.
kill_one() {
  local name=$1 r=$2 pid t0
  pid=$(rank_pid "$name" "$r")
  kill -9 "$pid"
  t0=$SECONDS
  log "$name: kill -9 rank $r (pid $pid) at iteration ~$(progress "$name")"
  finish "$name" "$END_LIMIT"
  ((rc != 0 && rc != 75)) || fail "$name: mpirun exit $rc after a rank was killed; expected a failure"
  local q
  for ((q = 0; q < 3; q++)); do
    wait_for "$END_LIMIT" "rank $q of $name to end" eval "! alive $(rank_pid "$name" $q)"
  done
  log "$name: job ended $((SECONDS - t0)) s after the kill, mpirun exit $rc"
  [[ ! -e $name.h5 ]] || fail "$name: the final output $name.h5 exists after a crash"
}

log "phase 1: periodic checkpoints, rank 1 killed"
start_ranks p1 3 "${P[@]}" --output p1.h5 --checkpoint ck.h5 --checkpoint-every 500
wait_for 60 "a first checkpoint" test -f ck.h5
wait_for 60 "p1 to iterate past 1500" eval "(( \$(progress p1) >= 1500 ))"
kill_one p1 1
k1=$(h5 checkpoint ck.h5) || fail "phase 1: ck.h5 is not intact: $k1"
((k1 >= 500 && k1 % 500 == 0)) || fail "phase 1: checkpoint at iteration $k1, expected a multiple of 500"
log "phase 1: checkpoint intact at iteration $k1"

log "phase 2: a checkpoint every iteration, rank 0 killed (likely inside a write)"
start_ranks p2 3 "${P[@]}" --output p2.h5 --checkpoint ck.h5 --checkpoint-every 1 --restart ck.h5
wait_for 60 "p2 to restart" grep -q 'restarted from' p2.out
sleep 1.5
kill_one p2 0
partial=no
compgen -G "ck.h5.partial*" >/dev/null && partial=yes
k2=$(h5 checkpoint ck.h5) || fail "phase 2: ck.h5 is not intact after a kill during checkpointing: $k2"
((k2 > k1)) || fail "phase 2: checkpoint at iteration $k2, not after $k1"
log "phase 2: checkpoint intact at iteration $k2 (a torn ck.h5.partial left behind: $partial)"

log "phase 3: restart from it and finish"
start_ranks p3 3 "${P[@]}" --output final.h5 --restart ck.h5
finish p3 120
expect_rc "$ref_rc" "$rc" "restart after the crash ($(tail -n3 p3.err))"
h5 same ref.h5 final.h5 || fail "restart after a crash is not bitwise the uninterrupted run"
log "PASS kill-rank"
cleanup_workdir_on_success
