#!/bin/bash
# Does the float V-cycle touch FP64? (issue 24 item 5: the RTX 4090, sm_89, runs FP64 at
# 1/64 of the float rate.) Dumps the SASS of the CUDA kernels with cuobjdump and counts, in
# every float instantiation of the V-cycle's kernels (smooth, residual, restrict, prolong,
# axpby, pack/unpack, and the conversions at its ends), the instructions that run on the
# FP64 units: DFMA, DADD, DMUL, DSETP, DMNMX, and the conversions from or to double
# (F2F.F64.F32, F2F.F32.F64, I2F.F64, F2I.*.F64). Runs on any machine with the CUDA
# toolkit (no GPU): build the gpu preset first, or pass an object, library or binary.
#
#   bench/sass_fp64_check.sh [FILE] [--all]
#     FILE   default build-gpu/kernels/libhalo3d_kernels.a (else build-gpu/halo3d); or a
#            dump made where cuobjdump exists: cuobjdump -sass LIB > F.sass (or | gzip > F.sass.gz)
#     --all  also list the double kernels
# Exit 0 when no float kernel except the conversions uses FP64, 1 when one does, 2 on error.
set -euo pipefail
export PATH=/usr/local/cuda/bin:$PATH
here=$(cd "$(dirname "$0")/.." && pwd)
file=""
all=0
for a in "$@"; do
  case $a in --all) all=1 ;; *) file=$a ;; esac
done
if [ -z "$file" ]; then
  for f in "$here/build-gpu/kernels/libhalo3d_kernels.a" "$here/build-gpu/halo3d"; do
    [ -f "$f" ] && { file=$f; break; }
  done
fi
[ -n "$file" ] && [ -f "$file" ] || { echo "sass_fp64_check: no CUDA build (cmake --preset gpu)" >&2; exit 2; }
sass=$(mktemp)
trap 'rm -f "$sass"' EXIT
case $file in
  *.sass.gz) gzip -dc "$file" > "$sass" ;;  # a dump made elsewhere: cuobjdump -sass F | gzip
  *.sass) cp "$file" "$sass" ;;
  *)
    command -v cuobjdump >/dev/null || { echo "sass_fp64_check: cuobjdump not found" >&2; exit 2; }
    cuobjdump -sass "$file" > "$sass" ;;
esac
python3 - "$sass" "$all" <<'PY'
import re, subprocess, sys
path, show_all = sys.argv[1], sys.argv[2] == "1"
fp64 = re.compile(r"\b(DFMA|DADD|DMUL|DSETP|DMNMX|DMMA|F2F\.F64\.F32|F2F\.F32\.F64|F2F\.F64\.F64|"
                  r"I2F\.F64[.\w]*|F2I[.\w]*\.F64|F2I\.F64[.\w]*)\b")
funcs, name = {}, None
for line in open(path):
    m = re.search(r"Function : (\S+)", line)
    if m:
        name = m.group(1)
        funcs.setdefault(name, {})
        continue
    if name:
        for op in fp64.findall(line):
            funcs[name][op] = funcs[name].get(op, 0) + 1
names = list(funcs)
import shutil
filt = shutil.which("cu++filt") or shutil.which("c++filt")
demangled = subprocess.run([filt], input="\n".join(names), capture_output=True,
                           text=True).stdout.splitlines() if names else []
vcycle = re.compile(r"smooth|residual|restrict|prolong|convert|widen|axpby|AxpbyOp|pack_face|unpack_face")
bad = 0
rows = []
seen = set()
for mangled, pretty in zip(names, demangled):
    if not vcycle.search(pretty):
        continue
    is_float = "float" in pretty
    if not is_float and not show_all:
        continue
    short = re.sub(r"\(.*", "", pretty)  # the name and template arguments
    short = re.sub(r"halo3d::(\(anonymous namespace\)::)?", "", short)
    ops = funcs[mangled]
    # reads or writes double: the conversions at the float cycle's ends, and mixed PCG's own
    # kernels that take the float z (a double template argument beside the float)
    boundary = is_float and ("convert" in pretty or "widen" in pretty or "double" in short)
    if is_float and ops and not boundary:
        bad += 1
    key = (short, tuple(sorted(ops.items())))
    if key in seen:
        continue
    seen.add(key)
    verdict = "ok" if not ops else ("boundary" if boundary else ("FP64" if is_float else "double"))
    rows.append((verdict, short, " ".join(f"{k}x{v}" for k, v in sorted(ops.items())) or "-"))
for verdict, short, ops in sorted(rows, key=lambda r: (r[0] != "FP64", r[1])):
    print(f"{verdict:8s} {short[:110]:110s} {ops}")
print(f"sass_fp64_check: {len(names)} kernels; {bad} float V-cycle kernel instantiation(s) use FP64"
      " (boundary: kernels that also read or write double, the float cycle's ends and mixed PCG's)")
sys.exit(1 if bad else 0)
PY
