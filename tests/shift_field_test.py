#!/usr/bin/env python3
"""A variable shift (--shift expr:FORMULA or file:PATH.h5:/DATASET): -div(k grad u) + sigma u
= f with sigma >= 0 at the points, through the program, against a plain numpy reference of
the discrete operator (the six face weights, harmonic means of k over h_d^2, plus the
point's own sigma on the diagonal):
1. Jacobi steps bitwise the reference's (random k and sigma from files), on 1-4 ranks;
   a variable shift with k = 1; expr:2.5 bitwise the constant --shift 2.5;
2. Poisson with a random f: the dense solve's answer to ~1e-12 relative with MG-PCG (double,
   mixed, distributed coarse levels, --fmg) and CG, /u bitwise equal on every process grid;
   sigma dropped from the reference is far off (the check sees sigma); the output and the
   report name the shift; MG-PCG converges in a few iterations with a large or jumping sigma;
3. heat: dt = 0.9 / (alpha max_p (face weights + sigma_p)) bitwise, explicit steps bitwise
   numpy's; backward Euler and Crank-Nicolson against a dense solve; a restart refused when
   the sigma file changed, or the shift did;
4. refusals: sigma < 0, NaN or Inf anywhere (the boundary layer included), malformed specs,
   a wrong file shape: exit 2, one line naming --shift;
5. --dry-run counts sigma's arrays.
Run: shift_field_test.py HALO3D MPIEXEC"""
import json
import os
import re
import sys

import numpy as np

from h3test import Harness, text, diag_apply, dense

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_schema import validate_report  # noqa: E402

T = Harness("shift-field")
check, halo3d, read, write, work, failures = T.check, T.solve, T.read, T.write, T.work, T.failures


def one_line_refusal(p, what, needle="--shift"):
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 2 and len(lines) == 1 and needle in p.stderr,
          f"{what}: exit 2, one line naming {needle}: {p.stderr.strip()[:200]!r}")


rng = np.random.default_rng(2025)
grid, box = (9, 7, 6), (1.5, 1.0, 0.8)
g, b = text(grid), text(box)
shape = (grid[2] + 2, grid[1] + 2, grid[0] + 2)
inner = np.s_[1:-1, 1:-1, 1:-1]
kappa = np.exp(rng.normal(0.0, 1.0, shape))  # lognormal, boundary layer included
sigma_full = rng.uniform(0.0, 400.0, shape)  # of the weights' size (1/h^2 ~ 36 .. 120)
sigma_full[1:3, 2:5, 3:6] = 0.0  # sigma >= 0: zeros are allowed
sigma = sigma_full[inner]
write("k.h5", kappa)
write("s.h5", sigma_full)
f = rng.uniform(-1, 1, (grid[2], grid[1], grid[0]))
write("f.h5", f)
procs = {1: ["1,1,1"], 2: ["2,1,1", "1,1,2"], 3: ["1,3,1"], 4: ["2,2,1", "1,2,2"]}
common = ["--grid", g, "--box", b, "--shift", "file:s.h5:/d", "--coefficient", "file:k.h5:/d"]

# 1. Jacobi from 0: u1 = f / d, then u2 = u1 + (f - A u1) / d, bitwise.
d, _ = diag_apply(np.zeros_like(f), kappa, grid, box, sigma)
u1 = f / d
u2 = u1 + (f - diag_apply(u1, kappa, grid, box, sigma)[1]) / d
for ranks, grids in procs.items():
    for pg in grids:
        for steps, want in ((1, u1), (2, u2)):
            out = f"j{steps}_{pg.replace(',', '')}.h5"
            halo3d(ranks, *common, "--procs", pg, "--rhs", "file:f.h5:/d", "--solver", "jacobi",
                   "--max-iters", str(steps), "--output", out, expect=3)
            u = read(out)[0]
            diff = np.max(np.abs(u - want)) if u.shape == want.shape else np.inf
            check(u.shape == want.shape and np.array_equal(u, want),
                  f"Jacobi step {steps} on {pg}: bitwise the reference's (max diff {diff:.1e})")
