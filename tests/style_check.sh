#!/usr/bin/env bash
# The style gates of CI (issues 14 and 26), on the checkout this script lives in:
#  1. complexity: `lizard -L 100 -C 20 -w` reports no function of more than 100 lines or a
#     cyclomatic complexity above 20 in src/ and kernels/ (lizard has no reader for .cu/.cuh,
#     so those are read as C++ from copies named .cu.cpp/.cuh.cpp, and named back);
#  2. format: `clang-format --dry-run --Werror` (clang-format 14, the repository's
#     .clang-format) accepts every tracked *.cpp, *.hpp, *.cu and *.cuh file;
#  3. length: no source file in src/, kernels/ or include/ over 500 lines, solve.cpp 350,
#     probe.cpp 400 (those allowed are listed with the reason).
# Exit 0: all pass; 1: a violation (listed, with the fix); 2: lizard or clang-format 14 is
# missing. --skip-missing: exit 77 instead of 2 (ctest's skip code), so a checkout without
# the tools can still run ctest; CI runs the script without it (jobs/quickstart.sh test).
set -euo pipefail
cd "$(dirname "$0")/.."

missing_code=2
[[ ${1:-} == --skip-missing ]] && missing_code=77

# Functions allowed past the limits, each an extended regex matched against lizard's warning
# line ("FILE:LINE: warning: NAME has ..."). Only for a function that is being split on
# another branch: remove its entry when that split is merged.
allowed=()

# lizard from PATH, or as a module of the python3 it was installed for (pip --user).
lizard=()
if command -v lizard >/dev/null; then
  lizard=(lizard)
elif python3 -m lizard --version >/dev/null 2>&1; then
  lizard=(python3 -m lizard)
fi
# clang-format 14: newer versions format some constructs differently.
clang_format=
for c in clang-format-14 clang-format; do
  if command -v "$c" >/dev/null && [[ $("$c" --version) == *" version 14."* ]]; then
    clang_format=$c
    break
  fi
done
if ((${#lizard[@]} == 0)) || [[ -z $clang_format ]]; then
  ((${#lizard[@]})) || echo "style: lizard is missing (pip install lizard)" >&2
  [[ -n $clang_format ]] || echo "style: clang-format 14 is missing (apt-get install clang-format-14)" >&2
  exit "$missing_code"
fi

status=0

# 1. Complexity. lizard's own exit status counts warnings; the warnings are read instead, so
#    that the allowed ones can be dropped (a failure to run at all still fails the check).
cuda_copies=$(mktemp -d)
trap 'rm -rf "$cuda_copies"' EXIT
while IFS= read -r -d '' f; do
  mkdir -p "$cuda_copies/$(dirname "$f")"
  cp "$f" "$cuda_copies/$f.cpp"
done < <(find src kernels -type f \( -name '*.cu' -o -name '*.cuh' \) -print0)
if ! out=$("${lizard[@]}" -L 100 -C 20 -w src kernels "$cuda_copies" 2>&1); then
  [[ $out == *": warning: "* ]] || {
    echo "style: lizard failed: $out" >&2
    exit 1
  }
fi
out=$(sed "s|$cuda_copies/||; s|\.\(cuh\?\)\.cpp:|.\1:|" <<<"$out")
warnings=$(grep ': warning: ' <<<"$out" || true)
for a in "${allowed[@]}"; do
  if grep -Eq "$a" <<<"$warnings"; then
    warnings=$(grep -Ev "$a" <<<"$warnings" || true)
  else
    echo "style: note: the allowed entry '$a' matches no function any more; remove it" >&2
  fi
done
if [[ -n $warnings ]]; then
  echo "style: FAIL: functions over 100 lines or cyclomatic complexity 20 (lizard -L 100 -C 20);" \
    "split each into well-named pieces:" >&2
  echo "$warnings" >&2
  status=1
else
  echo "style: ok: no function in src/ or kernels/ over 100 lines or cyclomatic complexity 20"
fi

# 2. Format. Tracked files only (not build trees); outside a git checkout, every such file.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp' '*.cu' '*.cuh')
else
  mapfile -t files < <(find . -path './build*' -prune -o -type f \
    \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' \) -print | sed 's|^\./||' | sort)
fi
bad=()
for f in "${files[@]}"; do
  "$clang_format" --style=file --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
  echo "style: FAIL: ${#bad[@]} file(s) not formatted as .clang-format says; fix with" \
    "'$clang_format -i FILE':" >&2
  for f in "${bad[@]}"; do
    # The first few places clang-format would change, as it reports them.
    "$clang_format" --style=file --dry-run "$f" 2>&1 | grep -m 3 ': warning: ' | sed 's/^/  /' >&2 ||
      echo "  $f" >&2
  done
  status=1
else
  echo "style: ok: ${#files[@]} C++/CUDA files formatted as .clang-format says ($clang_format)"
fi
# 3. Length. No source file in src/, kernels/ or include/ over 500 lines (issue 26): a longer
#    file holds more than one idea. Files allowed past it, each with the reason, until split.
#    The program's two drivers have tighter limits (issue 26): a run is assembled by the
#    session and reported from a record, so `solve` and `probe` only wire them together.
long_allowed=()
declare -A limit=([src/app/solve.cpp]=350 [src/app/probe.cpp]=400)
long=()
while IFS= read -r -d '' f; do
  n=$(wc -l <"$f")
  ((n > ${limit[$f]:-500})) || continue
  [[ " ${long_allowed[*]} " == *" $f "* ]] || long+=("$f ($n lines, limit ${limit[$f]:-500})")
done < <(find src kernels include -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' \) -print0 2>/dev/null)
for f in "${long_allowed[@]}"; do
  (($(wc -l <"$f") > 500)) || echo "style: note: $f is 500 lines or fewer now; remove it from long_allowed" >&2
done
if ((${#long[@]})); then
  echo "style: FAIL: files over their line limit; split each where its ideas part:" >&2
  printf '  %s\n' "${long[@]}" >&2
  status=1
else
  echo "style: ok: no file in src/, kernels/ or include/ over 500 lines, solve.cpp <= 350, probe.cpp <= 400 (${#long_allowed[@]} allowed, listed in tests/style_check.sh)"
fi
exit "$status"
