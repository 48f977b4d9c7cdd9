#!/usr/bin/env python3
"""Heat with Dirichlet boundary values (--problem heat --boundary ...) through the program,
under all three time schemes, against exact answers and a numpy reference:
- a constant boundary c with the initial state c stays c (explicit, implicit, crank-nicolson;
  1-4 ranks, several process grids, an odd grid);
- from a zero state with a boundary linear in x, y, z, backward Euler with large steps reaches
  that linear function (the steady state, exact for the 7-point operator); explicit steps from
  the linear function keep it;
- explicit steps equal numpy's u += alpha dt lap u with g in the ghost cells; implicit and
  Crank-Nicolson steps equal a dense solve of the theta scheme (tiny grid);
- results are bitwise the same on 1, 3 and 4 ranks; a restart continues bitwise; the HDF5
  attribute and the report record the boundary; a checkpoint with another boundary is refused.
Run: heat_boundary_test.py HALO3D MPIEXEC"""
import json
import os
import sys

import numpy as np

from h3test import Harness

T = Harness("heat-boundary", "--problem", "heat")
check, halo3d, read, work, failures = T.check, T.solve, T.read, T.work, T.failures


def coords(grid, ghosts=False):
    """x, y, z of every point as [NZ][NY][NX] arrays; point i at (i+1)/(N+1), ghosts -1 and N."""
    axes = [(np.arange(-1 if ghosts else 0, n + 1 if ghosts else n) + 1) / (n + 1) for n in grid]
    z, y, x = np.meshgrid(axes[2], axes[1], axes[0], indexing="ij")
    return x, y, z


def lap(U, grid):
    """lap_h of the interior of a ghost-padded [NZ+2][NY+2][NX+2] array (7 points)."""
    c = [(n + 1.0) ** 2 for n in grid]
    m = U[1:-1, 1:-1, 1:-1]
    return (c[0] * (U[1:-1, 1:-1, :-2] + U[1:-1, 1:-1, 2:] - 2 * m) +
            c[1] * (U[1:-1, :-2, 1:-1] + U[1:-1, 2:, 1:-1] - 2 * m) +
            c[2] * (U[:-2, 1:-1, 1:-1] + U[2:, 1:-1, 1:-1] - 2 * m))


grid = (13, 11, 9)
g = ",".join(map(str, grid))
x, y, z = coords(grid)
shapes = ((1, None), (2, "2,1,1"), (3, "1,3,1"), (4, "2,2,1"), (4, "1,2,2"))

# 1. A constant boundary with the same constant inside stays that constant, every scheme.
for scheme, extra in (("explicit", []), ("implicit", ["--dt", "0.01"]), ("crank-nicolson", ["--dt", "0.01"])):
    for ranks, procs in shapes:
        out = f"const_{scheme}_{ranks}_{procs}.h5"
        pr = ["--procs", procs] if procs else []
        halo3d(ranks, "--grid", g, "--time-scheme", scheme, *extra, *pr, "--steps", "10", "--initial", "expr:2.5",
               "--boundary", "2.5", "--tol", "1e-12", "--output", out)
        err = np.abs(read(out)[0] - 2.5).max()
        check(err < 1e-12, f"{scheme}: --boundary 2.5 from u = 2.5, {ranks} rank(s) {procs or 'auto'}: "
              f"max |u - 2.5| = {err:.1e}")

