#!/usr/bin/env bash
# Runs halo3d and its hypre/PETSc peers on the same system and ranks, interleaved, and prints
# the median iterations, set-up, solve and total time of each, and their ratios to halo3d's
# default solver (MG-PCG). See bench/peers/README.md.
#
#   bench/peers/compare.sh [--grid 128,128,128] [--ranks 2] [--seed 1] [--tol 1e-8]
#                          [--repeats 3] [--solvers LIST] [--build DIR] [--halo3d PATH]
#                          [--backend auto|host|cuda] [--coefficient SPEC] [--json FILE] [--log FILE]
#
# LIST is comma-separated, from: halo3d-mg halo3d-cg hypre-pfmg hypre-pcg petsc-mg
# petsc-mg-dmda petsc-gamg petsc-cg (default: halo3d-mg,halo3d-cg,hypre-pfmg,hypre-pcg,
# petsc-mg,petsc-gamg). --build is the HALO3D_BUILD_PEERS=ON build folder (default
# build-peers); --halo3d defaults to DIR/halo3d; --backend is halo3d's (host: against the
# peers' CPU runs on a machine with a GPU); --coefficient file:PATH.h5:/DATASET (or a
# number) gives halo3d and hypre the same variable k (PETSc's driver does not take it: the
# default list is then halo3d-mg,halo3d-cg,hypre-pfmg,hypre-pcg). MPIRUN (default "mpirun --oversubscribe")
# and MPIRUN_ARGS may be set; OMP_NUM_THREADS defaults to 1.
set -euo pipefail

grid=128,128,128 ranks=2 seed=1 tol=1e-8 repeats=3 build=build-peers halo3d="" json="" log="" backend=auto coefficient=""
solvers=halo3d-mg,halo3d-cg,hypre-pfmg,hypre-pcg,petsc-mg,petsc-gamg
while [[ $# -gt 0 ]]; do
  case "$1" in
    --grid) grid=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --tol) tol=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --solvers) solvers=$2; solvers_given=1; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --halo3d) halo3d=$2; shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    --coefficient) coefficient=$2; shift 2 ;;
    --json) json=$2; shift 2 ;;
    --log) log=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "compare.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -n "$halo3d" ]] || halo3d=$build/halo3d
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
read -r -a mpirun <<< "${MPIRUN:-mpirun --oversubscribe}"
read -r -a mpiargs <<< "${MPIRUN_ARGS:-}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[[ -n "$log" ]] || log=$tmp/log
: > "$log"
common=(--grid "$grid" --seed "$seed" --tol "$tol")
if [[ -n "$coefficient" ]]; then
  [[ -n "${solvers_given:-}" ]] || solvers=halo3d-mg,halo3d-cg,hypre-pfmg,hypre-pcg
  if [[ ",$solvers," == *,petsc-* ]]; then
    echo "compare.sh: --coefficient: the PETSc driver does not take a coefficient; leave petsc-* out of --solvers" >&2
    exit 2
  fi
  common+=(--coefficient "$coefficient")  # halo3d solve and the hypre driver alike
fi

# One run; appends one PEER line to $tmp/peer.
run_one() {
  local s=$1 out=$tmp/out
  case "$s" in
    halo3d-mg|halo3d-cg)
      local pc=mg; [[ $s == halo3d-cg ]] && pc=none
      "${mpirun[@]}" "${mpiargs[@]}" -np "$ranks" "$halo3d" solve "${common[@]}" --rhs random \
        --precond "$pc" --procs "1,1,$ranks" --backend "$backend" --output none --report "$tmp/report.json" > "$out" 2>&1 \
        || { cat "$out" >&2; return 1; }
      python3 - "$tmp/report.json" "$s" "$ranks" >> "$tmp/peer" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); t = r["timing"]; res = r["result"]; g = r["config"]["grid"]
# The method's start (the first residual and preconditioner application; --fmg's F-cycle)
# belongs to the solve, as hypre's and PETSc's solve timers include their first iteration's.
solve = t["solve_s"] + t.get("start_s", 0.0)
print(f"PEER name={sys.argv[2]} grid={g[0]},{g[1]},{g[2]} ranks={sys.argv[3]} "
      f"iterations={res['iterations']} setup_s={t.get('setup_s', 0.0):.6f} solve_s={solve:.6f} "
      f"relres={res['true_relative_residual']:.6e} converged={str(res['converged']).lower()}")
