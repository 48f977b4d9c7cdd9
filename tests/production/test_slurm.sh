#!/bin/bash
# The real job scripts submitted with sbatch (through jobs/submit.sh) to the test cluster
# of slurm_cluster.sh, at small sizes.
#   solve    one solve, 2 ranks (one per fake GPU): finishes, writes solution/report in its own
#            run folder, and /u is bitwise what mpirun gives for the same process grid
#   weak     a 1,2,4-rank weak series in one allocation: reports, runs.tsv, study.json, and
#            study.py's table and plots; the table says "complete", and says INCOMPLETE once
#            the N=1 report is taken away
#   preempt  a running job gets SIGUSR1 mid-solve (a) through `scancel --signal=USR1` (to the
#            srun step's tasks, as --signal=USR1@T and preemption do) and (b) through
#            `scancel --batch --signal=USR1` (only the batch shell, as --signal=B:USR1@T does;
#            the script's trap forwards it): it checkpoints, exits 75, requeues itself, comes
#            back as the same job with --restart, and its final /u is bitwise the /u of an
#            uninterrupted job
#            (c) a crash: kill -9 of one rank ends the job at once (FAILED, no requeue, no final
#            file, checkpoint intact); resubmitted with --run-dir it finishes bitwise the same
#   preemption a job in a higher-priority partition preempts the running job (PreemptMode=REQUEUE,
#            GraceTime): SIGTERM, checkpoint, requeue, restart; /u bitwise the uninterrupted run's
#   timelimit  a 1-minute job with --signal-lead 50: Slurm's own USR1@50 (from the time limit)
#            stops it, it requeues itself and continues from its checkpoint; then a plain
#            `scancel` ends it for good (CANCELLED, not requeued) with an intact checkpoint
# shellcheck source=tests/production/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_python_h5py
use_cluster
new_workdir "slurm-$CASE"
cd "$WORK"
RESULTS=$WORK/results

# one rank per (fake) GPU; on a cluster without them, plain tasks
ranks_opts() {
  if ((GPN > 0)); then echo "-g $1"; else echo "-g 0 --tasks-per-node $1"; fi
}

case_solve() {
  local S=(--grid 32,32,32 --rhs random --seed 3 --tol 1e-10 --procs 2,1,1 --monitor 50)
  # shellcheck disable=SC2046
  submit solve -N 1 $(ranks_opts 2) -t 00:05:00 --name solve --results "$RESULTS" -- "${S[@]}"
  wait_job "$JOB" 180 COMPLETED
  [[ -f $RUN_DIR/solution.h5 && -f $RUN_DIR/report.json ]] || fail "no solution.h5/report.json in $RUN_DIR: $(ls "$RUN_DIR")"
  "$PY" - "$RUN_DIR/report.json" <<'EOF' || fail "report check failed"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["ranks"] == 2 and r["procs"] == [2, 1, 1], (r["ranks"], r["procs"])
assert r["hosts"] == 1, r["hosts"]
assert r["result"]["converged"] is True and r["result"]["true_relative_residual"] <= 1e-10, r["result"]
print(f"report: {r['ranks']} ranks as {r['procs']}, converged in {r['result']['iterations']} iterations")
EOF
  grep -q -- "srun --mpi=" "$JOBLOG" || fail "the job log shows no srun --mpi= line"
  [[ $(wc -l <"$RUN_DIR/attempts.tsv") == 1 ]] || fail "expected one attempt: $(cat "$RUN_DIR/attempts.tsv")"
  log "same solve under mpirun, to compare"
  mpi -np 2 "$BIN" solve "${S[@]}" --output mpirun.h5 >mpirun.out 2>&1 || fail "mpirun run failed: $(tail mpirun.out)"
  h5 same mpirun.h5 "$RUN_DIR/solution.h5" || fail "the Slurm job's /u differs from mpirun's"
}