# 2. Linear boundary: backward Euler with large steps from zero reaches the linear function
# (each step damps the error by 1/(1 + alpha dt lambda_min) < 1e-3); explicit steps from the
# linear function keep it.
lin = "1+2*x-y+0.5*z"
exact = 1 + 2 * x - y + 0.5 * z
for ranks, procs in shapes:
    pr = ["--procs", procs] if procs else []
    out = f"lin_implicit_{ranks}_{procs}.h5"
    halo3d(ranks, "--grid", g, "--time-scheme", "implicit", "--dt", "10", "--steps", "6", *pr, "--initial", "expr:0",
           "--boundary", f"expr:{lin}", "--tol", "1e-12", "--output", out)
    err = np.abs(read(out)[0] - exact).max()
    check(err < 1e-9, f"implicit, dt 10, 6 steps from 0, boundary {lin}, {ranks} rank(s): max error {err:.1e}")
    out = f"lin_explicit_{ranks}_{procs}.h5"
    halo3d(ranks, "--grid", g, "--steps", "200", *pr, "--initial", f"expr:{lin}", "--boundary", f"expr:{lin}",
           "--output", out)
    err = np.abs(read(out)[0] - exact).max()
    check(err < 1e-12, f"explicit, 200 steps from the linear function, {ranks} rank(s): max error {err:.1e}")
# Still far from the steady state after a few steps: the test above is not vacuous.
halo3d(1, "--grid", g, "--time-scheme", "implicit", "--dt", "1e-4", "--steps", "2", "--initial", "expr:0",
       "--boundary", f"expr:{lin}", "--output", "lin_short.h5")
check(np.abs(read("lin_short.h5")[0] - exact).max() > 0.1, "implicit, 2 short steps: not yet the linear function")

# 3. Explicit steps against numpy: a heated face and a formula boundary, a non-trivial start.
for spec, gfun in (("x0=1", None), ("expr:sin(3*x)*cos(y)+z^2", lambda X, Y, Z: np.sin(3 * X) * np.cos(Y) + Z ** 2)):
    steps = 25
    halo3d(3, "--grid", g, "--steps", str(steps), "--alpha", "0.7", "--initial", "expr:x*y*(1-z)", "--boundary", spec,
           "--output", "ref.h5")
    u, attrs = read("ref.h5")
    dt = float(np.ravel(attrs.get("dt", [np.nan]))[0])
    X, Y, Z = coords(grid, ghosts=True)
    U = np.zeros_like(X)
    if gfun is None:
        U[:, :, 0] = 1.0
    else:
        U[...] = gfun(X, Y, Z)
    U[1:-1, 1:-1, 1:-1] = x * y * (1 - z)
    for _ in range(steps):
        U[1:-1, 1:-1, 1:-1] += 0.7 * dt * lap(U, grid)
    err = np.abs(u - U[1:-1, 1:-1, 1:-1]).max()
    check(err < 1e-12, f"explicit --boundary {spec}: {steps} steps = numpy reference, max difference {err:.1e}")
    check(attrs.get("boundary") == spec, f"HDF5 attribute boundary: {attrs.get('boundary')!r}")

# 4. Implicit and Crank-Nicolson steps against a dense solve of
# (I + theta c A_0) u' = (I - (1 - theta) c A_0) u + c B g on a tiny grid.
tiny = (5, 4, 3)
n = np.prod(tiny)
tx, ty, tz = coords(tiny)
A0 = np.zeros((n, n))
Bg = np.zeros(n)
gt = lambda X, Y, Z: 1 + X * X - 2 * Y * Z  # noqa: E731
for k in range(tiny[2]):
    for j in range(tiny[1]):
        for i in range(tiny[0]):
            r = (k * tiny[1] + j) * tiny[0] + i
            for a in range(3):
                c = (tiny[a] + 1.0) ** 2
                A0[r, r] += 2 * c
                for s in (-1, 1):
                    q = [i, j, k]
                    q[a] += s
                    if 0 <= q[a] < tiny[a]:
                        A0[r, (q[2] * tiny[1] + q[1]) * tiny[0] + q[0]] -= c
                    else:
                        pos = [(q[d] + 1) / (tiny[d] + 1) for d in range(3)]
                        Bg[r] += c * gt(*pos)
