#!/usr/bin/env python3
"""--box and --shift through the program, against a plain numpy reference of the discrete
operator (-lap_h u + sigma u on [0,LX]x[0,LY]x[0,LZ], spacing L_d/(N_d+1), zero Dirichlet
ghosts):
1. explicit heat steps bitwise equal to the reference's (the stencil's weights and order);
2. Poisson with f = A u* for a random u*: u* back to rounding, MG-PCG, CG and mixed, 1-4
   ranks on several process grids, bitwise the same /u on every grid;
3. second-order convergence to a continuous solution on a non-cubic box with a shift;
4. semi-coarsening keeps elongated cells' iteration count (--box 4,1,1, 1,8,1);
5. formulas in the box's coordinates; the report and the attributes name box and shift;
6. refusals: bad sides and shifts (exit 2, one line), a restart with another box or shift.
Run: operators_test.py HALO3D MPIEXEC"""
import json
import os
import sys

import h5py
import numpy as np

from h3test import Harness, text

T = Harness("operators")
check, halo3d, read, work, failures = T.check, T.solve, T.read, T.work, T.failures


def spacing(grid, box):
    return [box[d] / (grid[d] + 1) for d in range(3)]


def apply_a(u, grid, box, shift):
    """The discrete operator as halo3d's point update writes it: weights c_d = 1/(h_d*h_d),
    diag = 2*(cx+cy+cz) + shift, diag*u - cx*(W+E) - cy*(S+N) - cz*(B+T), left to right."""
    h = spacing(grid, box)
    c = [1.0 / (hd * hd) for hd in h]
    diag = 2.0 * (c[0] + c[1] + c[2]) + shift
    p = np.pad(u, 1)  # zero Dirichlet ghosts; arrays are [z][y][x]
    w, e = p[1:-1, 1:-1, :-2], p[1:-1, 1:-1, 2:]
    s, n = p[1:-1, :-2, 1:-1], p[1:-1, 2:, 1:-1]
    b, t = p[:-2, 1:-1, 1:-1], p[2:, 1:-1, 1:-1]
    return diag * u - c[0] * (w + e) - c[1] * (s + n) - c[2] * (b + t)


def coords(grid, box):
    axes = [(np.arange(n) + 1) * (box[d] / (n + 1)) for d, n in enumerate(grid)]
    z, y, x = np.meshgrid(axes[2], axes[1], axes[0], indexing="ij")
    return x, y, z


rng = np.random.default_rng(7)
grid, box, shift = (13, 11, 9), (3.0, 1.0, 0.5), 7.5
g, b = text(grid), text(box)

# 1. Explicit heat: u_{n+1} = u_n - alpha dt A u_n, bitwise.
u0 = rng.uniform(-1, 1, (grid[2], grid[1], grid[0]))
with h5py.File(os.path.join(work, "u0.h5"), "w") as f:
    f["u"] = u0
halo3d(1, "--problem", "heat", "--grid", g, "--box", b, "--shift", str(shift), "--initial", "file:u0.h5:/u",
       "--steps", "7", "--alpha", "0.5", "--output", "heat.h5")
u, at = read("heat.h5")
ref = u0.copy()
if at:
    ad = 0.5 * float(at["dt"])
    for _ in range(7):
        ref = ref - ad * apply_a(ref, grid, box, shift)
    h = spacing(grid, box)
    check(float(at["dt"]) == 0.9 / (0.5 * (2 * sum(1 / (hd * hd) for hd in h) + shift)),
          "heat's default dt is 0.9/(alpha*diag) with the box's spacing and the shift")
check(np.array_equal(u, ref), f"explicit heat on --box {b} --shift {shift}: 7 steps bitwise equal to the "
      f"numpy reference (max diff {np.max(np.abs(u - ref)):.3e})")
for r, procs in ((2, "2,1,1"), (3, "1,3,1"), (4, "1,2,2")):
    halo3d(r, "--problem", "heat", "--grid", g, "--box", b, "--shift", str(shift), "--initial", "file:u0.h5:/u",
           "--steps", "7", "--alpha", "0.5", "--procs", procs, "--output", f"heat{r}.h5")
    check(np.array_equal(read(f"heat{r}.h5")[0], u), f"explicit heat bitwise equal on process grid {procs}")

