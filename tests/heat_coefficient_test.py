#!/usr/bin/env python3
"""Heat with a variable conductivity (--problem heat --coefficient): u_t = alpha (div(k grad u)
- sigma u), through the program, against a plain numpy reference of the discrete operator
(face weight = harmonic mean of k at its two points / h_d^2, the boundary layer's k on
boundary faces, boundary values lifted with each boundary face's own weight):
1. explicit Euler: dt = 0.9 / (alpha max_p diag_p) bitwise, and the steps bitwise equal to
   numpy's u - alpha dt (A_0 u - B g) on 1-4 ranks and several process grids;
2. backward Euler and Crank-Nicolson: one backward-Euler step lands on a chosen u1 (u0 made
   from it), and several steps of each scheme equal a dense solve of
   (I + theta c A_0) u' = (I - (1 - theta) c A_0) u + c B g to 1e-10 relative, with multigrid
   (double, mixed, distributed coarse levels) and plain CG; /u bitwise equal on every
   process grid;
3. the explicit limit comes from the largest diagonal over all ranks (boundary layer
   included): a dt just above it is refused before stepping (exit 2, one line, nothing
   written), just below it runs; a dt fine for k = 1 is refused for k = 10; --dry-run prints
   the same dt;
4. restarts: continued bitwise; refused when the k file changed (inside, or only in its
   boundary layer) since the checkpoint.
Run: heat_coefficient_test.py HALO3D MPIEXEC"""
import os
import sys

import numpy as np

from h3test import Harness, text, weights, diag_apply, dense

T = Harness("heat-coefficient", "--problem", "heat")
check, halo3d, read, write, work, failures = T.check, T.solve, T.read, T.write, T.work, T.failures


def lifted(k, grid, box, gfull):
    """B g: each point next to the boundary gets w g of its boundary neighbours, x, y, z,
    low side first (fields.cpp's lift_boundary)."""
    wx, wy, wz = weights(k, grid, box)
    b = np.zeros((grid[2], grid[1], grid[0]))
    for sl, w, gg in ((np.s_[:, :, 0], wx[:, :, 0], gfull[1:-1, 1:-1, 0]),
                      (np.s_[:, :, -1], wx[:, :, -1], gfull[1:-1, 1:-1, -1]),
                      (np.s_[:, 0, :], wy[:, 0, :], gfull[1:-1, 0, 1:-1]),
                      (np.s_[:, -1, :], wy[:, -1, :], gfull[1:-1, -1, 1:-1]),
                      (np.s_[0, :, :], wz[0, :, :], gfull[0, 1:-1, 1:-1]),
                      (np.s_[-1, :, :], wz[-1, :, :], gfull[-1, 1:-1, 1:-1])):
        b[sl] = b[sl] + w * gg
    return b


rng = np.random.default_rng(25)
grid, box, shift, alpha = (11, 9, 7), (1.5, 1.0, 0.8), 2.5, 0.7
g, b = text(grid), text(box)
shape = (grid[2] + 2, grid[1] + 2, grid[0] + 2)
kappa = np.exp(rng.normal(0.0, 1.0, shape))  # lognormal, boundary layer included
kappa[0:2, 3, 4] = 40.0  # the largest diagonal: a point and its boundary face at k = 40
write("k.h5", kappa)
u0 = rng.uniform(-1, 1, (grid[2], grid[1], grid[0]))
write("u0.h5", u0)
x = [(box[a] * np.arange(n + 2)) / (n + 1) for a, n in enumerate(grid)]  # as coord() computes it
for a, n in enumerate(grid):
    x[a][-1] = box[a]  # the boundary layer sits at exactly 0 and L
zz, yy, xx = np.meshgrid(x[2], x[1], x[0], indexing="ij")
bspec = "expr:1+x-2*y+3*z*x"
bg = lifted(kappa, grid, box, 1 + xx - 2 * yy + 3 * zz * xx)
procs = {1: ["1,1,1"], 2: ["2,1,1", "1,1,2"], 3: ["1,3,1"], 4: ["2,2,1", "1,2,2"]}
common = ["--grid", g, "--box", b, "--shift", str(shift), "--alpha", str(alpha), "--coefficient", "file:k.h5:/d",
          "--initial", "file:u0.h5:/d", "--boundary", bspec]