case_weak() {
  # shellcheck disable=SC2046
  submit weak -N 1 $(ranks_opts 4) -t 00:10:00 --local 24,24,24 --counts 1,2,4 --name weak --results "$RESULTS" \
    -- --rhs random --seed 1 --tol 1e-12 --max-iters 60
  wait_job "$JOB" 300 COMPLETED
  local d=$RUN_DIR f
  for f in study.json runs.tsv report-n0001-r1.json report-n0002-r1.json report-n0004-r1.json \
    table.md table.csv efficiency.png time_split.png; do
    [[ -s $d/$f ]] || fail "weak study: no $f in $d ($(ls "$d")); log: $(tail -n 20 "$JOBLOG")"
  done
  awk -F'\t' 'NR > 1 && $6 != 0 && $6 != 3 { bad = 1 } END { exit bad }' "$d/runs.tsv" || fail "a point failed: $(cat "$d/runs.tsv")"
  grep -q 'Status: complete series' "$d/table.md" || fail "table.md does not say complete: $(cat "$d/table.md")"
  local want
  for want in '| 1 | 1 | 1x1x1 | 24x24x24 |' '| 2 | 1 | 2x1x1 | 48x24x24 |' '| 4 | 1 | 2x2x1 | 48x48x24 |'; do
    grep -qF "$want" "$d/table.md" || fail "table.md lacks the row '$want': $(cat "$d/table.md")"
  done
  "$PY" "$JOBS/study.py" "$d" --out again --strict --quiet || fail "study.py --strict on the complete series failed"
  cat "$d/table.md"
  log "the same series without its N=1 report"
  mkdir partial
  cp "$d/study.json" "$d/runs.tsv" "$d"/report-n0002-r1.json "$d"/report-n0004-r1.json partial/
  local rc=0
  "$PY" "$JOBS/study.py" partial --strict --quiet 2>partial.err || rc=$?
  expect_rc 1 "$rc" "study.py --strict on an incomplete series"
  grep -q 'INCOMPLETE' partial/table.md && grep -q 'N=1: no report' partial/table.md && grep -q 'no N=1 baseline' partial/table.md ||
    fail "the incomplete table does not say what is missing: $(cat partial/table.md)"
  if [[ -n ${HALO3D_EXAMPLES_OUT:-} ]]; then
    mkdir -p "$HALO3D_EXAMPLES_OUT"
    cp "$d"/{table.md,table.csv,efficiency.png,time_split.png} "$HALO3D_EXAMPLES_OUT/"
    log "copied the study's table and plots to $HALO3D_EXAMPLES_OUT"
  fi
}

# progress_log FILE: the last --monitor iteration in a job log
progress_log() { awk '$1 == "iter" { n = $2 } END { print n + 0 }' "$1" 2>/dev/null || echo 0; }