# 2. Poisson: f = A u* for a random u*; the solvers give u* back.
ustar = rng.uniform(-1, 1, (grid[2], grid[1], grid[0]))
with h5py.File(os.path.join(work, "f.h5"), "w") as f:
    f["f"] = apply_a(ustar, grid, box, shift)
scale = np.max(np.abs(ustar))
first = {}
for r, procs in ((1, "1,1,1"), (2, "1,2,1"), (3, "3,1,1"), (4, "2,2,1"), (4, "1,2,2")):
    for extra in (["--mg-gather", "0"], ["--mg-gather", "0", "--precision", "mixed"],
                  ["--precond", "none"]):
        name = f"p{r}{procs.replace(',', '')}{len(extra)}{extra[-1]}.h5"
        halo3d(r, "--grid", g, "--box", b, "--shift", str(shift), "--rhs", "file:f.h5:/f", "--tol", "1e-13",
               "--procs", procs, *extra, "--output", name)
        u, at = read(name)
        key = " ".join(extra)
        err = np.max(np.abs(u - ustar)) / scale
        if procs == "1,1,1":
            first[key] = u
            check(err < 1e-10, f"{key}: random u* back from f = A u* to {err:.2e} (box {b}, shift {shift})")
        else:
            check(np.array_equal(u, first[key]), f"{key}: /u on {r} ranks ({procs}) bitwise equal to 1 rank")

# 3. Second order against sin(pi x/LX) sin(2 pi y/LY) sin(pi z/LZ) on a non-cubic box.
box3, shift3 = (2.0, 1.0, 0.5), 3.0
errs = []
for n in (15, 31):
    gr = (n, n, n)
    halo3d(1, "--grid", text(gr), "--box", text(box3), "--shift", str(shift3), "--mode", "1,2,1", "--tol", "1e-12",
           "--output", f"conv{n}.h5", "--report", f"conv{n}.json")
    x, y, z = coords(gr, box3)
    exact = np.sin(np.pi * x / box3[0]) * np.sin(2 * np.pi * y / box3[1]) * np.sin(np.pi * z / box3[2])
    u, at = read(f"conv{n}.h5")
    errs.append(np.max(np.abs(u - exact)))
    if at:
        check(abs(float(at["max_error_continuous"]) - errs[-1]) <= 1e-6 * errs[-1],
              f"{n}^3: the reported continuous error {float(at['max_error_continuous']):.4e} is numpy's {errs[-1]:.4e}")
        check(float(at["max_error"]) < 1e-9, f"{n}^3: error against the exact discrete answer {float(at['max_error']):.1e}")
ratio = errs[0] / errs[1]
check(3.6 < ratio < 4.4, f"second order on box {text(box3)} with shift {shift3}: errors {errs[0]:.3e}, "
      f"{errs[1]:.3e}, ratio {ratio:.2f}")

# 4. Elongated cells: the iteration count stays the unit cube's (semi-coarsening).
counts = {}
for bx in ("1,1,1", "4,1,1", "1,8,1"):
    halo3d(1, "--grid", "48,48,48", "--box", bx, "--rhs", "random", "--tol", "1e-8", "--output", "none",
           "--report", f"it{bx.replace(',', '')}.json")
    path = os.path.join(work, f"it{bx.replace(',', '')}.json")
    counts[bx] = json.load(open(path))["result"]["iterations"] if os.path.exists(path) else None
check(None not in counts.values() and counts["4,1,1"] <= counts["1,1,1"] + 2 and counts["1,8,1"] <= counts["1,1,1"] + 2,
      f"MG-PCG iterations to 1e-8 at 48^3: {counts}")

# 5. Formulas use the box's coordinates: --rhs expr equal to the modes field, and a
# boundary linear in x, y, z gives that function (shift 0) at every point.
halo3d(2, "--grid", g, "--box", b, "--rhs", f"expr:pi^2*(1/{box[0]}^2+1/{box[1]}^2+1/{box[2]}^2)*"
       f"sin(pi*x/{box[0]})*sin(pi*y/{box[1]})*sin(pi*z/{box[2]})", "--tol", "1e-12", "--output", "expr.h5")
