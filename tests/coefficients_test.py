#!/usr/bin/env python3
"""--coefficient (-div(k grad u) + sigma u = f) through the program, against a plain numpy
reference of the discrete operator (face weight = harmonic mean of k at its two points /
h_d^2, the boundary layer's k on boundary faces, zero Dirichlet ghosts):
1. Jacobi steps bitwise equal to the reference's (the diagonal and the operator, with a
   box and a shift), on 1-4 ranks;
2. Poisson with f = A u* for a random u* and a random lognormal k from a file: u* back to
   rounding with MG-PCG (double and mixed) and CG, bitwise the same /u on every process grid;
3. multigrid stays robust: blocks of k = 1 and 1e4 (interfaces on and between coarse planes,
   Dirichlet, periodic and Neumann faces), and a smooth k of contrast 1e4,
   converge to 1e-8 in <= 15 iterations (the blocks between coarse planes: fewer);
4. the report and the attributes name the coefficient, and a restart with another is refused;
5. refusals: k <= 0, NaN or Inf anywhere (the boundary layer included), malformed specs,
   a wrong file shape: exit 2, one line.
Heat with k: heat_coefficient_test.py.
Run: coefficients_test.py HALO3D MPIEXEC"""
import json
import os
import sys

import numpy as np

from h3test import Harness, text, weights, diag_apply

T = Harness("coefficients")
check, halo3d, read, write, work, failures = T.check, T.solve, T.read, T.write, T.work, T.failures


rng = np.random.default_rng(11)
grid, box, shift = (13, 11, 9), (3.0, 1.0, 0.5), 2.5
g, b = text(grid), text(box)
shape = (grid[2] + 2, grid[1] + 2, grid[0] + 2)
kappa = np.exp(rng.normal(0.0, 1.0, shape))  # lognormal, boundary layer included
write("k.h5", kappa)
f = rng.uniform(-1, 1, (grid[2], grid[1], grid[0]))
write("f.h5", f)
procs = {1: ["1,1,1"], 2: ["2,1,1", "1,1,2"], 3: ["1,3,1"], 4: ["2,2,1", "1,2,2", "4,1,1"]}
common = ["--grid", g, "--box", b, "--shift", str(shift), "--coefficient", "file:k.h5:/d"]

# 1. Jacobi from 0: u1 = f / d, then u2 = u1 + (f - A u1) / d, bitwise.
d, _ = diag_apply(np.zeros_like(f), kappa, grid, box, shift)
u1 = f / d
u2 = u1 + (f - diag_apply(u1, kappa, grid, box, shift)[1]) / d
for ranks, grids in procs.items():
    for pg in grids:
        for steps, want in ((1, u1), (2, u2)):
            out = f"j{steps}_{pg.replace(',', '')}.h5"
            halo3d(ranks, *common, "--procs", pg, "--rhs", "file:f.h5:/d", "--solver", "jacobi",
                   "--max-iters", str(steps), "--output", out, expect=3)
            u = read(out)[0]
            check(u.shape == want.shape and np.array_equal(u, want),
                  f"Jacobi step {steps} on {pg}: bitwise the reference's (max diff {np.max(np.abs(u - want)):.1e})")

# 2. f = A u*: u* back to rounding, bitwise equal on every process grid.
ustar = rng.uniform(-1, 1, f.shape)
write("fa.h5", diag_apply(ustar, kappa, grid, box, shift)[1])
for name, extra in (("mg", []), ("mixed", ["--precision", "mixed"]), ("cg", ["--precond", "none"]),
                    ("mg distributed", ["--mg-gather", "0"]),
                    ("mixed distributed", ["--precision", "mixed", "--mg-gather", "0"])):
    first = None
    for ranks, grids in procs.items():
        for pg in grids:
            out = f"{name.replace(' ', '_')}_{pg.replace(',', '')}.h5"
            halo3d(ranks, *common, "--procs", pg, "--rhs", "file:fa.h5:/d", "--tol", "1e-13", *extra,
                   "--output", out)
            u = read(out)[0]
            if first is None:
                first = u
                err = np.max(np.abs(u - ustar)) if u.shape == ustar.shape else np.inf
                check(err < 1e-10, f"{name}: A u* = f solved back to u* (max error {err:.1e})")
            else:
                check(np.array_equal(u, first), f"{name} on {pg} ({ranks} ranks): /u bitwise equal to 1 rank")

# 2b. Boundary values: lifted with each boundary face's own weight. Jacobi's first step is
# b / d bitwise (b = f + w g, summed x, y, z, low side first), and with f = 0 and g = 1 the
# answer is 1 at every point whatever k (A 1 = 0 inside; the shift off).
x = [(box[a] * np.arange(n + 2)) / (n + 1) for a, n in enumerate(grid)]  # as coord() computes it
for a, n in enumerate(grid):
    x[a][-1] = box[a]  # the boundary layer sits at exactly 0 and L
