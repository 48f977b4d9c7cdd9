#!/bin/bash
# A weak- or strong-scaling series of halo3d solves on ONE machine without Slurm: the same
# points, study folder (study.json, runs.tsv, report-nNNNN-rR.json, log-*.txt) and table and
# plots (jobs/study.py: table.md, table.csv, efficiency.png, time_split.png) as
# jobs/slurm/scaling.sbatch, each point launched by jobs/run-workstation.sh -n N (one rank
# per GPU, pinned; without GPUs one rank per core).
#
# Usage: jobs/scaling-workstation.sh weak|strong [options] [-- HALO3D_SOLVE_OPTIONS...]
#   jobs/scaling-workstation.sh weak --local 128,128,128            # 1,2,4,... GPUs
#   jobs/scaling-workstation.sh strong --grid 256,256,256 --counts 1,2
#
# Options:
#   --local NX,NY,NZ   weak: points per rank (default 256,256,256)
#   --grid NX,NY,NZ    strong: global grid (default 512,512,512)
#   --counts 1,2,4     rank counts (default: 1,2,4,... up to the GPU count, or the core count
#                      without GPUs, and that count itself)
#   --repeats R        runs per count (default 1; study.py uses the median)
#   --study-dir DIR    the study folder (default: a new unique one under HALO3D_RESULTS, else
#                      ./results); points whose report exists are skipped, so a stopped
#                      study continues where it stopped
#   --no-plots         the table alone (table.md, table.csv): no numpy or matplotlib needed
#   -- OPTIONS...      halo3d solve options replacing the default
#                      "--rhs random --seed 1 --tol 1e-12 --max-iters 200"
# Weak points get --procs PX,PY,PZ (balanced) and --grid = local x procs; strong points let
# halo3d choose the process grid. Exit code 3 of a point (not converged within --max-iters)
# is a normal benchmark point; any other failure is recorded in runs.tsv and the series goes on.
#
# Environment: as jobs/run-workstation.sh (HALO3D_BIN, HALO3D_NGPUS, HALO3D_MPIRUN,
# HALO3D_MPIRUN_FLAGS, OMP_NUM_THREADS, ...); HALO3D_RESULTS; HALO3D_PYTHON (Python 3 with
# numpy and matplotlib for the table and plots; default: the first of python3 and
# /usr/bin/python3 that has them, so a pyenv or conda python3 first on PATH does no harm).
# The interpreter is checked before the first point: without one the script stops at once.
# Exit code: 0 all points ran and the table and plots were made; 1 some point failed (see
# runs.tsv), the table or plots could not be made, or no Python can make them; 2 bad options.
set -euo pipefail

jobs_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib/common.sh
source "$jobs_dir/lib/common.sh"
h3d_load_site "$jobs_dir"

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

(($#)) || { usage >&2; exit 2; }
case $1 in
  -h | --help) usage; exit 0 ;;
  weak | strong) study=$1; shift ;;
  *) h3d_die "first argument: weak or strong (not '$1'); see --help" ;;
esac
local_size=256,256,256 grid=512,512,512 counts='' repeats=1 study_dir='' plots=1
need() { [[ $# -ge 2 ]] || h3d_die "$1 needs a value"; }
while (($#)); do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --local) need "$@"; local_size=$2; shift 2 ;;
    --grid) need "$@"; grid=$2; shift 2 ;;
    --counts) need "$@"; counts=$2; shift 2 ;;
    --repeats) need "$@"; repeats=$2; shift 2 ;;
    --study-dir) need "$@"; study_dir=$2; shift 2 ;;
    --no-plots) plots=0; shift ;;
    --) shift; break ;;
    *) h3d_die "unknown option $1 (halo3d options go after --)" ;;
  esac
