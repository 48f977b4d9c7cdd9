# shellcheck shell=bash
# Shared helpers for the halo3d job scripts (sourced, never run). Bash only.
#
# Everything here is generic: nothing names a site, partition, account or module. Site
# settings belong in jobs/site.sh (sourced by h3d_load_site, below) or in the environment.

# ---- messages -------------------------------------------------------------------------
h3d_log() { printf '[%s] %s\n' "$(date '+%Y-%m-%d %H:%M:%S')" "$*"; }
h3d_warn() { printf 'halo3d-jobs: warning: %s\n' "$*" >&2; }
# h3d_die MESSAGE [EXIT_CODE]: 2 (bad input) unless told otherwise, like halo3d itself.
h3d_die() {
  printf 'halo3d-jobs: error: %s\n' "$1" >&2
  exit "${2:-2}"
}

# ---- site configuration -----------------------------------------------------------------
# jobs/site.sh holds commented defaults (modules, InfiniBand/UCX, partition, ...). It is
# sourced once, before anything reads HALO3D_* variables; HALO3D_SITE_ENV points elsewhere
# (or to /dev/null to ignore it).
h3d_load_site() {
  local jobs_dir=$1
  local site=${HALO3D_SITE_ENV:-$jobs_dir/site.sh}
  if [[ -f $site ]]; then
    # shellcheck source=/dev/null
    source "$site"
  fi
}

# ---- the binary ---------------------------------------------------------------------------
# HALO3D_BIN, else halo3d on PATH, else the usual build folders of the checkout.
h3d_find_bin() {
  local jobs_dir=$1 c
  if [[ -n ${HALO3D_BIN:-} ]]; then
    [[ -x $HALO3D_BIN ]] || h3d_die "HALO3D_BIN=$HALO3D_BIN is not an executable file"
    printf '%s\n' "$HALO3D_BIN"
    return
  fi
  if c=$(command -v halo3d 2>/dev/null); then
    printf '%s\n' "$c"
    return
  fi
  for c in build build-ci build-cpu build-gpu build-prod; do
    if [[ -x $jobs_dir/../$c/halo3d ]]; then
      (cd "$jobs_dir/../$c" && printf '%s/halo3d\n' "$PWD")
      return
    fi
  done
  h3d_die "no halo3d binary: set HALO3D_BIN=/path/to/halo3d (or put halo3d on PATH)"
}

# ---- result folders -------------------------------------------------------------------------
# h3d_unique_dir ROOT PREFIX: creates and prints ROOT/PREFIX-YYYYmmdd-HHMMSS[-K]. mkdir without
# -p is atomic and fails when the name exists, so two studies started in the same second
# (or a reused job id on a rebuilt cluster) never share, and never overwrite, a folder.
h3d_unique_dir() {
  local root=$1 prefix=$2 stamp d k
  mkdir -p "$root" || h3d_die "cannot create the results folder $root" 5
  root=$(cd "$root" && pwd)
  stamp=$(date '+%Y%m%d-%H%M%S')
  d=$root/$prefix-$stamp
  k=1
  until mkdir "$d" 2>/dev/null; do
    k=$((k + 1))
    ((k < 1000)) || h3d_die "cannot create a unique folder under $root" 5
    d=$root/$prefix-$stamp-$k
  done
  printf '%s\n' "$d"
}

# ---- srun ----------------------------------------------------------------------------------
# HALO3D_SRUN_MPI picks srun's MPI plugin: pmix (default; what Open MPI 4/5, MPICH and
# Cray MPICH builds for GPU clusters use), pmi2, none, any other name `srun --mpi=list`
# shows, "auto" (pmix if listed, else pmi2, else none) or "default" (no --mpi: the
# cluster's MpiDefault).
h3d_srun_mpi_flag() {
  local want=${HALO3D_SRUN_MPI:-pmix} list
  case $want in
    default) return ;;
    auto)
      list=$(srun --mpi=list 2>&1 || true)
      if grep -qw pmix <<<"$list"; then want=pmix
      elif grep -qw pmi2 <<<"$list"; then want=pmi2
      else want=none
      fi
      ;;
  esac
  printf -- '--mpi=%s\n' "$want"
}

# h3d_may_requeue ENDING: whether a job stopped by a signal (exit 75) should requeue itself.
# No when this shell got SIGTERM (ENDING=1) or the job is no longer RUNNING (scancel marks it
# CANCELLED at once, and Slurm would still accept a requeue of it); H3D_ENDING_WHY says why.
# shellcheck disable=SC2034  # H3D_ENDING_WHY is read by the callers
h3d_may_requeue() {
  local state
  if [[ $1 == 1 ]]; then
    H3D_ENDING_WHY="the batch shell got SIGTERM"
    return 1
  fi
  state=$(scontrol show job "$SLURM_JOB_ID" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -n1)
  if [[ -n $state && $state != RUNNING ]]; then
    H3D_ENDING_WHY="JobState=$state"
    return 1
  fi
  return 0
}