zz, yy, xx = np.meshgrid(x[2], x[1], x[0], indexing="ij")
gfull = 1 + xx + 2 * yy + 3 * zz
wx, wy, wz = weights(kappa, grid, box)
lifted = f.copy()
for sl, w, gg in ((np.s_[:, :, 0], wx[:, :, 0], gfull[1:-1, 1:-1, 0]), (np.s_[:, :, -1], wx[:, :, -1], gfull[1:-1, 1:-1, -1]),
                  (np.s_[:, 0, :], wy[:, 0, :], gfull[1:-1, 0, 1:-1]), (np.s_[:, -1, :], wy[:, -1, :], gfull[1:-1, -1, 1:-1]),
                  (np.s_[0, :, :], wz[0, :, :], gfull[0, 1:-1, 1:-1]), (np.s_[-1, :, :], wz[-1, :, :], gfull[-1, 1:-1, 1:-1])):
    lifted[sl] = lifted[sl] + w * gg
for ranks, pg in ((1, "1,1,1"), (4, "2,2,1"), (3, "1,1,3")):
    out = f"jb_{pg.replace(',', '')}.h5"
    halo3d(ranks, *common, "--procs", pg, "--rhs", "file:f.h5:/d", "--boundary", "expr:1+x+2*y+3*z",
           "--solver", "jacobi", "--max-iters", "1", "--output", out, expect=3)
    u = read(out)[0]
    check(np.array_equal(u, lifted / d), f"boundary values lifted with the faces' own weights on {pg}: Jacobi's "
          f"first step bitwise b / d (max diff {np.max(np.abs(u - lifted / d)):.1e})")
first = None
for ranks, pg in ((1, "1,1,1"), (2, "1,2,1"), (4, "2,1,2")):
    out = f"one_{pg.replace(',', '')}.h5"
    halo3d(ranks, "--grid", g, "--box", b, "--coefficient", "file:k.h5:/d", "--procs", pg, "--rhs", "expr:0",
           "--boundary", "1", "--tol", "1e-13", "--output", out)
    u = read(out)[0]
    err = np.max(np.abs(u - 1))
    if first is None:
        first = u
        check(err < 1e-10, f"boundary 1, f = 0, lognormal k: u = 1 everywhere (max error {err:.1e})")
    else:
        check(np.array_equal(u, first), f"boundary 1 on {pg}: /u bitwise equal to 1 rank")

# 3. Robust multigrid: iterations to 1e-8.
for k, what in (("expr:(x<0.5 && y<0.5 && z<0.5) ? 1e4 : 1", "a block of 1e4 in 1"),
                ("expr:((x<0.5)+(y<0.5)+(z<0.5)==1 || (x<0.5)+(y<0.5)+(z<0.5)==3) ? 1e4 : 1",
                 "a checkerboard of 1 and 1e4"),
                ("expr:exp(4.6*sin(7*x)*cos(5*y)*sin(6*z+1))", "a smooth k of contrast 1e4")):
    for n in (31, 48):
        p = halo3d(2, "--grid", f"{n},{n},{n}", "--rhs", "random", "--coefficient", k, "--tol", "1e-8",
                   "--output", "none", "--report", "r.json")
        rep = json.load(open(os.path.join(work, "r.json"))) if p.returncode == 0 else {}
        its = rep.get("result", {}).get("iterations")
        check(its is not None and its <= 15, f"{what} at {n}^3: {its} iterations (<= 15)")

# Blocks whose interfaces fall between coarse planes, and a floating block: averaging k on the
# coarse levels took 15 (slab), 17 (L), 15 (periodic) and 20 (Neumann) iterations at 64^3;
# the Galerkin coarse faces 12, 15, 11 and 16. An inclusion away from every face (nothing
# holds its value but the soft material around it) took 15 at 63^3 and 24 at 64^3 while the
# coarsest 3^3 level was smoothed and the single point below it solved, 11 and 19 with the
# dense coarsest solve. The operator-dependent interpolation (--mg-interp operator) takes 7,
# 8, 9, 9, 8 and 8: its limits are one more, and below what trilinear interpolation takes.
octant = "expr:(x<0.5 && y<0.5 && z<0.5) ? 1e4 : 1"
inclusion = "expr:(abs(x-0.5)<0.2 && abs(y-0.5)<0.2 && abs(z-0.5)<0.2) ? 1e4 : 1"
for n, k, bc, limit, limit_op, what in (
        (64, "expr:(x<0.3) ? 1e4 : 1", "dirichlet", 13, 8, "a slab x < 0.3"),
        (64, "expr:(x<0.3 || (y>0.6 && z<0.4)) ? 1e4 : 1", "dirichlet", 15, 9, "an L"),
        (64, octant, "x=periodic,y=periodic,z=periodic", 12, 10, "the octant, periodic"),
        (64, octant, "x=neumann,y=neumann,z=neumann", 17, 10, "the octant, Neumann"),
        (63, inclusion, "dirichlet", 12, 9, "an inclusion"),
        (64, inclusion, "dirichlet", 20, 9, "an inclusion")):
    for interp, lim in (("trilinear", limit), ("operator", limit_op)):
        p = halo3d(2, "--grid", f"{n},{n},{n}", "--rhs", "random", "--coefficient", k, "--bc", bc,
                   "--tol", "1e-8", "--mg-interp", interp, "--output", "none", "--report", "r.json")
        rep = json.load(open(os.path.join(work, "r.json"))) if p.returncode == 0 else {}
        its = rep.get("result", {}).get("iterations")
        check(its is not None and its <= lim,
              f"{what} at {n}^3, --mg-interp {interp}: {its} iterations (<= {lim})")

