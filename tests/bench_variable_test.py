#!/usr/bin/env python3
"""bench --coefficient (issue 25's bench row) and bench/lognormal_k.py:
1. lognormal_k.py writes [NZ+2][NY+2][NX+2] float64 k with max/min = the contrast, the same
   bits for the same seed, other bits for another, and refuses a bad grid in one line;
2. bench --coefficient file:K.h5:/k on 1, 2 and 4 ranks (three process grids, an odd grid),
   and with --shift file:S.h5:/s too (sigma: 8 B a point a sweep more, 4 in float):
   the report parses, every operator row has its _var twin and the rows that do not touch the
   operator have none; each _var row's bytes are its constant row's plus the face weights,
   24 B a point a sweep in double and 12 in float (apply, operator, CG, smoothing: one sweep;
   a V-cycle: 2 s + 1 sweeps on each level with s smoothing steps, the coarsest's steps there,
   but the first step from zero, which reads the level's D^{-1} instead: 8 B a point, 4 in float);
   the levels table with k adds exactly that per level; every time is > 0; with --mg-interp
   operator the transfers have _var rows too, 12 B a fine point more (their weights), and each
   V-cycle level but the coarsest 24 B a point more;
3. bench without --coefficient has no _var row; a bad --coefficient or --shift is refused,
   exit 2, and so are they with --io, and a constant --shift alone; --shift expr: alone runs
   the _var rows with k = 1;
4. bench --bc with Neumann faces (and the singular all-Neumann case): the _var rows, 24 B a
   point more a sweep, the report's bc; --bc periodic alone (a constant operator), a bad --bc
   and --bc with --io refused, exit 2.
Run: bench_variable_test.py HALO3D MPIEXEC SOURCE_DIR"""
import json
import os
import re
import subprocess
import sys
import tempfile

import h5py
import numpy as np

HALO3D, MPIEXEC, SRC = os.path.abspath(sys.argv[1]), sys.argv[2], os.path.abspath(sys.argv[3])
GEN = os.path.join(SRC, "bench", "lognormal_k.py")
failures = []
work = tempfile.mkdtemp(prefix="halo3d-bench-variable-")


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=work)


def bench(ranks, *args):
    return run([MPIEXEC, "-np", str(ranks), "--oversubscribe", HALO3D, "bench", "--backend", "host",
                "--reps", "2", "--warmup", "0"] + list(args))


def bench_rows(ranks, procs, what, rep, *args):
    """bench on the 13x11x9 grid (g, defined below), `ranks` as `procs`, with a JSON report:
    (report, rows by name, the _var rows' base names), or None when it failed (checked)."""
    p = bench(ranks, "--grid", g, "--procs", procs, *args, "--report", rep)
    check(p.returncode == 0, f"bench {what} on {procs} runs ({p.stderr.strip()[-300:]})")
    if p.returncode != 0:
        return None
    b = json.load(open(os.path.join(work, rep)))
    rows = {r["name"]: r for r in b["results"]}
    return b, rows, sorted(n[:-4] for n in rows if n.endswith("_var"))


# 1. The generator.
grid = (13, 11, 9)
shape = (grid[2] + 2, grid[1] + 2, grid[0] + 2)
g = ",".join(map(str, grid))
for name, seed, corr in (("k.h5", 5, 0), ("k_again.h5", 5, 0), ("k_other.h5", 6, 0), ("k_smooth.h5", 5, 2)):
    p = run([sys.executable, GEN, "--grid", g, "--seed", str(seed), "--corr", str(corr), "--contrast", "1e4", name])
    check(p.returncode == 0, f"lognormal_k.py {name} runs ({p.stderr.strip()})")
k = {n: h5py.File(os.path.join(work, n))["k"][...] for n in ("k.h5", "k_again.h5", "k_other.h5", "k_smooth.h5")}
check(k["k.h5"].shape == shape and k["k.h5"].dtype == np.float64, f"k is [NZ+2][NY+2][NX+2] float64: {k['k.h5'].shape}")
for n, v in k.items():
    check(abs(v.max() / v.min() / 1e4 - 1) < 1e-12 and v.min() > 0, f"{n}: contrast 1e4 ({v.max() / v.min():.9g})")
check(np.array_equal(k["k.h5"], k["k_again.h5"]), "the same seed gives the same bits")
check(not np.array_equal(k["k.h5"], k["k_other.h5"]), "another seed gives another field")
# Smoothing correlates neighbours: the log of k varies less from point to point.
rough = [np.abs(np.diff(np.log(k[n]), axis=2)).mean() / np.log(k[n]).std() for n in ("k.h5", "k_smooth.h5")]
check(rough[1] < 0.5 * rough[0], f"--corr 2 is smoother than independent points ({rough})")
p = run([sys.executable, GEN, "--grid", "4,4", "bad.h5"])
check(p.returncode != 0 and len(p.stderr.strip().splitlines()) == 1 and "--grid" in p.stderr,
      f"a bad --grid is refused in one line: {p.stderr.strip()!r}")