for scheme, theta in (("implicit", 1.0), ("crank-nicolson", 0.5)):
    dt, alpha, steps = 0.003, 1.3, 4
    halo3d(2, "--grid", ",".join(map(str, tiny)), "--time-scheme", scheme, "--dt", str(dt), "--alpha", str(alpha),
           "--steps", str(steps), "--initial", "expr:x-y", "--boundary", "expr:1+x^2-2*y*z", "--tol", "1e-14",
           "--output", f"tiny_{scheme}.h5")
    c = alpha * dt
    v = (tx - ty).ravel()
    for _ in range(steps):
        v = np.linalg.solve(np.eye(n) + theta * c * A0, v - (1 - theta) * c * A0 @ v + c * Bg)
    err = np.abs(read(f"tiny_{scheme}.h5")[0].ravel() - v).max()
    check(err < 1e-11, f"{scheme}: {steps} steps = dense solve of the theta scheme, max difference {err:.1e}")

# 5. Decomposition invariance (bitwise) for every scheme, and restart identity.
for scheme, extra in (("explicit", []), ("implicit", ["--dt", "0.002"]), ("crank-nicolson", ["--dt", "0.002"])):
    outs = []
    for ranks, procs in ((1, "1,1,1"), (3, "3,1,1"), (4, "2,1,2")):
        outs.append(f"inv_{scheme}_{ranks}.h5")
        halo3d(ranks, "--grid", g, "--time-scheme", scheme, *extra, "--steps", "12", "--procs", procs,
               "--initial", "random", "--boundary", "x0=1,y1=-0.5,z0=2", "--output", outs[-1])
    u1 = read(outs[0])[0]
    check(all(np.array_equal(u1, read(o)[0]) for o in outs[1:]),
          f"{scheme} with boundary values: 1, 3 (3,1,1) and 4 (2,1,2) ranks bitwise equal")
    halo3d(2, "--grid", g, "--time-scheme", scheme, *extra, "--steps", "6", "--initial", "random", "--boundary",
           "x0=1,y1=-0.5,z0=2", "--checkpoint", f"ck_{scheme}.h5", "--checkpoint-every", "6", "--output", "none")
    halo3d(4, "--grid", g, "--time-scheme", scheme, *extra, "--steps", "12", "--initial", "random", "--boundary",
           "x0=1,y1=-0.5,z0=2", "--restart", f"ck_{scheme}.h5", "--output", f"rs_{scheme}.h5")
    check(np.array_equal(u1, read(f"rs_{scheme}.h5")[0]), f"{scheme}: restart at step 6 on 4 ranks = one run (bitwise)")
p = halo3d(2, "--grid", g, "--steps", "12", "--initial", "random", "--boundary", "x0=2", "--restart",
           "ck_explicit.h5", "--output", "none", expect=2)
check("boundary is 'x0=1,y1=-0.5,z0=2' in the checkpoint" in p.stderr,
      f"restart with another boundary refused: {p.stderr.strip()[:160]!r}")

# 6. The report records the boundary; no exact answer is claimed.
halo3d(2, "--grid", g, "--time-scheme", "crank-nicolson", "--dt", "0.01", "--steps", "3", "--boundary", "x0=1",
       "--output", "rep.h5", "--report", "rep.json")
rj = os.path.join(work, "rep.json")
rep = json.load(open(rj)) if os.path.exists(rj) else {}
fb = rep.get("fields", {}).get("boundary", {})
check(fb.get("kind") == "faces" and fb.get("faces", {}).get("x0") == 1 and fb.get("faces", {}).get("x1") == 0
      and rep.get("config", {}).get("boundary") == "x0=1", f"report fields.boundary and config: {fb}")
check(rep.get("result", {}).get("max_error", 0) is None, "report: no exact answer with boundary values")
_, attrs = read("rep.h5")
check(attrs.get("boundary") == "x0=1" and np.isnan(np.ravel(attrs.get("max_error", [0.0]))[0]),
      f"HDF5 attributes boundary {attrs.get('boundary')!r}, max_error NaN")

if failures:
    print("FAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("all heat boundary checks passed")