# k = 1 with a variable shift: the variable path with k = 1's weights.
ones = np.ones(shape)
d1, _ = diag_apply(np.zeros_like(f), ones, grid, box, sigma)
for ranks, pg in ((1, "1,1,1"), (3, "3,1,1")):
    out = f"j_k1_{ranks}.h5"
    halo3d(ranks, "--grid", g, "--box", b, "--shift", "file:s.h5:/d", "--procs", pg, "--rhs", "file:f.h5:/d",
           "--solver", "jacobi", "--max-iters", "1", "--output", out, expect=3)
    check(np.array_equal(read(out)[0], f / d1), f"k = 1, sigma from the file, on {pg}: Jacobi's step f / d bitwise")
# expr:2.5 runs the variable shift; its Jacobi steps are the constant --shift 2.5's bits.
for spec in ("2.5", "expr:2.5"):
    halo3d(2, "--grid", g, "--box", b, "--coefficient", "file:k.h5:/d", "--shift", spec, "--rhs", "file:f.h5:/d",
           "--solver", "jacobi", "--max-iters", "2", "--output", f"c_{spec[:4]}.h5", expect=3)
check(np.array_equal(read("c_2.5.h5")[0], read("c_expr.h5")[0]),
      "--shift expr:2.5 gives the constant --shift 2.5's Jacobi steps bitwise")

# 2. A random f: the dense solve's answer.
A = dense(kappa, grid, box, sigma)
check(np.allclose(A, A.T, rtol=0, atol=1e-9 * d.max()), "the reference operator is symmetric")
want = np.linalg.solve(A, f.ravel()).reshape(f.shape)
scale = np.max(np.abs(want))
no_sigma = np.linalg.solve(dense(kappa, grid, box, 0.0), f.ravel()).reshape(f.shape)
check(np.max(np.abs(no_sigma - want)) / scale > 1e-2, "without sigma the answer is far off (the check sees sigma)")
for name, extra in (("mg", []), ("mixed", ["--precision", "mixed"]), ("cg", ["--precond", "none"]),
                    ("mg distributed", ["--mg-gather", "0"]),
                    ("mixed distributed", ["--precision", "mixed", "--mg-gather", "0"]),
                    ("fmg", ["--fmg"])):
    first = None
    for ranks, grids in procs.items():
        for pg in grids:
            out = f"{name.replace(' ', '_')}_{pg.replace(',', '')}.h5"
            halo3d(ranks, *common, "--procs", pg, "--rhs", "file:f.h5:/d", "--tol", "1e-14", *extra,
                   "--output", out)
            u = read(out)[0]
            if first is None:
                first = u
                err = np.max(np.abs(u - want)) / scale if u.shape == want.shape else np.inf
                check(err < 1e-12, f"{name}: the dense solve's answer (max relative error {err:.1e})")
            else:
                check(np.array_equal(u, first), f"{name} on {pg} ({ranks} ranks): /u bitwise equal to 1 rank")
halo3d(2, *common, "--rhs", "file:f.h5:/d", "--output", "named.h5", "--report", "named.json")
attrs = read("named.h5")[1]
report = json.load(open(os.path.join(work, "named.json"))) if os.path.exists(os.path.join(work, "named.json")) else {}
config = report.get("config", {})
problems = validate_report(report)
check(report and not problems, f"the report matches docs/report.schema.json: {problems[:3]}")
check(attrs.get("shift") == "file:s.h5:/d" and config.get("shift") == "file:s.h5:/d",
      f"the output's attribute and the report's config name the shift: {attrs.get('shift')!r}, {config.get('shift')!r}")
# sigma from a formula with k = 1 (the reference evaluates it at coord()'s points).
x = [(box[a] * np.arange(n + 2)) / (n + 1) for a, n in enumerate(grid)]
for a, n in enumerate(grid):
    x[a][-1] = box[a]
zz, yy, xx = np.meshgrid(x[2], x[1], x[0], indexing="ij")
sig_e = (300 * (1 + np.sin(3 * xx) * np.cos(2 * yy)) * zz)[inner]
want_e = np.linalg.solve(dense(ones, grid, box, sig_e), f.ravel()).reshape(f.shape)
for ranks, pg in ((1, "1,1,1"), (4, "2,1,2")):
    out = f"expr_{ranks}.h5"
    halo3d(ranks, "--grid", g, "--box", b, "--shift", "expr:300*(1+sin(3*x)*cos(2*y))*z", "--procs", pg,
           "--rhs", "file:f.h5:/d", "--tol", "1e-14", "--output", out)
    u = read(out)[0]
    err = np.max(np.abs(u - want_e)) / np.max(np.abs(want_e)) if u.shape == want_e.shape else np.inf
    check(err < 1e-12, f"k = 1, --shift expr: on {pg}: the dense solve's answer (max relative error {err:.1e})")