# 2. bench --coefficient, and with --shift SPEC too (a variable sigma: 8 B more a sweep).
with h5py.File(os.path.join(work, "s.h5"), "w") as f:
    f["s"] = np.random.default_rng(3).uniform(0, 50, shape)
SWEEPING = ["apply", "apply_dot", "operator", "cg_iteration", "mg_smooth", "mg_vcycle", "mg_pcg_iteration",
            "mg_smooth_f32", "mg_vcycle_mixed", "mg_pcg_iter_mixed"]
points = grid[0] * grid[1] * grid[2]
# --mg-interp operator: the transfers read 12 B a fine point of weights (float in either
# precision) and have _var rows too; each V-cycle level but the coarsest 24 B a point more.
TRANSFERS = ["mg_restrict", "mg_prolong", "mg_restrict_f32", "mg_prolong_f32"]
OPERATOR = ["--mg-interp", "operator"]
for ranks, procs, extra, W in ((1, "1,1,1", [], 24), (2, "2,1,1", [], 24), (4, "1,2,2", [], 24),
                               (1, "1,1,1", ["--shift", "file:s.h5:/s"], 32),
                               (2, "1,2,1", ["--shift", "file:s.h5:/s"], 32),
                               (2, "1,2,1", OPERATOR, 24)):
    od = extra == OPERATOR
    ONE_SWEEP = {"apply": W, "apply_dot": W, "operator": W, "cg_iteration": W, "mg_smooth": W, "mg_smooth_f32": W // 2}
    got_rows = bench_rows(ranks, procs, "--coefficient", f"b{ranks}_{W}_{od}.json", "--coefficient", "file:k.h5:/k",
                          *extra)
    if got_rows is None:
        continue
    b, rows, var = got_rows
    check(var == sorted(SWEEPING + (TRANSFERS if od else [])),
          f"{procs} {' '.join(extra)}: a _var row for each row that sweeps the operator: {var}")
    for n in TRANSFERS if od else []:
        got = rows[n + "_var"]["bytes"] - rows[n]["bytes"]
        check(got == 12 * points, f"{procs}: {n}_var = {n} + 12 B x {points} points (got +{got})")
    check(all(rows[n]["median_ms"] > 0 for n in rows), f"{procs}: every time > 0")
    check(b.get("coefficient") == "file:k.h5:/k", f"{procs}: the report names the coefficient")
    check(b.get("shift") == (extra[1] if extra and extra[0] == "--shift" else None),
          f"{procs}: the report names a --shift")
    for n, w in ONE_SWEEP.items():
        got = rows[n + "_var"]["bytes"] - rows[n]["bytes"]
        check(got == w * points, f"{procs}: {n}_var = {n} + {w} B x {points} points (got +{got})")
    # The V-cycle: per level, the weights of 2 s + 1 sweeps (coarsest: its steps, or none where
    # it is solved exactly: its inverse is the same either way), but D^{-1} (8 B a point) in
    # place of the first step's from zero.
    what = rows["mg_vcycle"]["what"]
    m = re.search(r"chebyshev (\d+)\+(\d+), coarsest (\d+ Chebyshev steps|solved exactly)", what)
    check(m is not None, f"{procs}: the V-cycle's steps in {what!r}")
    if m is None:
        continue
    s, dense = int(m.group(1)), m.group(3) == "solved exactly"
    c = 0 if dense else int(m.group(3).split()[0])
    levels, lv = b["mg_levels"], b["mg_levels_var"]
    check([x["grid"] for x in levels] == [x["grid"] for x in lv], f"{procs}: the same hierarchy with k")
    lm = b.get("mg_levels_mixed", [])
    check([x["grid"] for x in lm] == [x["grid"] for x in levels] and all(x["median_ms"] >= 0 for x in lm)
          and [2 * x["bytes"] for x in lm] == [x["bytes"] for x in levels],
          f"{procs}: the float V-cycle's levels: the same grids, half the bytes")
    expect = []
    for i, x in enumerate(levels):
        n = x["grid"][0] * x["grid"][1] * x["grid"][2]
        sweeps = c if i + 1 == len(levels) else 2 * s + 1
        expect.append(n * (W * sweeps + (8 - W if sweeps else 0)))
    weights = [24 * x["grid"][0] * x["grid"][1] * x["grid"][2] if od and i + 1 < len(levels) else 0
               for i, x in enumerate(levels)]  # the transfers' od, float in either precision
    got = [lv[i]["bytes"] - levels[i]["bytes"] - weights[i] for i in range(len(levels))]
    check(got == expect, f"{procs}: each level adds its sweeps' weights: {got} vs {expect}")
    w, o = sum(expect), sum(weights)
    for n, add in (("mg_vcycle", w + o), ("mg_pcg_iteration", w + o + W * points), ("mg_vcycle_mixed", w / 2 + o),
                   ("mg_pcg_iter_mixed", w / 2 + o + W * points)):
        # These rows sum each rank's share of a global count: equal up to that sum's rounding.
        got = rows[n + "_var"]["bytes"] - rows[n]["bytes"]
        check(abs(got - add) <= 1e-12 * rows[n + "_var"]["bytes"], f"{procs}: {n}_var = {n} + {add:g} (got +{got:g})")

# 3. Without --coefficient, and a bad one.
p = bench(1, "--grid", "8,8,8", "--report", "plain.json")
names = [r["name"] for r in json.load(open(os.path.join(work, "plain.json")))["results"]] if p.returncode == 0 else []
check(p.returncode == 0 and names and not any(n.endswith("_var") for n in names), "no --coefficient: no _var rows")
p = bench(1, "--grid", "8,8,8", "--coefficient", "expr:x-0.5")
lines = [l for l in p.stderr.splitlines() if l.startswith("halo3d")]
check(p.returncode == 2 and len(lines) == 1 and "--coefficient" in lines[0], f"k <= 0 refused, exit 2: {p.stderr.strip()!r}")

p = bench(1, "--grid", "8,8,8", "--shift", "expr:y-0.5")
lines = [l for l in p.stderr.splitlines() if l.startswith("halo3d")]
check(p.returncode == 2 and len(lines) == 1 and "--shift" in lines[0], f"sigma < 0 refused, exit 2: {p.stderr.strip()!r}")
p = bench(1, "--grid", "8,8,8", "--shift", "2")
check(p.returncode == 2 and "leaves the operator constant" in p.stderr, f"a constant --shift alone refused: {p.stderr.strip()!r}")
p = bench(1, "--grid", "8,8,8", "--shift", "expr:1+x", "--report", "sonly.json")
names = [r["name"] for r in json.load(open(os.path.join(work, "sonly.json")))["results"]] if p.returncode == 0 else []
check(p.returncode == 0 and "apply_var" in names, "--shift expr: alone: the _var rows with k = 1")
p = run([MPIEXEC, "-np", "1", "--oversubscribe", HALO3D, "bench", "--io", "--grid", "8,8,8", "--shift", "expr:x"])
check(p.returncode == 2 and "--shift is for the kernel benchmark" in p.stderr, f"--io refuses --shift: {p.stderr.strip()[:200]!r}")
p = run([MPIEXEC, "-np", "1", "--oversubscribe", HALO3D, "bench", "--io", "--grid", "8,8,8", "--coefficient", "2"])
check(p.returncode == 2 and "--coefficient is for the kernel benchmark, not --io" in p.stderr, f"--io refuses --coefficient: {p.stderr.strip()[:200]!r}")

# 4. bench --bc: the _var rows on Neumann faces (k = 1: the face weights with their area
# factors, 24 B a point a sweep), the singular all-Neumann case too; the report names the kinds.
for ranks, procs, bc in ((2, "2,1,1", "x=neumann,y0=neumann"), (1, "1,1,1", "x=neumann,y=neumann,z=neumann")):
    got_rows = bench_rows(ranks, procs, f"--bc {bc}", f"bc{ranks}.json", "--bc", bc)
    if got_rows is None:
        continue
    b, rows, var = got_rows
    check(var == sorted(SWEEPING) and b.get("bc") == bc and b.get("coefficient") == "1",
          f"--bc {bc}: a _var row for each sweeping row, the report's bc {b.get('bc')!r}")
    got = rows["apply_var"]["bytes"] - rows["apply"]["bytes"]
    check(got == 24 * 13 * 11 * 9, f"--bc {bc}: apply_var = apply + 24 B a point (got +{got})")
    check(rows["mg_pcg_iteration_var"]["median_ms"] > 0, f"--bc {bc}: mg_pcg_iteration_var timed")
p = bench(1, "--grid", "8,8,8", "--bc", "x=periodic")
check(p.returncode == 2 and "leaves the operator constant" in p.stderr, f"--bc periodic alone refused: {p.stderr.strip()!r}")
p = bench(1, "--grid", "8,8,8", "--bc", "x=robin")
lines = [l for l in p.stderr.splitlines() if l.startswith("halo3d")]
check(p.returncode == 2 and len(lines) == 1 and "--bc" in lines[0], f"a bad --bc refused, exit 2: {lines!r}")
p = run([MPIEXEC, "-np", "1", "--oversubscribe", HALO3D, "bench", "--io", "--grid", "8,8,8", "--bc", "x=neumann"])
check(p.returncode == 2 and "--bc is for the kernel benchmark" in p.stderr, f"--io refuses --bc: {p.stderr.strip()[:200]!r}")

print(f"{len(failures)} failure(s)" if failures else "all passed")
sys.exit(1 if failures else 0)
