#!/usr/bin/env bash
# halo3d quick start on a fresh Debian 12 / Ubuntu 24.04 machine (as root, or with sudo):
#   jobs/quickstart.sh run    install what running needs, build halo3d, run the default job on 2 ranks
#   jobs/quickstart.sh test   install what the tests need too, build everything, run the whole test suite
# Environment: HALO3D_RANKS (default 2) for `run`; HALO3D_CTEST_JOBS (default: half the CPUs,
# at least 2) for `test`.
# Both are quiet: apt and cmake output goes to a log (build/quickstart.log for `run`,
# build-ci/quickstart.log for `test`), named with its last lines if a step fails. `run` ends
# with a line naming every file it wrote; `test` prints one line per test as it ends and
# ends with exactly one line `N passed, M failed`, counted over the style check and the tests
# of both ctest runs (a failed build counts as one failure), and exits 1 if M > 0.
set -euo pipefail
mode=${1:-run}
cd "$(dirname "$0")/.."

# What building and running halo3d needs; `test` adds the test suite's tools.
run_packages=(build-essential cmake pkg-config openmpi-bin libopenmpi-dev libhdf5-openmpi-dev
              libcli11-dev nlohmann-json3-dev libmuparser-dev libtomlplusplus-dev)
test_packages=(hdf5-tools libgtest-dev python3 python3-h5py python3-numpy python3-matplotlib
               slurm-wlm munge iproute2 procps util-linux clang-format-14 python3-pip)
case "$mode" in
  run) packages=("${run_packages[@]}") ;;
  test) packages=("${run_packages[@]}" "${test_packages[@]}") ;;
  *)
    echo "usage: $0 run|test" >&2
    exit 2
    ;;
esac

# Quiet: each step's output goes to the log, shown by name (and its end) only on failure.
if [[ $mode == run ]]; then log=build/quickstart.log; else log=build-ci/quickstart.log; fi
mkdir -p "$(dirname "$log")"
: >"$log"
passed=0 failed=0
# show_failure STEP: what failed, the log's last lines and its name.
show_failure() {
  echo "quickstart: failed: $*" >&2
  tail -n 20 "$log" >&2
  echo "quickstart: the whole output is in $log" >&2
}
# The closing line of `test`, and its exit status.
summary() {
  echo "$passed passed, $failed failed"
  ((failed == 0))
}
# quiet CMD...: a step that everything after it needs; on failure `test` still ends with
# its summary line.
quiet() {
  if ! "$@" >>"$log" 2>&1; then
    show_failure "$*"
    if [[ $mode == test ]]; then
      failed=$((failed + 1))
      summary || true
    fi
    exit 1
  fi
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
sudo_cmd=(); [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  quiet "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  quiet "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# lizard (the complexity check of tests/style_check.sh) is not packaged: from PyPI, pinned so
# that a new lizard release cannot change CI's verdict on unchanged code.
if [[ $mode == test ]] && ! python3 -m lizard --version >/dev/null 2>&1; then
  echo "installing: lizard (PyPI)"
  quiet "${sudo_cmd[@]}" python3 -m pip install -q --break-system-packages lizard==1.24.3
fi

# The CUDA toolkit is optional; use it where it is installed but not on PATH.
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
# Open MPI refuses to run as root unless told that it is intended.
if [[ $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
jobs=$(nproc)

# build_and_test PRESET: configure and build the preset (output to the log; a failure counts
# once and skips its tests), then ctest in parallel, one line per test as it ends (its
# output, and the output of failing tests, in the log); counts passed and failed tests.
build_and_test() {
  local preset=$1
  echo "building the $preset preset (log: $log)"
  if ! { cmake --preset "$preset" && cmake --build --preset "$preset" -j"$jobs"; } >>"$log" 2>&1; then
    show_failure "the $preset build"
    failed=$((failed + 1))
    return 0
  fi
  echo "testing: ctest --preset $preset -j$ctest_jobs"
  local lines rc p f s
  lines=$(mktemp)
  set +e
  ctest --preset "$preset" -j"$ctest_jobs" 2>&1 | tee -a "$log" |
    grep --line-buffered -E '^ *[0-9]+/[0-9]+ +Test +#[0-9]+:' | tee "$lines"
  rc=${PIPESTATUS[0]}
  set -e
  p=$(grep -c ' Passed ' "$lines" || true)
  s=$(grep -c '\*\*\*Skipped' "$lines" || true)
  f=$(($(wc -l <"$lines") - p - s))
  rm -f "$lines"
  # ctest failing with no failed test line (no tests found, a crash of ctest): one failure.
  ((rc == 0 || f > 0)) || f=1
  passed=$((passed + p))
  failed=$((failed + f))
  local note=
  ((f == 0)) || note="; the failing tests' output is in $log"
  echo "ctest --preset $preset: $p passed, $f failed, $s skipped$note"
}

case "$mode" in
  run)
    # Default build: CUDA for every supported architecture when nvcc is present; halo3d only.
    echo "building build/halo3d (log: $log)"
    quiet cmake --preset default -DHALO3D_BUILD_TESTS=OFF
    quiet cmake --build --preset default -j"$jobs" --target halo3d
    # The files the job writes, from the config (output and report).
    out=$(sed -n 's/^output *= *"\(.*\)".*/\1/p' inputs/default.toml)
    report=$(sed -n 's/^report *= *"\(.*\)".*/\1/p' inputs/default.toml)
    stamp=$(mktemp)
    rc=0
    mpirun -np "${HALO3D_RANKS:-2}" --oversubscribe build/halo3d solve --config inputs/default.toml || rc=$?
    written=()
    for f in "$out" "${out%.h5}.xdmf" ${report:+"$report"}; do
      [[ -f $f && $f -nt $stamp ]] && written+=("$f")
    done
    rm -f "$stamp"
    written+=("$log")
    echo "quickstart: exit code $rc; wrote ${written[*]:-nothing}"
    exit "$rc"
    ;;
  test)
    # The style gates first (function length and complexity, clang-format): a violation
    # fails in seconds, before the build.
    if bash tests/style_check.sh; then
      passed=$((passed + 1))
    else
      failed=$((failed + 1))
      summary
      exit 1
    fi
    ctest_jobs=${HALO3D_CTEST_JOBS:-$((jobs / 2 > 2 ? jobs / 2 : 2))}
    # CI build: CUDA compiled for one architecture only, to keep the build short.
    build_and_test ci
    # Second build with AddressSanitizer + UndefinedBehaviorSanitizer (host code, no CUDA):
    # the unit and MPI tests, where any finding fails the test. Leak checking is off
    # (ASAN_OPTIONS in the preset): Open MPI and HDF5 keep memory until exit by design.
    build_and_test sanitize
    summary
    ;;
esac