# Multigrid sees sigma on its coarse levels (coarsened as k): with sigma 100x the weights,
# or a jump of 1e6, MG-PCG still converges in a few iterations (double and mixed; a
# hierarchy without sigma overcorrects).
for spec, most in (("expr:1e5*(1+x)", 8), ("expr:(x<0.5)*1e6", 13)):
    for extra in ([], ["--precision", "mixed"]):
        p = halo3d(2, "--grid", "32,32,32", "--rhs", "random", "--shift", spec, *extra, "--output", "none",
                   "--report", "its.json")
        its = json.load(open(os.path.join(work, "its.json")))["result"]["iterations"] if p.returncode == 0 else -1
        check(0 < its <= most, f"--shift {spec} {' '.join(extra)}: {its} MG-PCG iterations to 1e-8 (at most {most})")

# 3. Heat: the explicit limit from each point's own sigma, steps bitwise.
alpha = 0.7
hs = sigma_full.copy()
hs[3, 4, 5] = 5000.0  # the largest diagonal: this point's sigma
write("hs.h5", hs)
hsig = hs[inner]
dh, _ = diag_apply(np.zeros_like(f), kappa, grid, box, hsig)
check(np.unravel_index(dh.argmax(), dh.shape) == (2, 3, 4), "the largest diagonal is sigma's point")
limit = 1.0 / (alpha * dh.max())
heat = ["--problem", "heat", "--grid", g, "--box", b, "--alpha", str(alpha), "--coefficient", "file:k.h5:/d",
        "--shift", "file:hs.h5:/d", "--initial", "file:f.h5:/d"]
steps, dt = 4, 0.9 * limit
c = alpha * dt
hw = f.copy()
for _ in range(steps):
    hw = hw - c * diag_apply(hw, kappa, grid, box, hsig)[1]
for ranks, pg in ((1, "1,1,1"), (2, "1,2,1"), (4, "2,2,1")):
    out = f"he_{pg.replace(',', '')}.h5"
    halo3d(ranks, *heat, "--procs", pg, "--steps", str(steps), "--output", out)
    u, attrs = read(out)
    got = float(np.ravel(attrs.get("dt", [np.nan]))[0])
    check(got == dt, f"heat on {pg}: dt {got!r} = 0.9 / (alpha max (weights + sigma_p)) = {dt!r} bitwise")
    diff = np.max(np.abs(u - hw)) if u.shape == hw.shape else np.inf
    check(u.shape == hw.shape and np.array_equal(u, hw), f"explicit heat, {steps} steps on {pg}: bitwise numpy's "
          f"(max diff {diff:.1e})")
p = halo3d(2, *heat, "--steps", "2", "--dt", repr(limit * (1 + 1e-12)), "--output", "none", expect=2)
check("stability limit " + repr(limit) in p.stderr, "a dt just above 1/(alpha max diag) with sigma: refused")
dt_i, isteps = 30 * limit, 2
ci = alpha * dt_i
Ah = dense(kappa, grid, box, hsig)
n = Ah.shape[0]
for scheme, theta in (("implicit", 1.0), ("crank-nicolson", 0.5)):
    v = f.ravel().copy()
    for _ in range(isteps):
        v = np.linalg.solve(np.eye(n) + theta * ci * Ah, v - (1 - theta) * ci * (Ah @ v))
    hwant = v.reshape(f.shape)
    for name, extra, ranks, pg in (("mg", [], 1, "1,1,1"), ("mg", [], 3, "1,1,3"),
                                   ("mixed", ["--precision", "mixed"], 2, "2,1,1"),
                                   ("cg", ["--precond", "none"], 2, "1,2,1")):
        out = f"hi_{scheme}_{name}_{ranks}.h5"
        halo3d(ranks, *heat, "--time-scheme", scheme, "--dt", repr(dt_i), "--steps", str(isteps), "--tol", "1e-13",
               "--procs", pg, *extra, "--output", out)
        u = read(out)[0]
        err = np.max(np.abs(u - hwant)) / np.max(np.abs(hwant)) if u.shape == hwant.shape else np.inf
        check(err < 1e-10, f"{scheme} ({name}) on {pg}: the dense solve's answer (max relative error {err:.1e})")