# 4. The report, the attributes, and a checkpoint's identity.
halo3d(2, *common, "--rhs", "file:fa.h5:/d", "--output", "a.h5", "--report", "a.json")
rep = json.load(open(os.path.join(work, "a.json"))) if os.path.exists(os.path.join(work, "a.json")) else {}
check(rep.get("config", {}).get("coefficient") == "file:k.h5:/d", "the report's config names the coefficient")
check(read("a.h5")[1].get("coefficient") == "file:k.h5:/d", "the solution's attribute names the coefficient")
halo3d(2, *common, "--rhs", "random", "--max-iters", "2", "--checkpoint", "c.h5", "--checkpoint-every", "1",
       "--output", "none", expect=3)
p = halo3d(2, "--grid", g, "--box", b, "--shift", str(shift), "--coefficient", "2", "--rhs", "random",
           "--restart", "c.h5", "--output", "none", expect=2)
check(p.returncode == 2 and "coefficient=file:k.h5:/d" in p.stderr, f"restart with another coefficient refused: {p.stderr.strip()[:160]!r}")
p = halo3d(2, *common, "--rhs", "random", "--restart", "c.h5", "--output", "none")
check(p.returncode == 0, "restart with the same coefficient continues")
# --mg-interp operator changes a variable operator's iterates: a restart that adds it is
# refused; the constant operator's (k = 1, all faces Dirichlet) are the trilinear ones with it,
# so a checkpoint made with it restarts without it.
p = halo3d(2, *common, "--rhs", "random", "--restart", "c.h5", "--output", "none", "--mg-interp", "operator",
           expect=2)
check(p.returncode == 2 and ",operator" in p.stderr, f"restart adding --mg-interp operator refused: {p.stderr.strip()[:200]!r}")
const = ["--grid", g, "--box", b, "--shift", str(shift), "--rhs", "random", "--output", "none"]  # k = 1
halo3d(2, *const, "--max-iters", "2", "--checkpoint", "c2.h5", "--checkpoint-every", "1", "--mg-interp", "operator",
       expect=3)
p = halo3d(2, *const, "--restart", "c2.h5")
check(p.returncode == 0, f"constant k: a checkpoint made with --mg-interp operator restarts without it: {p.stderr.strip()[:200]!r}")

# 5. Refusals: one line, exit 2, before any solve.
bad = kappa.copy()
bad[0, 3, 4] = 0.0  # on the boundary layer
write("k0.h5", bad)
bad = kappa.copy()
bad[5, 5, 5] = np.nan
write("knan.h5", bad)
write("kshape.h5", kappa[1:-1, 1:-1, 1:-1])
for args, needle in ((["--coefficient", "0"], "--coefficient 0: must be a finite number > 0"),
                     (["--coefficient", "-1"], "must be a finite number > 0"),
                     (["--coefficient", "inf"], "--coefficient inf"),
                     (["--coefficient", "abc"], "expected a number, expr:FORMULA or file:PATH.h5:/DATASET"),
                     (["--coefficient", "expr:x-0.5"], "gives -0.5 at x=0,"),
                     (["--coefficient", "expr:1/(x-x)"], "k must be a finite number > 0"),
                     (["--coefficient", "expr:1+"], "--coefficient expr:1+"),
                     (["--coefficient", "file:k0.h5:/d"], "holds 0 at"),
                     (["--coefficient", "file:knan.h5:/d"], "holds NaN at"),
                     (["--coefficient", "file:kshape.h5:/d"], "[NZ+2][NY+2][NX+2]")):
    grid_args = ["--grid", g] if "file:" in args[1] else ["--grid", "8,8,8"]
    p = halo3d(0, *grid_args, *args, "--output", "none", expect=2)
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 2 and len(lines) == 1 and needle in p.stderr, f"{' '.join(args)} refused: {p.stderr.strip()!r}")

print(f"{len(failures)} failure(s)")
for fl in failures:
    print("FAIL:", fl[:2000])
sys.exit(1 if failures else 0)
