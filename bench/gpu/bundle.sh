#!/usr/bin/env bash
# Usage: bench/gpu/bundle.sh [OUT.tar.xz [BINARY...]]
# Packs build-gpu for the lent GPU machine (no HDF5, CLI11 or network there): halo3d, the
# gpu-labelled tests' binaries and CTest files, stripped, with the runtime libraries from
# ../shared/device/bundle-runtime.sh, into OUT.tar.xz (default .devpack/b.tar.xz; keep the
# folder out of git, e.g. in .git/info/exclude). The libraries of each further BINARY (a peer
# driver, a CPU build) come too; the binaries themselves travel by carry. On the machine:
#   tar xJf .devpack/b.tar.xz; cp -rn .bundle/rt/root/. / 2>/dev/null; ldconfig
#   mkdir -p /work; [ "$PWD" = /work/main ] || ln -sfn "$PWD" /work/main   # CTest's paths
#   ln -sfn "$PWD/.bundle/build-gpu" build-gpu; ctest --test-dir build-gpu -L gpu -j6
# (start MPS first for the multi-rank tests: docs/PERFORMANCE.md). The CTest files name
# /work/main, so build in a checkout at /work/main.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
out=${1:-.devpack/b.tar.xz}
shift || true
rm -rf .bundle && mkdir -p .bundle/build-gpu "$(dirname "$out")"
cp build-gpu/halo3d .bundle/build-gpu/
for f in $(find build-gpu -name CTestTestfile.cmake); do
  mkdir -p ".bundle/$(dirname "$f")" && cp "$f" ".bundle/$f"
done
names=$(grep -o 'set_tests_properties(\[=\[[^]]*\]=\] PROPERTIES .*LABELS "gpu"' build-gpu/tests/CTestTestfile.cmake |
  sed 's/set_tests_properties(\[=\[\([^]]*\)\]=\].*/\1/')
for n in $names; do
  for e in $(grep -F "add_test([=[$n]=]" build-gpu/tests/CTestTestfile.cmake | grep -o "$PWD/build-gpu/[^\"]*"); do
    [ -f "$e" ] && [ -x "$e" ] || continue
    rel=${e#"$PWD"/}
    mkdir -p ".bundle/$(dirname "$rel")" && cp "$e" ".bundle/$rel"
  done
done
find .bundle/build-gpu -type f -perm -u+x -exec strip {} \; 2>/dev/null || true
bash ../shared/device/bundle-runtime.sh .bundle/rt .bundle/build-gpu/halo3d /usr/bin/h5diff \
  .bundle/build-gpu/tests/test_kernels "$@" >/dev/null
tar cJf "$out" .bundle
ls -la "$out"