case_preempt() {
  # ~3 s of Jacobi on 2 ranks; checkpoints every 1000 iterations and on the signal
  local S=(--solver jacobi --grid 48,48,48 --mode 1,1,1 --tol 1e-10 --max-iters 20000 --procs 2,1,1 --monitor 250)
  # shellcheck disable=SC2046
  submit solve -N 1 $(ranks_opts 2) -t 00:05:00 --name reference --results "$RESULTS" -- "${S[@]}"
  wait_job "$JOB" 180 COMPLETED
  local ref=$RUN_DIR/solution.h5
  [[ -f $ref ]] || fail "the reference job wrote no solution"

  local how
  for how in steps batch; do
    # shellcheck disable=SC2046
    submit solve -N 1 $(ranks_opts 2) -t 00:05:00 --name "preempt-$how" --results "$RESULTS" --checkpoint-every 1000 -- "${S[@]}"
    wait_for 120 "job $JOB to pass iteration 2000" eval "(( \$(progress_log '$JOBLOG') >= 2000 ))"
    [[ -f $RUN_DIR/checkpoint.h5 ]] || fail "no periodic checkpoint by iteration 2000"
    if [[ $how == steps ]]; then
      timeout 10 scancel --signal=USR1 "$JOB"
    else
      timeout 10 scancel --batch --signal=USR1 "$JOB"
    fi
    log "job $JOB: SIGUSR1 via scancel ($how) at iteration ~$(progress_log "$JOBLOG")"
    wait_for 60 "job $JOB to requeue itself" eval '[[ $(job_field '"$JOB"' Restarts) == 1 ]]'
    log "job $JOB requeued (Restarts=1); waiting for its second attempt to finish"
    wait_job "$JOB" 240 COMPLETED
    local att=$RUN_DIR/attempts.tsv
    [[ $(wc -l <"$att") == 2 ]] || fail "expected 2 attempts: $(cat "$att")"
    [[ $(cut -f5 "$att" | tr '\n' ' ') == "75 0 " ]] || fail "attempt exit codes are not 75 then 0: $(cat "$att")"
    grep -q 'stopped by signal 10 .*checkpoint written' "$JOBLOG" || fail "no 'stopped by signal 10' in the log"
    grep -q 'requeueing job' "$JOBLOG" || fail "the job did not requeue itself"
    grep -q 'continuing from .*checkpoint.h5' "$JOBLOG" || fail "the second attempt did not restart from the checkpoint"
    if [[ $how == batch ]]; then
      grep -q 'batch shell got SIGUSR1; forwarding' "$JOBLOG" || fail "the batch shell did not forward the signal"
    fi
    local k
    k=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["result"]["restarted_from"])' "$RUN_DIR/report.json")
    ((k >= 2000)) || fail "report says restarted_from $k"
    log "job $JOB ($how): stopped at iteration $k, requeued, restarted, finished"
    h5 same "$ref" "$RUN_DIR/solution.h5" || fail "preempted and requeued job's /u differs from the uninterrupted job's"
  done

  log "crash: kill -9 one rank of a running job"
  # shellcheck disable=SC2046
  submit solve -N 1 $(ranks_opts 2) -t 00:05:00 --name crash --results "$RESULTS" --checkpoint-every 1000 -- "${S[@]}"
  wait_for 120 "job $JOB to pass iteration 2000" eval "(( \$(progress_log '$JOBLOG') >= 2000 ))"
  local pid victim=
  for pid in $(timeout 10 scontrol listpids "$JOB" 2>/dev/null | awk 'NR > 1 { print $1 }'); do
    [[ $(cat "/proc/$pid/comm" 2>/dev/null) == halo3d ]] && { victim=$pid; break; }
  done
  [[ -n $victim ]] || fail "no halo3d process of job $JOB found (scontrol listpids)"
  kill -9 "$victim"
  local t0=$SECONDS
  log "job $JOB: kill -9 halo3d pid $victim at iteration ~$(progress_log "$JOBLOG")"
  wait_for 30 "job $JOB to end after the kill" eval '[[ $(job_field '"$JOB"' JobState) == FAILED ]]'
  log "job $JOB ended FAILED $((SECONDS - t0)) s after the kill (srun --kill-on-bad-exit)"
  [[ $(job_field "$JOB" Restarts) == 0 ]] || fail "a crashed job must not requeue itself"
  [[ ! -e $RUN_DIR/solution.h5 ]] || fail "a crashed job left a final solution.h5"
  local k
  k=$(h5 checkpoint "$RUN_DIR/checkpoint.h5") || fail "the crashed job's checkpoint is not intact: $k"
  log "checkpoint intact at iteration $k; resubmitting into the same folder"
  local dir=$RUN_DIR
  # shellcheck disable=SC2046
  submit solve -N 1 $(ranks_opts 2) -t 00:05:00 --run-dir "$dir" --checkpoint-every 1000 -- "${S[@]}"
  [[ $RUN_DIR == "$dir" ]] || fail "--run-dir was not used: $RUN_DIR"
  wait_job "$JOB" 180 COMPLETED
  grep -q 'continuing from .*checkpoint.h5' "$JOBLOG" || fail "the resubmitted job did not continue from the checkpoint"
  h5 same "$ref" "$RUN_DIR/solution.h5" || fail "crashed-then-resubmitted job's /u differs from the uninterrupted job's"
}