d, _ = diag_apply(np.zeros_like(u0), kappa, grid, box, shift)
dmax = d.max()
check(np.unravel_index(d.argmax(), d.shape) == (0, 2, 3), "the largest diagonal sits next to the boundary layer's k = 40")
limit = 1.0 / (alpha * dmax)

# 1. Explicit Euler: dt = 0.9 of the limit, the steps bitwise numpy's.
steps = 5
dt = 0.9 * limit
c = alpha * dt
want = u0.copy()
for _ in range(steps):
    want = want - c * diag_apply(want, kappa, grid, box, shift)[1]
    want = c * bg + want
for ranks, grids in procs.items():
    for pg in grids:
        out = f"e_{pg.replace(',', '')}.h5"
        halo3d(ranks, *common, "--procs", pg, "--steps", str(steps), "--output", out)
        u, attrs = read(out)
        got = float(np.ravel(attrs.get("dt", [np.nan]))[0])
        check(got == dt, f"explicit on {pg}: dt {got!r} = 0.9 / (alpha max diag) = {dt!r} bitwise")
        same = u.shape == want.shape and np.array_equal(u, want)
        diff = np.max(np.abs(u - want)) if u.shape == want.shape else np.inf
        check(same, f"explicit, {steps} steps on {pg}: bitwise numpy's (max diff {diff:.1e})")
check(np.max(np.abs(want - u0)) > 1e-2, "explicit: the steps moved u (the check is not vacuous)")

# 2. Implicit steps. Backward Euler from u0 = (I + c A_0) u1 - c B g lands on u1.
dt_i = 30 * limit
c = alpha * dt_i
u1 = rng.uniform(-1, 1, u0.shape)
write("be0.h5", u1 + c * diag_apply(u1, kappa, grid, box, shift)[1] - c * bg)
be_args = ["--grid", g, "--box", b, "--shift", str(shift), "--alpha", str(alpha), "--coefficient", "file:k.h5:/d",
           "--boundary", bspec, "--time-scheme", "implicit", "--dt", repr(dt_i), "--steps", "1", "--tol", "1e-13"]
for ranks, pg in ((1, "1,1,1"), (3, "1,3,1"), (4, "2,1,2")):
    out = f"be1_{pg.replace(',', '')}.h5"
    halo3d(ranks, *be_args, "--initial", "file:be0.h5:/d", "--procs", pg, "--output", out)
    err = np.max(np.abs(read(out)[0] - u1))
    check(err < 1e-10, f"backward Euler on {pg}: one step from (I + c A_0) u1 - c B g gives u1 (max error {err:.1e})")

# Several steps of each scheme against a dense solve of the theta scheme.
A0 = dense(kappa, grid, box, shift)
n = A0.shape[0]
check(np.allclose(A0, A0.T, rtol=0, atol=1e-9 * dmax), "the reference operator is symmetric")
isteps = 3
for scheme, theta in (("implicit", 1.0), ("crank-nicolson", 0.5)):
    v = u0.ravel().copy()
    for _ in range(isteps):
        rhs = v - (1 - theta) * c * (A0 @ v) + c * bg.ravel()
        v = np.linalg.solve(np.eye(n) + theta * c * A0, rhs)
    want = v.reshape(u0.shape)
    scale = np.max(np.abs(want))
    for name, extra, grids in (("mg", [], procs),
                               ("mixed", ["--precision", "mixed"], {1: ["1,1,1"], 4: ["2,2,1", "1,2,2"]}),
                               ("mg distributed", ["--mg-gather", "0"], {2: ["2,1,1"], 4: ["1,2,2"]}),
                               ("cg", ["--precond", "none"], {1: ["1,1,1"], 3: ["1,3,1"]})):
        first = None
        for ranks, pgs in grids.items():
            for pg in pgs:
                out = f"{scheme}_{name.replace(' ', '_')}_{pg.replace(',', '')}.h5"
                halo3d(ranks, *common, "--time-scheme", scheme, "--dt", repr(dt_i), "--steps", str(isteps),
                       "--tol", "1e-13", "--procs", pg, *extra, "--output", out)
                u = read(out)[0]
                if first is None:
                    first = u
                    err = np.max(np.abs(u - want)) / scale if u.shape == want.shape else np.inf
                    check(err < 1e-10, f"{scheme} ({name}), {isteps} steps of 30x the explicit limit: the dense "
                          f"solve's answer (max relative error {err:.1e})")
                else:
                    check(np.array_equal(u, first), f"{scheme} ({name}) on {pg}: /u bitwise equal to the first grid's")
    check(np.max(np.abs(want - u0)) > 1e-2, f"{scheme}: the steps moved u (the check is not vacuous)")

