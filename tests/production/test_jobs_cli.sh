#!/bin/bash
# The job scripts' command lines, without running anything: --help, what jobs/submit.sh hands
# to sbatch (arguments over environment over defaults; one rank per GPU; signal, requeue),
# default rank-count series, refusal of options the scripts own, unique result folders,
# and the process-grid factors of jobs/lib/common.sh.
# shellcheck source=tests/production/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
new_workdir jobs-cli
cd "$WORK"
export HALO3D_BIN=$BIN HALO3D_SITE_ENV=/dev/null
unset HALO3D_PARTITION HALO3D_ACCOUNT HALO3D_QOS HALO3D_TIME HALO3D_NODES HALO3D_GPUS_PER_NODE HALO3D_COUNTS

for s in submit.sh run-workstation.sh slurm/solve.sbatch slurm/scaling.sbatch bind.sh; do
  bash -n "$JOBS/$s" || fail "$s: bash syntax error"
done
for s in submit.sh run-workstation.sh slurm/solve.sbatch slurm/scaling.sbatch; do
  out=$(bash "$JOBS/$s" --help) || fail "$s --help failed"
  grep -qi 'usage\|submit' <<<"$out" || fail "$s --help says nothing useful: $out"
done
"$PY" "$JOBS/study.py" --help >/dev/null || fail "study.py --help failed"

refused() {
  local rc=0 err
  err=$("$@" 2>&1 >/dev/null) || rc=$?
  expect_rc 2 "$rc" "$*"
  log "  refused: $err"
}
has() { [[ " $1 " == *" $2 "* ]] || fail "expected '$2' in: $1"; }
lacks() { [[ " $1 " != *" $2 "* ]] || fail "did not expect '$2' in: $1"; }

out=$("$JOBS/submit.sh" solve --dry-run -p gpu -A proj -t 02:00:00 -N 2 -g 4 -- --grid 64,64,64)
for w in --nodes=2 --ntasks-per-node=4 --gpus-per-node=4 --partition=gpu --account=proj --time=02:00:00 \
  --signal=USR1@300 --requeue --open-mode=append --export=ALL "$JOBS/slurm/solve.sbatch" --run-dir --grid 64\\,64\\,64; do
  has "$out" "$w"
done
log "solve: one rank per GPU, signal, requeue, site values from arguments"
out=$(HALO3D_PARTITION=envpart HALO3D_TIME=00:30:00 "$JOBS/submit.sh" solve --dry-run)
has "$out" --partition=envpart; has "$out" --time=00:30:00; lacks "$out" --account=proj; has "$out" --gpus-per-node=1
out=$(HALO3D_PARTITION=envpart "$JOBS/submit.sh" solve --dry-run -p cli)
has "$out" --partition=cli
log "environment gives defaults, arguments win"
mkdir -p old-run
out=$("$JOBS/submit.sh" solve --dry-run --run-dir old-run -- --grid 8,8,8 2>/dev/null)
has "$out" "$WORK/old-run"; has "$out" "--output=$WORK/old-run/slurm-%j.out"
refused "$JOBS/submit.sh" solve --dry-run --run-dir no-such-run
out=$("$JOBS/submit.sh" solve --dry-run -g 0 --tasks-per-node 8)
lacks "$out" --gpus-per-node=0; has "$out" --ntasks-per-node=8
out=$("$JOBS/submit.sh" weak --dry-run -N 2 -g 4 --local 32,32,32)
has "$out" "$JOBS/slurm/scaling.sbatch"; has "$out" weak; has "$out" 1\\,2\\,4\\,8; has "$out" 32\\,32\\,32
out=$("$JOBS/submit.sh" strong --dry-run -N 3 -g 2 --grid 96,96,96)
has "$out" strong; has "$out" 1\\,2\\,4\\,6
log "series default to 1,2,4,... and the full allocation"

refused "$JOBS/submit.sh" solve --dry-run -- --grid 8,8,8 --output x.h5
refused "$JOBS/submit.sh" solve --dry-run -- --checkpoint=c.h5
refused "$JOBS/submit.sh" weak --dry-run -N 1 -g 2 --counts 1,2,4
refused "$JOBS/submit.sh" strong --dry-run --grid 8,8
refused "$JOBS/submit.sh" bogus
refused env -u SLURM_JOB_ID bash "$JOBS/slurm/solve.sbatch" -- --grid 8,8,8
refused env -u SLURM_JOB_ID bash "$JOBS/slurm/scaling.sbatch" --study weak

# shellcheck source=../../jobs/lib/common.sh
source "$JOBS/lib/common.sh"
for spec in "1:1 1 1" "2:2 1 1" "4:2 2 1" "6:3 2 1" "7:7 1 1" "8:2 2 2" "12:3 2 2" "16:4 2 2" "64:4 4 4"; do
  [[ $(h3d_dims "${spec%%:*}") == "${spec#*:}" ]] || fail "h3d_dims ${spec%%:*} = $(h3d_dims "${spec%%:*}"), expected ${spec#*:}"
done
a=$(h3d_unique_dir "$WORK/res" study)
b=$(h3d_unique_dir "$WORK/res" study)
c=$(h3d_unique_dir "$WORK/res" study)
[[ -d $a && -d $b && -d $c && $a != "$b" && $b != "$c" && $a != "$c" ]] || fail "h3d_unique_dir reused a folder: $a $b $c"
log "balanced process grids; three folders made in one second are distinct: $(basename "$a") $(basename "$b") $(basename "$c")"
log "PASS jobs-cli"
cleanup_workdir_on_success