case_timelimit() {
  # Long enough never to finish: the job lives on Slurm's signals alone. A 1-minute limit
  # with --signal-lead 50 (sbatch --signal=USR1@50, no B:) has slurmctld signal the step once
  # less than 50 s are left; its time-limit check runs every ~30 s, so that lands 10-40 s in.
  local S=(--solver jacobi --grid 48,48,48 --mode 1,1,1 --tol 1e-300 --max-iters 1000000 --procs 2,1,1 --monitor 1000)
  # shellcheck disable=SC2046
  submit solve -N 1 $(ranks_opts 2) -t 00:01:00 --signal-lead 50 --name timelimit --results "$RESULTS" --checkpoint-every 5000 -- "${S[@]}"
  wait_for 90 "Slurm's time-limit signal to stop job $JOB" grep -qs 'stopped by signal 10' "$JOBLOG"
  log "job $JOB: $(grep -m1 'stopped by signal' "$JOBLOG")"
  wait_for 60 "job $JOB to requeue itself and continue" grep -qs 'continuing from .*checkpoint.h5' "$JOBLOG"
  wait_for 60 "the second attempt to iterate" awk '/^restarted from/ { r = 1 } r && $1 == "iter" { f = 1 } END { exit !f }' "$JOBLOG"
  log "job $JOB requeued itself and continues (Restarts=$(job_field "$JOB" Restarts)); now scancel"
  local restarts
  restarts=$(job_field "$JOB" Restarts)
  timeout 10 scancel "$JOB"
  wait_job "$JOB" 60 CANCELLED
  sleep 2
  [[ $(job_field "$JOB" Restarts) == "$restarts" && $(job_field "$JOB" JobState) == CANCELLED ]] ||
    fail "a cancelled job requeued itself (Restarts $(job_field "$JOB" Restarts), state $(job_field "$JOB" JobState))"
  grep -q 'while the job is ending .*not requeueing' "$JOBLOG" || fail "the log does not say the cancelled job was not requeued"
  local k
  k=$(h5 checkpoint "$RUN_DIR/checkpoint.h5") || fail "no intact checkpoint after scancel: $k"
  log "scancel: job CANCELLED, not requeued; checkpoint intact at iteration $k"
}

case_preemption() {
  # ~10 s of Jacobi in the preemptable partition h3d; a job in h3d-urgent that needs all 4
  # (fake) GPUs preempts it: Slurm sends SIGTERM to its step, gives it GraceTime to
  # checkpoint, requeues it (PreemptMode=REQUEUE; the script's own requeue agrees), and it
  # continues from the checkpoint after the urgent job.
  local S=(--solver jacobi --grid 64,64,64 --mode 1,1,1 --tol 1e-11 --max-iters 40000 --procs 2,1,1 --monitor 500)
  ((GPN >= 4)) || skip "the test cluster has no (fake) GPUs to make the urgent job need the whole node"
  log "reference under mpirun"
  mpi -np 2 "$BIN" solve "${S[@]}" --output ref.h5 >ref.out 2>&1 || fail "reference run failed: $(tail ref.out)"
  # shellcheck disable=SC2046
  submit solve -N 1 $(ranks_opts 2) -t 00:10:00 --name preemptable --results "$RESULTS" --checkpoint-every 2000 -- "${S[@]}"
  wait_for 120 "job $JOB to pass iteration 3000" eval "(( \$(progress_log '$JOBLOG') >= 3000 ))"
  local urgent
  urgent=$(timeout 10 sbatch --parsable -p h3d-urgent -N 1 -n 1 --gpus-per-node=4 -t 1 -o "$WORK/urgent.out" --wrap 'sleep 3') ||
    fail "cannot submit the urgent job"
  log "urgent job $urgent submitted at iteration ~$(progress_log "$JOBLOG") of job $JOB"
  wait_for 60 "job $JOB to be preempted (SIGTERM)" grep -qs 'stopped by signal 15' "$JOBLOG"
  log "job $JOB: $(grep -m1 'stopped by signal' "$JOBLOG")"
  wait_job "$urgent" 60 COMPLETED
  wait_job "$JOB" 240 COMPLETED
  (($(job_field "$JOB" Restarts) >= 1)) || fail "the preempted job was not requeued"
  [[ $(cut -f5 "$RUN_DIR/attempts.tsv" | tr '\n' ' ') == "75 0 " ]] || fail "attempt exit codes are not 75 then 0: $(cat "$RUN_DIR/attempts.tsv")"
  grep -q 'continuing from .*checkpoint.h5' "$JOBLOG" || fail "the second attempt did not restart from the checkpoint"
  h5 same ref.h5 "$RUN_DIR/solution.h5" || fail "the preempted job's /u differs from the uninterrupted run's"
  log "preempted by job $urgent, requeued, continued and finished bitwise equal to the uninterrupted run"
}

case $CASE in
  solve) case_solve ;;
  preemption) case_preemption ;;
  timelimit) case_timelimit ;;
  weak) case_weak ;;
  preempt) case_preempt ;;
  *) fail "unknown case '$CASE' (solve, weak, preempt, preemption, timelimit)" ;;
esac
log "PASS slurm $CASE"
cleanup_workdir_on_success