done
if (($#)); then solve_args=("$@"); else solve_args=(--rhs random --seed 1 --tol 1e-12 --max-iters 200); fi
h3d_reject_owned_options "${solve_args[@]}"
for a in "${solve_args[@]}"; do
  case $a in --grid | --grid=* | --procs | --procs=*) h3d_die "$a is set per point by the study; use --local/--grid of this script" ;; esac
done
[[ $repeats =~ ^[1-9][0-9]*$ ]] || h3d_die "--repeats $repeats: expected a positive integer"
read -r lx ly lz < <(h3d_parse3 "$local_size" --local)
read -r gx gy gz < <(h3d_parse3 "$grid" --grid)
bin=$(h3d_find_bin "$jobs_dir")
# The Python for the table and plots, found before any point runs (not after an hour).
if ((plots)); then
  python=$(h3d_python numpy matplotlib) ||
    h3d_die "the plots cannot be made (see the line above); rerun with --no-plots for the table alone" 1
  study_py=("$python" "$jobs_dir/study.py")
else
  python=$(h3d_python) || h3d_die "no python3 for jobs/study.py (see the line above)" 1
  study_py=("$python" "$jobs_dir/study.py" --no-plots)
fi

# The largest count: GPUs as run-workstation.sh counts them, else the cores.
if [[ -n ${HALO3D_NGPUS:-} ]]; then
  gpus=$HALO3D_NGPUS
else
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
  gpus=${gpus:-0}
fi
if ((gpus > 0)); then total=$gpus; else total=${HALO3D_NP:-$(getconf _NPROCESSORS_ONLN)}; fi
if [[ -z $counts ]]; then
  counts=1
  for ((n = 2; n <= total; n *= 2)); do counts+=,$n; done
  [[ ,$counts, == *,$total,* ]] || counts+=,$total
fi
[[ $counts =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || h3d_die "--counts $counts: expected e.g. 1,2,4,8"
IFS=, read -r -a count_list <<<"$counts"

results=${HALO3D_RESULTS:-$PWD/results}
[[ -n $study_dir ]] || study_dir=$(h3d_unique_dir "$results" "$study-workstation")
mkdir -p "$study_dir"
study_dir=$(cd "$study_dir" && pwd)

if [[ ! -f $study_dir/study.json ]]; then
  args_json=
  for a in "${solve_args[@]}"; do args_json+=${args_json:+, }$(h3d_json_str "$a"); done
  cat >"$study_dir/study.json" <<EOF
{
  "kind": "$study",
  "counts": [${counts//,/, }],
  "repeats": $repeats,
  "local": $( [[ $study == weak ]] && echo "[$lx, $ly, $lz]" || echo null ),
  "grid": $( [[ $study == strong ]] && echo "[$gx, $gy, $gz]" || echo null ),
  "nodes": 1,
  "tasks_per_node": $total,
  "gpus_per_node": $(h3d_json_str "$gpus"),
  "job_id": null,
  "cluster": $(h3d_json_str "$(hostname)"),
  "partition": "workstation",
  "created": $(h3d_json_str "$(date '+%Y-%m-%dT%H:%M:%S%z')"),
  "halo3d": $(h3d_json_str "$bin"),
  "solve_args": [$args_json]
}
EOF
fi
[[ -f $study_dir/runs.tsv ]] || printf 'ranks\trepeat\tnodes\tprocs\tgrid\texit_code\tseconds\treport\n' >"$study_dir/runs.tsv"
h3d_log "halo3d-scaling: $study study on $(hostname), counts $counts; folder $study_dir"

failed=0
for n in "${count_list[@]}"; do
  if [[ $study == weak ]]; then
    read -r px py pz < <(h3d_dims "$n")
    point=(--grid "$((lx * px)),$((ly * py)),$((lz * pz))" --procs "$px,$py,$pz")
  else
    point=(--grid "$gx,$gy,$gz")
  fi
  for ((r = 1; r <= repeats; r++)); do
    tag=$(printf 'n%04d-r%d' "$n" "$r")
    report=$study_dir/report-$tag.json
    if [[ -f $report ]]; then
      h3d_log "halo3d-scaling: $tag done earlier, skipped"
      continue
    fi
    t0=$(date +%s.%N)
    if HALO3D_BIN=$bin "$jobs_dir/run-workstation.sh" -n "$n" solve "${point[@]}" "${solve_args[@]}" \
         --output none --report "$report" </dev/null >"$study_dir/log-$tag.txt" 2>&1; then rc=0; else rc=$?; fi
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$r" 1 "${point[3]:-auto}" "${point[1]}" "$rc" "$secs" \
      "$( [[ -f $report ]] && basename "$report" || echo - )" >>"$study_dir/runs.tsv"
    case $rc in
      0 | 3) h3d_log "halo3d-scaling: $tag finished (exit $rc) in $secs s" ;;
      *) h3d_log "halo3d-scaling: $tag FAILED with exit code $rc (log-$tag.txt)"; failed=1 ;;
    esac
  done
done

if "${study_py[@]}" "$study_dir"; then
  if ((plots)); then
    h3d_log "halo3d-scaling: table and plots in $study_dir (table.md, table.csv, efficiency.png, time_split.png)"
  else
    h3d_log "halo3d-scaling: table in $study_dir (table.md, table.csv)"
  fi
else
  printf 'halo3d-jobs: error: jobs/study.py failed, so the table%s %s not made; once fixed, run: %s %s\n' \
    "$( ((plots)) && echo ' and plots' )" "$( ((plots)) && echo were || echo was )" "${study_py[*]}" "$study_dir" >&2
  failed=1
fi
exit "$failed"