# ---- process grids ---------------------------------------------------------------------------
# h3d_dims N: three balanced factors of N, largest first (what MPI_Dims_create returns):
# the one with the smallest largest factor, then the smallest middle one.
h3d_dims() {
  local n=$1 a b c best_a=$1 best_b=1 best_c=1
  for ((c = 1; c * c * c <= n; c++)); do
    ((n % c == 0)) || continue
    for ((b = c; b * b <= n / c; b++)); do
      (((n / c) % b == 0)) || continue
      a=$((n / c / b))
      if ((a < best_a || (a == best_a && b < best_b))); then
        best_a=$a best_b=$b best_c=$c
      fi
    done
  done
  printf '%d %d %d\n' "$best_a" "$best_b" "$best_c"
}

# h3d_parse3 VALUE NAME: checks "NX,NY,NZ" (positive integers) and prints "NX NY NZ".
h3d_parse3() {
  [[ $1 =~ ^([1-9][0-9]*),([1-9][0-9]*),([1-9][0-9]*)$ ]] ||
    h3d_die "$2 $1: expected three positive integers NX,NY,NZ"
  printf '%s %s %s\n' "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}"
}

# h3d_slurm_seconds TIME: a Slurm time limit (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS)
# in seconds; 0 for UNLIMITED/INFINITE; fails on anything else.
h3d_slurm_seconds() {
  local t=$1 d=0 h=0 m=0 sec=0
  case ${t,,} in unlimited | infinite) echo 0; return 0 ;; esac
  if [[ $t =~ ^([0-9]+)-([0-9]+)(:([0-9]+)(:([0-9]+))?)?$ ]]; then
    d=${BASH_REMATCH[1]} h=${BASH_REMATCH[2]} m=${BASH_REMATCH[4]:-0} sec=${BASH_REMATCH[6]:-0}
  elif [[ $t =~ ^([0-9]+):([0-9]+):([0-9]+)$ ]]; then
    h=${BASH_REMATCH[1]} m=${BASH_REMATCH[2]} sec=${BASH_REMATCH[3]}
  elif [[ $t =~ ^([0-9]+):([0-9]+)$ ]]; then
    m=${BASH_REMATCH[1]} sec=${BASH_REMATCH[2]}
  elif [[ $t =~ ^([0-9]+)$ ]]; then
    m=${BASH_REMATCH[1]}
  else
    return 1
  fi
  echo $(((10#$d * 24 + 10#$h) * 3600 + 10#$m * 60 + 10#$sec))
}

# ---- JSON -------------------------------------------------------------------------------------
# h3d_json_str STRING: a JSON string literal (quotes, backslashes, control characters escaped).
h3d_json_str() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\t'/\\t}
  s=${s//$'\r'/\\r}
  printf '"%s"' "$s"
}

# ---- options the scripts set themselves ---------------------------------------------------------
# h3d_reject_owned_options ARGS...: the job scripts own where files go; a second --output
# would make halo3d fail on a duplicate option only after the job has started.
h3d_reject_owned_options() {
  local a
  for a in "$@"; do
    case $a in
      --output | --output=* | --report | --report=* | --checkpoint | --checkpoint=* | \
        --checkpoint-every | --checkpoint-every=* | --restart | --restart=*)
        h3d_die "${a%%=*} is set by the job script (files go to the run folder); remove it" ;;
    esac
  done
}

# ---- Python ---------------------------------------------------------------------------------------
# h3d_python MODULE...: prints the first interpreter that imports every MODULE: HALO3D_PYTHON
# when it is set (then the only one tried), else python3 from PATH, then /usr/bin/python3 (a
# pyenv or conda python3 first on PATH often lacks the system's h5py, numpy, matplotlib).
# When none does: one line on stderr saying what each one lacks, and status 1.
h3d_python() {
  local c path miss tried=() seen=' ' packages=() m
  local probe='import importlib, sys
missing = []
for m in sys.argv[1:]:
    try:
        importlib.import_module(m)
    except Exception:
        missing.append(m)
print(" ".join(missing))'
  local candidates=(python3 /usr/bin/python3)
  [[ -n ${HALO3D_PYTHON:-} ]] && candidates=("$HALO3D_PYTHON")
  for c in "${candidates[@]}"; do
    if ! path=$(command -v "$c" 2>/dev/null); then
      tried+=("$c (not found)")
      continue
    fi
    [[ $seen == *" $path "* ]] && continue
    seen+="$path "
    if ! miss=$(MPLBACKEND=Agg "$path" -c "$probe" "$@" 2>/dev/null); then
      tried+=("$path (does not run)")
    elif [[ -z $miss ]]; then
      printf '%s\n' "$path"
      return 0
    else
      tried+=("$path (no ${miss// /, no })")
    fi
  done
  for m in "$@"; do packages+=("python3-$m"); done
  local list
  list=$(printf '%s; ' "${tried[@]}")
  printf 'halo3d-jobs: error: no Python with %s found (tried %s). Install them (Debian/Ubuntu: apt-get install %s) or set HALO3D_PYTHON to a Python that has them\n' \
    "$*" "${list%; }" "${packages[*]}" >&2
  return 1
}