PY
      ;;
    hypre-pfmg|hypre-pcg)
      local hs=pfmg; [[ $s == hypre-pcg ]] && hs=none
      "${mpirun[@]}" "${mpiargs[@]}" -np "$ranks" "$build/halo3d_peer_hypre" "${common[@]}" --solver "$hs" > "$out" 2>&1 \
        || { cat "$out" >&2; return 1; }
      grep '^PEER' "$out" | sed "s/name=[^ ]*/name=$s/" >> "$tmp/peer" ;;
    petsc-mg|petsc-mg-dmda|petsc-gamg|petsc-cg)
      local ps=${s#petsc-}; [[ $ps == cg ]] && ps=none
      "${mpirun[@]}" "${mpiargs[@]}" -np "$ranks" "$build/halo3d_peer_petsc" "${common[@]}" --solver "$ps" > "$out" 2>&1 \
        || { cat "$out" >&2; return 1; }
      grep '^PEER' "$out" | sed "s/name=[^ ]*/name=$s/" >> "$tmp/peer" ;;
    *) echo "compare.sh: unknown solver $s" >&2; return 2 ;;
  esac
  cat "$out" >> "$log"
  tail -n 1 "$tmp/peer" >&2
}

IFS=, read -r -a list <<< "$solvers"
: > "$tmp/peer"
for ((rep = 1; rep <= repeats; ++rep)); do  # interleaved: every solver once per round
  for s in "${list[@]}"; do run_one "$s"; done
done
cat "$tmp/peer" >> "$log"

python3 - "$tmp/peer" "$solvers" "$grid" "$ranks" "$tol" "$json" <<'PY'
import json, statistics, sys
path, solvers, grid, ranks, tol, jpath = sys.argv[1:]
runs = {}
for line in open(path):
    f = dict(kv.split("=", 1) for kv in line.split()[1:])
    runs.setdefault(f["name"], []).append(f)
rows = []
for s in solvers.split(","):
    rs = runs.get(s, [])
    if not rs: continue
    med = lambda k: statistics.median(float(r[k]) for r in rs)
    its = sorted({int(r["iterations"]) for r in rs})
    setup, solve = med("setup_s"), med("solve_s")
    totals = [float(r["setup_s"]) + float(r["solve_s"]) for r in rs]
    rows.append({"solver": s, "iterations": its[0] if len(its) == 1 else its, "setup_s": setup,
                 "solve_s": solve, "total_s": statistics.median(totals), "runs": len(rs),
                 "relres": max(float(r["relres"]) for r in rs),
                 "converged": all(r["converged"] == "true" for r in rs)})
ref = next((r for r in rows if r["solver"] == "halo3d-mg"), rows[0] if rows else None)
for r in rows:
    r["solve_ratio"] = r["solve_s"] / ref["solve_s"] if ref["solve_s"] > 0 else None
    r["total_ratio"] = r["total_s"] / ref["total_s"] if ref["total_s"] > 0 else None
print(f"grid {grid}, {ranks} ranks, tol {tol}; medians of {rows[0]['runs'] if rows else 0} interleaved runs; "
      f"ratios are to {ref['solver'] if ref else '-'} (>1: slower)")
hdr = f"{'solver':<14} {'iters':>6} {'setup_s':>9} {'solve_s':>9} {'total_s':>9} {'solve/ref':>9} {'total/ref':>9} {'relres':>10}"
print(hdr); print("-" * len(hdr))
for r in rows:
    print(f"{r['solver']:<14} {str(r['iterations']):>6} {r['setup_s']:>9.4f} {r['solve_s']:>9.4f} "
          f"{r['total_s']:>9.4f} {r['solve_ratio']:>9.2f} {r['total_ratio']:>9.2f} {r['relres']:>10.3e}"
          + ("" if r["converged"] else "  NOT CONVERGED"))
if jpath:
    with open(jpath, "w") as f:
        json.dump({"grid": grid, "ranks": int(ranks), "tol": float(tol), "reference": ref["solver"],
                   "rows": rows}, f, indent=2)
PY