halo3d(2, "--grid", g, "--box", b, "--tol", "1e-12", "--output", "modes.h5", "--report", "modes.json")
ue, um = read("expr.h5")[0], read("modes.h5")[0]
check(np.max(np.abs(ue - um)) < 1e-10, f"expr: in box coordinates solves as --rhs modes ({np.max(np.abs(ue - um)):.1e})")
halo3d(2, "--grid", g, "--box", b, "--rhs", "expr:0", "--boundary", "expr:1+x+2*y+3*z", "--tol", "1e-13",
       "--output", "lin.h5")
x, y, z = coords(grid, box)
ul = read("lin.h5")[0]
check(np.max(np.abs(ul - (1 + x + 2 * y + 3 * z))) < 1e-9,
      f"a linear boundary on box {b} gives the linear function ({np.max(np.abs(ul - (1 + x + 2 * y + 3 * z))):.1e})")
_, at = read("modes.h5")
rep = json.load(open(os.path.join(work, "modes.json"))) if os.path.exists(os.path.join(work, "modes.json")) else {}
check(at and list(at["box"]) == list(box) and float(at["shift"]) == 0.0 and
      np.allclose(at["spacing"], spacing(grid, box), rtol=0, atol=0), f"attributes box, shift, spacing: {at.get('box')}")
check(rep.get("config", {}).get("box") == list(box) and rep["config"].get("shift") == 0.0, "the report's config has box and shift")
xdmf = open(os.path.join(work, "modes.xdmf")).read() if os.path.exists(os.path.join(work, "modes.xdmf")) else ""
h = spacing(grid, box)
check(f"{h[2]!r} {h[1]!r} {h[0]!r}".replace("'", "") in xdmf or f"{h[2]:.17g} {h[1]:.17g} {h[0]:.17g}" in xdmf,
      "the XDMF sidecar's spacing is the box's")

# 6. Refusals: one line, exit 2, before any solve.
for args, needle in ((["--box", "0,1,1"], "--box 0,1,1: every side must be a finite number > 0"),
                     (["--box", "-1,1,1"], "every side must be"),
                     (["--box", "nan,1,1"], "every side must be"),
                     (["--box", "1,1"], "--box"),
                     (["--box", "1e-200,1,1"], "outside double's normal range"),
                     (["--box", "1e300,1,1"], "outside double's normal range"),
                     (["--shift", "-1"], "--shift -1: must be a finite number >= 0"),
                     (["--shift", "inf"], "--shift"),
                     (["--shift", "nan"], "--shift")):
    p = halo3d(0, "--grid", "8,8,8", *args, "--output", "none", expect=2)
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 2 and len(lines) == 1 and needle in p.stderr, f"{' '.join(args)} refused: {p.stderr.strip()!r}")
halo3d(2, "--grid", g, "--box", b, "--shift", "2", "--rhs", "random", "--max-iters", "2", "--checkpoint", "c.h5",
       "--checkpoint-every", "1", "--output", "none", expect=3)
for args, needle in ((["--box", "1,1,1", "--shift", "2"], "operator is 'box=3,1,0.5 shift=2' in the checkpoint"),
                     (["--box", b, "--shift", "2.5"], "operator is 'box=3,1,0.5 shift=2' in the checkpoint")):
    p = halo3d(2, "--grid", g, "--rhs", "random", "--restart", "c.h5", "--output", "none", *args, expect=2)
    check(p.returncode == 2 and needle in p.stderr, f"restart with {' '.join(args)} refused: {p.stderr.strip()[:160]!r}")
p = halo3d(2, "--grid", g, "--box", b, "--shift", "2", "--rhs", "random", "--restart", "c.h5", "--output", "none")
check(p.returncode == 0, "restart with the same box and shift continues")

print(f"{len(failures)} failure(s)")
for f in failures:
    print("FAIL:", f[:2000])
sys.exit(1 if failures else 0)