# Restarts: refused when the sigma file changed (inside, or its boundary layer only), or the shift did.
write("sr.h5", hs)
rk = heat[:-4] + ["--shift", "file:sr.h5:/d", "--initial", "file:f.h5:/d", "--dt", repr(0.5 * limit)]
halo3d(2, *rk, "--steps", "2", "--checkpoint", "ck.h5", "--checkpoint-every", "2", "--output", "none")
for where, idx in (("inside", (3, 3, 3)), ("in its boundary layer only", (0, 3, 4))):
    changed = hs.copy()
    changed[idx] = changed[idx] * 1.01 + 1.0
    write("sr.h5", changed)
    p = halo3d(2, *rk, "--steps", "4", "--restart", "ck.h5", "--output", "none", expect=2)
    check(p.returncode == 2 and "differ" in p.stderr, f"restart after the sigma file changed {where}: refused: "
          f"{p.stderr.strip()[:160]!r}")
write("sr.h5", hs)
p = halo3d(2, *rk, "--steps", "4", "--restart", "ck.h5", "--output", "none")
check(p.returncode == 0, "restart with the sigma file as it was: continues")
p = halo3d(2, *[a if a != "file:sr.h5:/d" else "1" for a in rk], "--steps", "4", "--restart", "ck.h5",
           "--output", "none", expect=2)
check(p.returncode == 2, f"restart with --shift 1 instead of the file: refused: {p.stderr.strip()[:160]!r}")

# 4. Refusals, before anything is solved.
small = ["--grid", "4,4,4", "--output", "none"]
bad = np.full((6, 6, 6), 1.0)
for what, value, at in (("negative inside", -1e-300, (2, 3, 1)), ("NaN in the boundary layer", np.nan, (0, 2, 2)),
                        ("Inf inside", np.inf, (4, 4, 4))):
    arr = bad.copy()
    arr[at] = value
    write("bad.h5", arr)
    one_line_refusal(halo3d(0, *small, "--shift", "file:bad.h5:/d", expect=2), f"sigma {what}")
    p = halo3d(3, *small, "--shift", "file:bad.h5:/d", expect=2)
    check(p.returncode == 2 and p.stderr.count("halo3d: error: --shift") == 1,
          f"sigma {what} on 3 ranks: refused, one line")
write("shape.h5", np.ones((4, 4, 4)))
p = halo3d(0, *small, "--shift", "file:shape.h5:/d", expect=2)
one_line_refusal(p, "a [NZ][NY][NX] sigma file (the boundary layer missing)")
check("[6][6][6]" in p.stderr, "the shape refusal names [NZ+2][NY+2][NX+2]")
for spec in ("-1", "abc", "expr:x-0.5", "expr:x+", "expr:sqrt(-1)", "nan", "file:k.h5"):
    p = halo3d(0, *small, "--shift", spec, expect=2)
    one_line_refusal(p, f"--shift {spec}")
p = halo3d(0, *small, "--shift", "file:nothere.h5:/d", expect=5)
check(p.returncode == 5 and "--shift" in p.stderr, "a missing sigma file: exit 5 (an I/O error) naming --shift")
p = halo3d(0, *small, "--problem", "heat", "--steps", "1", "--shift", "expr:-z", expect=2)
one_line_refusal(p, "heat with --shift expr:-z")

# 5. --dry-run: sigma's arrays counted.
def need(*args):
    p = halo3d(1, "--grid", "40,40,40", "--dry-run", *args)
    m = re.search(r"([0-9.]+) MiB", p.stdout)
    return float(m.group(1)) if m else np.nan, p.stdout


base, _ = need("--coefficient", "expr:1+x")
more, out = need("--coefficient", "expr:1+x", "--shift", "expr:1+y")
check(more > base, f"--dry-run: memory with a variable shift {more} MiB > {base} MiB without")

if failures:
    print("FAILED:\n  " + "\n  ".join(f[:2000] for f in failures))
    sys.exit(1)
print("all shift field checks passed")
