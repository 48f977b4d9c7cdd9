#!/usr/bin/env bash
# halo3d quick start on a fresh Debian 12 / Ubuntu 24.04 machine (as root, or with sudo):
#   jobs/quickstart.sh run    install what is missing, build, run the default job on 2 ranks
#   jobs/quickstart.sh test   install what is missing, build, run the whole test suite
# Environment: HALO3D_RANKS (default 2) for `run`; HALO3D_BUILD_DIR (default build).
set -euo pipefail
mode=${1:-run}
cd "$(dirname "$0")/.."

packages=(build-essential cmake pkg-config openmpi-bin libopenmpi-dev libhdf5-openmpi-dev hdf5-tools
          libcli11-dev libgtest-dev nlohmann-json3-dev python3 python3-h5py python3-numpy
          python3-matplotlib slurm-wlm munge iproute2 procps util-linux)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=(); [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  echo "installing: ${missing[*]}"
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
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

case "$mode" in
  run)
    # Default build: CUDA for every supported architecture when nvcc is present.
    cmake --preset default >/dev/null
    cmake --build --preset default -j"$jobs"
    mpirun -np "${HALO3D_RANKS:-2}" --oversubscribe build/halo3d solve --config inputs/default.toml
    ;;
  test)
    # CI build: CUDA compiled for one architecture only, to keep the build short.
    cmake --preset ci >/dev/null
    cmake --build --preset ci -j"$jobs"
    ctest --preset ci
    ;;
  *)
    echo "usage: $0 run|test" >&2
    exit 2
    ;;
esac
