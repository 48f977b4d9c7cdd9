#!/usr/bin/env bash
# examples/embed against an install of this build tree, as an embedding code would use it:
# `cmake --install` into a temporary prefix, the example configured with find_package(halo3d)
# from that prefix alone and built, then run on 2 and 3 ranks (it checks its own answer and
# exits nonzero when wrong). Any failing step fails the test.
# Usage: embed_test.sh CMAKE BUILD_DIR SOURCE_DIR MPIEXEC CC CXX CXX_FLAGS LINKER_FLAGS
set -euo pipefail
cmake=$1 build=$2 source=$3 mpiexec=$4 cc=$5 cxx=$6 cxx_flags=$7 ld_flags=$8
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$cmake" --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" || {
  cat "$tmp/install.log"
  exit 1
}
# The same compilers and flags as the build tree (a sanitizer build's libraries need them).
"$cmake" -S "$source/examples/embed" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_CXX_FLAGS="$cxx_flags" -DCMAKE_EXE_LINKER_FLAGS="$ld_flags" >"$tmp/configure.log" || {
  cat "$tmp/configure.log"
  exit 1
}
# The package was found in the prefix, not in the build tree.
grep -q "halo3d_DIR:PATH=$tmp/prefix/" "$tmp/build/CMakeCache.txt" || {
  echo "embed: halo3d was not found in $tmp/prefix"
  grep halo3d_DIR "$tmp/build/CMakeCache.txt"
  exit 1
}
"$cmake" --build "$tmp/build" >"$tmp/build.log" 2>&1 || {
  cat "$tmp/build.log"
  exit 1
}
for n in 2 3; do
  "$mpiexec" -np "$n" --oversubscribe "$tmp/build/embed" 24
done
echo "embed: built against the install and ran on 2 and 3 ranks"