# 3. The explicit limit: from the largest diagonal over every rank, checked before stepping.
for ranks, pg, factor, code, what in ((3, "1,3,1", 1 + 1e-12, 2, "just above"), (4, "2,2,1", 1 + 1e-12, 2, "just above"),
                                      (3, "1,3,1", 1 - 1e-12, 0, "just below")):
    out = f"lim_{code}_{pg.replace(',', '')}.h5"
    p = halo3d(ranks, *common, "--procs", pg, "--steps", "2", "--dt", repr(limit * factor), "--output", out,
               expect=code)
    if code:
        check(p.returncode == 2 and "above the explicit-Euler stability limit " + repr(limit) in p.stderr
              and not os.path.exists(os.path.join(work, out)),
              f"dt {what} 1/(alpha max diag) on {pg}: refused (exit 2) naming the limit, nothing written")
    else:
        check(p.returncode == 0, f"dt {what} 1/(alpha max diag) on {pg}: runs")
p = halo3d(0, "--grid", "8,8,8", "--dt", "0.001", "--steps", "2", "--output", "none")
check(p.returncode == 0, "dt 0.001 on 8^3 with k = 1: below 1/(6 * 81) and runs")
for spec in ("10", "expr:10"):
    p = halo3d(0, "--grid", "8,8,8", "--coefficient", spec, "--dt", "0.001", "--steps", "2", "--output", "k10.h5",
               expect=2)
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 2 and len(lines) == 1 and "stability limit " + repr(1 / 4860) in p.stderr
          and not os.path.exists(os.path.join(work, "k10.h5")),
          f"the same dt with --coefficient {spec} (limit 1/4860): one line, exit 2, nothing written: {p.stderr.strip()!r}")
p = halo3d(2, *common, "--dry-run")
check(f"time step dt = {dt!r}" in p.stdout, f"--dry-run prints dt = 0.9 / (alpha max diag) = {dt!r}")
p = halo3d(2, *common, "--dt", repr(limit * (1 + 1e-12)), "--dry-run", expect=2)
check("stability limit" in p.stderr, "--dry-run refuses the dt above the limit")

# 4. Restarts: bitwise continued; refused when the k file changed since the checkpoint.
rk = ["--grid", g, "--box", b, "--shift", str(shift), "--alpha", str(alpha), "--coefficient", "file:kr.h5:/d",
      "--initial", "file:u0.h5:/d", "--dt", repr(0.5 * limit)]
write("kr.h5", kappa)
for scheme in ("explicit", "crank-nicolson"):
    halo3d(1, *rk, "--time-scheme", scheme, "--tol", "1e-12", "--steps", "8", "--output", f"whole_{scheme}.h5")
    halo3d(2, *rk, "--time-scheme", scheme, "--tol", "1e-12", "--steps", "4", "--checkpoint", f"ck_{scheme}.h5",
           "--checkpoint-every", "4", "--output", "none")
    halo3d(3, *rk, "--time-scheme", scheme, "--tol", "1e-12", "--steps", "8", "--restart", f"ck_{scheme}.h5", "--output",
           f"rs_{scheme}.h5")
    check(np.array_equal(read(f"whole_{scheme}.h5")[0], read(f"rs_{scheme}.h5")[0]),
          f"{scheme}: a restart at step 4 on 3 ranks = one run on 1 (bitwise)")
for where, idx in (("inside", (4, 5, 6)), ("in its boundary layer only", (0, 3, 4))):
    changed = kappa.copy()
    changed[idx] *= 1.01
    write("kr.h5", changed)
    p = halo3d(2, *rk, "--steps", "8", "--restart", "ck_explicit.h5", "--output", "none", expect=2)
    check(p.returncode == 2 and "coefficient as read) differ" in p.stderr,
          f"restart after the k file changed {where}: refused: {p.stderr.strip()[:200]!r}")
write("kr.h5", kappa)
p = halo3d(2, *rk, "--steps", "8", "--restart", "ck_explicit.h5", "--output", "none")
check(p.returncode == 0, "restart with the k file as it was: continues")

if failures:
    print("FAILED:\n  " + "\n  ".join(f[:2000] for f in failures))
    sys.exit(1)
print("all heat coefficient checks passed")
