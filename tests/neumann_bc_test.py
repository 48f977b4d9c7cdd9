#!/usr/bin/env python3
"""--bc with Neumann faces through the program (tests/test_neumann.cpp checks the operator and
the right-hand side against a reference of the discretisation):
1. built-in modes (cos(pi k x/L) between two Neumann faces, cos / sin((k - 1/2) pi x/L) with a
   Dirichlet face at the other end) solved to their exact discrete answer (CG, MG-PCG in
   double and mixed, and Jacobi, 1-3 ranks, Neumann on 1-3 axes with Dirichlet and periodic
   ones, a shift; the singular all-Neumann case);
2. a linear u = 1 + 2x - y with fluxes on its Neumann faces and its values on the Dirichlet
   ones is reproduced to rounding (the fluxes' sign and area: a face of the domain, an edge),
   and heat (explicit, implicit, Crank-Nicolson) keeps it; heat's modes reach their exact
   discrete answer (the mass V_p); explicit heat with a lognormal k or a variable shift: its
   limit 1/(alpha max d_p/V_p) against numpy's (just above refused, just below runs) and its
   steps as numpy's u += alpha dt V^{-1} (-A u + b) on 1-4 ranks;
3. the output's `bc` attribute, the XDMF origin (0 on a Neumann low face);
4. refusals (exit 2, one line): a Neumann axis of 1 point, a
   mode that aliases, a variable shift 0 at every point with no Dirichlet face (on 3 ranks too,
   and one > 0 on one rank's points only runs), a malformed kind; a restart under other
   boundaries.
Run: neumann_bc_test.py HALO3D MPIEXEC."""
import os
import re
import sys
import xml.etree.ElementTree as ET

import h5py
import numpy as np

from h3test import Harness, text

T = Harness("neumann")
check, halo3d, read, work, failures = T.check, T.solve, T.read, T.work, T.failures

# 1. Modes: the exact discrete answer.
for ranks, bc, extra in ((1, "x=neumann", []),
                         (2, "x0=neumann,y1=neumann", ["--shift", "2"]),
                         (3, "x=neumann,y=periodic,z0=neumann", []),
                         (2, "x=neumann,y=neumann,z=neumann", []),
                         (3, "x=neumann,y0=neumann", ["--precond", "mg", "--tol", "1e-12"]),
                         (2, "x=neumann,y=neumann,z=neumann", ["--precond", "mg", "--precision", "mixed",
                                                               "--tol", "1e-12"]),
                         (3, "x=neumann,y=neumann,z=neumann", ["--shift", "1.5"]),
                         (2, "x1=neumann,z=neumann", ["--solver", "jacobi", "--max-iters", "20000",
                                                      "--tol", "1e-11"])):
    solver = [] if "--solver" in extra or "--precond" in extra else ["--precond", "none", "--tol", "1e-12"]
    p = halo3d(ranks, "--grid", "13,10,12", "--box", "1,2,1.5", "--bc", bc, "--mode", "1,2,3", "--mode", "2,1,1",
               *solver, *extra, "--output", "none", quiet=False)
    m = re.search(r"error vs exact discrete: l2 (\S+) max ([^;\s]+)", p.stdout)
    err = float(m.group(2)) if m else np.inf
    check(err < 1e-9, f"--bc {bc} {' '.join(extra)} on {ranks} ranks: modes' max error vs exact discrete {err:.1e}")

# 2. A linear field: u = 1 + 2x - y on [0,1]x[0,2]x[0,1.5], -lap u = 0: outward fluxes du/dn
# x0 -2, x1 +2, y0 +1, y1 -1, z 0 on Neumann faces, u's values on Dirichlet ones (a file's
# boundary layer: the flux in the slot beyond a Neumann face's boundary node).
def positions(n, L, lo_neumann, hi_neumann):
    m = n - 1 + (0 if lo_neumann else 1) + (0 if hi_neumann else 1)
    return (np.arange(n) + (0 if lo_neumann else 1)) * L / m


grid = (9, 8, 7)
box = (1.0, 2.0, 1.5)
for bc, neumann in (("x0=neumann", {(0, 0)}), ("x=neumann,y0=neumann", {(0, 0), (0, 1), (1, 0)}),
                    ("x0=neumann,y=neumann,z1=neumann", {(0, 0), (1, 0), (1, 1), (2, 1)})):
    xs = [positions(grid[a], box[a], (a, 0) in neumann, (a, 1) in neumann) for a in range(3)]
    # The boundary layer [NZ+2][NY+2][NX+2]: ghost positions 0 and L on Dirichlet faces,
    # the flux on Neumann faces (the value at the ghost slot beyond the boundary node).
    full = [np.concatenate(([0.0], xs[a], [box[a]])) for a in range(3)]
    Z, Y, X = np.meshgrid(full[2], full[1], full[0], indexing="ij")
    g = 1 + 2 * X - Y
    flux = {(0, 0): -2.0, (0, 1): 2.0, (1, 0): 1.0, (1, 1): -1.0, (2, 0): 0.0, (2, 1): 0.0}
    for (a, side) in neumann:
        sl = [slice(None)] * 3
        sl[2 - a] = 0 if side == 0 else -1
        g[tuple(sl)] = flux[(a, side)]
    T.write("g.h5", g, "g")
    p = halo3d(2, "--grid", "9,8,7", "--box", "1,2,1.5", "--bc", bc, "--rhs", "expr:0", "--boundary",
               "file:g.h5:/g", "--precond", "none", "--tol", "1e-14", "--max-iters", "5000", "--output", "lin.h5")
    u, attrs = read("lin.h5")
    Z, Y, X = np.meshgrid(xs[2], xs[1], xs[0], indexing="ij")
    exact = 1 + 2 * X - Y
    err = np.max(np.abs(u - exact)) if u.shape == exact.shape else np.inf
    check(err < 1e-10, f"--bc {bc}: the linear u = 1 + 2x - y with its fluxes and values back to {err:.1e}")
    check(attrs.get("bc") == bc, f"--bc {bc}: the output's bc attribute is {attrs.get('bc')!r}")
    # Heat from that steady state stays there (the fluxes' source and the mass V_p).
    for scheme in ("explicit", "implicit", "crank-nicolson"):
        halo3d(2, "--problem", "heat", "--time-scheme", scheme, "--steps", "10", "--grid", "9,8,7", "--box",
               "1,2,1.5", "--bc", bc, "--initial", "expr:1+2*x-y", "--boundary", "file:g.h5:/g", "--tol", "1e-13",
               "--output", "heat.h5")
        u = read("heat.h5")[0]
        err = np.max(np.abs(u - exact)) if u.shape == exact.shape else np.inf
        check(err < 1e-11, f"--bc {bc}: {scheme} heat keeps the steady u = 1 + 2x - y to {err:.1e}")

# Heat's modes: the exact discrete answer after the steps (mass V_p: M^{-1} A's eigenvalues).
for scheme in ("explicit", "implicit", "crank-nicolson"):
    for bc in ("x0=neumann,y=neumann,z=periodic", "x=neumann,y=neumann,z=neumann"):
        p = halo3d(2, "--problem", "heat", "--time-scheme", scheme, "--steps", "20", "--grid", "13,10,12", "--bc", bc,
                   "--mode", "1,2,3", "--mode", "2,1,1", "--shift", "1.5", "--tol", "1e-13", "--output", "none",
                   quiet=False)
        m = re.search(r"error at t vs exact discrete: l2 (\S+) max ([^;\s]+)", p.stdout)
        err = float(m.group(2)) if m else np.inf
        check(err < 1e-11, f"--bc {bc} {scheme} heat: modes' max error vs exact discrete {err:.1e}")

# Explicit heat with a variable k or shift: its limit 1/(alpha max_p d_p/V_p) (Gershgorin on
# M^{-1} A) from a numpy reference of the V-scaled rows (face weights as coefficients.cpp makes
# them, times the area fractions, 0 beyond a Neumann face; sigma V_p), a dt just above it
# refused (exit 2) naming it, just below it running, and the steps u += alpha dt V^{-1} (-A u + b)
# (b: the fluxes' area g/h) as numpy's.
def face_area(a, shape, grid, half):
    """The area factor of faces normal to axis a (1/2 in a Neumann plane of each other axis)."""
    area = np.ones(shape)
    for b in range(3):
        if b != a:
            sh = [1, 1, 1]
            sh[2 - b] = grid[b]
            area = area * half[b].reshape(sh)
    return area


def neumann_rows(k, sigma, grid, box, kinds):
    """(d, V, apply) of the V-scaled operator; k and sigma [NZ+2][NY+2][NX+2]; kinds[a] = (low
    Neumann, high Neumann) with Dirichlet (zero ghosts) elsewhere."""
    m = [grid[a] - 1 + (not kinds[a][0]) + (not kinds[a][1]) for a in range(3)]
    c = [1.0 / ((box[a] / m[a]) ** 2) for a in range(3)]
    plane = [np.array([(i == 0 and kinds[a][0]) or (i == grid[a] - 1 and kinds[a][1]) for i in range(grid[a])])
             for a in range(3)]
    half = [np.where(pl, 0.5, 1.0) for pl in plane]
    V = half[2][:, None, None] * half[1][None, :, None] * half[0][None, None, :]
    ws = []
    for a in range(3):  # faces between slots i and i + 1 along a (numpy axis 2 - a), the box's rows
        ax = 2 - a
        kin = k[tuple(slice(None) if b == ax else slice(1, -1) for b in range(3))]
        lo = kin[tuple(slice(None, -1) if b == ax else slice(None) for b in range(3))]
        hi = kin[tuple(slice(1, None) if b == ax else slice(None) for b in range(3))]
        w = (2.0 * lo) * (hi / (lo + hi)) * c[a]
        w = w * face_area(a, w.shape, grid, half)
        idx = [slice(None)] * 3
        if kinds[a][0]:
            idx[ax] = 0
            w[tuple(idx)] = 0.0
        if kinds[a][1]:
            idx[ax] = -1
            w[tuple(idx)] = 0.0
        ws.append(w)
    (wx, wy, wz) = ws
    sv = sigma[1:-1, 1:-1, 1:-1] * V
    d = (((wx[:, :, :-1] + wx[:, :, 1:]) + (wy[:, :-1, :] + wy[:, 1:, :])) + (wz[:-1] + wz[1:])) + sv

    def apply(u):
        p = np.pad(u, 1)
        return (d * u - (wx[:, :, :-1] * p[1:-1, 1:-1, :-2] + wx[:, :, 1:] * p[1:-1, 1:-1, 2:])
                - (wy[:, :-1, :] * p[1:-1, :-2, 1:-1] + wy[:, 1:, :] * p[1:-1, 2:, 1:-1])
                - (wz[:-1] * p[:-2, 1:-1, 1:-1] + wz[1:] * p[2:, 1:-1, 1:-1]))
    return d, V, apply, half, m


rng = np.random.default_rng(2505)
grid, box, alpha = (9, 8, 7), (1.0, 2.0, 1.5), 0.6
shape = (grid[2] + 2, grid[1] + 2, grid[0] + 2)
T.write("klog.h5", np.exp(rng.normal(0.0, 1.5, shape)))
T.write("sig.h5", rng.uniform(0.0, 30.0, shape))
T.write("u0.h5", rng.uniform(-1, 1, (grid[2], grid[1], grid[0])))
flux = {(0, 0): 0.3, (0, 1): -0.7, (1, 0): 1.1, (1, 1): 0.2, (2, 0): -0.4, (2, 1): 0.9}
for bc, kinds, kspec, sspec in (
        ("x0=neumann", ((1, 0), (0, 0), (0, 0)), "klog", "1.5"),
        ("x=neumann,y1=neumann", ((1, 1), (0, 1), (0, 0)), "klog", "sig"),
        ("x=neumann,y=neumann,z0=neumann", ((1, 1), (1, 1), (1, 0)), "1", "sig"),
        ("x=neumann,y=neumann,z=neumann", ((1, 1), (1, 1), (1, 1)), "klog", "sig"),
        ("x0=neumann,y=neumann,z1=neumann", ((1, 0), (1, 1), (0, 1)), "klog", "0")):
    with h5py.File(os.path.join(work, "klog.h5")) as f:
        k = f["d"][...] if kspec == "klog" else np.ones(shape)
    with h5py.File(os.path.join(work, "sig.h5")) as f:
        sig = f["d"][...] if sspec == "sig" else np.full(shape, float(sspec))
    with h5py.File(os.path.join(work, "u0.h5")) as f:
        u0 = f["d"][...]
    d, V, apply, half, m = neumann_rows(k, sig, grid, box, kinds)
    limit = 1.0 / (alpha * np.max(d / V))
    b = np.zeros(u0.shape)  # the Neumann faces' fluxes: area g / h on their boundary nodes
    for (a, side), g in flux.items():
        if kinds[a][side]:
            sl = [slice(None)] * 3
            sl[2 - a] = 0 if side == 0 else -1
            area = face_area(a, u0.shape, grid, half)
            b[tuple(sl)] += (area * g / (box[a] / m[a]))[tuple(sl)]
    boundary = ",".join(f"{'xyz'[a]}{side}={g}" for (a, side), g in flux.items() if kinds[a][side])
    common = ["--problem", "heat", "--grid", text(grid), "--box", text(box), "--bc", bc, "--alpha", str(alpha),
              "--coefficient", "file:klog.h5:/d" if kspec == "klog" else "1",
              "--shift", "file:sig.h5:/d" if sspec == "sig" else sspec, "--initial", "file:u0.h5:/d",
              "--boundary", boundary]
    what = f"explicit heat --bc {bc} --coefficient {kspec} --shift {sspec}"
    p = T.solve(3, *common, "--steps", "2", "--dt", repr(limit * (1 + 1e-12)), "--output", "none", expect=2)
    m2 = re.search(r"above the explicit-Euler stability limit (\S+) = ", p.stderr)
    got = float(m2.group(1)) if m2 else np.nan
    errors = [line for line in p.stderr.splitlines() if line.startswith("halo3d:")]
    check(p.returncode == 2 and len(errors) == 1 and abs(got - limit) <= 1e-14 * limit
          and "over the control volume's fraction V_p" in p.stderr,
          f"{what}: dt just above 1/(alpha max d/V) = {limit!r} refused (exit 2, one error line), limit {got!r}")
    p = T.solve(2, *common, "--dry-run", quiet=False)
    check(f"time step dt = {0.9 * limit!r}" in p.stdout, f"{what}: --dry-run prints dt = 0.9 of the limit")
    dt = limit * (1 - 1e-12)
    want = u0.copy()
    for _ in range(6):
        want = want + alpha * dt * (-apply(want) + b) / V
    for ranks, pg in ((1, "1,1,1"), (3, "1,3,1"), (4, "2,1,2")):
        T.solve(ranks, *common, "--procs", pg, "--steps", "6", "--dt", repr(dt), "--output", "eh.h5")
        u = read("eh.h5")[0]
        err = np.max(np.abs(u - want)) / np.max(np.abs(want)) if u.shape == want.shape else np.inf
        check(err < 1e-12, f"{what} on {pg}: dt just below the limit runs, 6 steps as numpy's to {err:.1e}")
    check(np.max(np.abs(want - u0)) > 1e-2, f"{what}: the steps moved u (the check is not vacuous)")

# 3. The XDMF origin: 0 on an axis with a Neumann low face (x), h behind a Dirichlet one
# (y: Dirichlet low, Neumann high, h = L/N; z: Dirichlet, h = L/(N+1)); the spacing h (x: L/N).
halo3d(1, "--grid", "9,8,7", "--box", "1,2,1.5", "--bc", "x0=neumann,y1=neumann", "--precond", "none",
       "--output", "o.h5")
xdmf = os.path.join(work, "o.xdmf")
got = [[float(v) for v in e.text.split()] for e in list(ET.parse(xdmf).iter("DataItem"))[:2]] if os.path.exists(xdmf) else []
want = [[1.5 / 8, 2.0 / 8, 0.0], [1.5 / 8, 2.0 / 8, 1.0 / 9]]
check(len(got) == 2 and np.allclose(got, want, rtol=1e-15, atol=0), f"XDMF origin and spacing (z y x) {got}, want {want}")

# 4. Refusals.
for args, needle in ((["--bc", "x0=neumann", "--precond", "none", "--grid", "1,8,8"],
                      "a Neumann axis needs at least 2 points"),
                     (["--bc", "x=neumann", "--precond", "none", "--mode", "8,1,1"], "Neumann axis x must be below"),
                     (["--bc", "x=neumann,y=neumann,z=neumann", "--precond", "none", "--shift", "expr:0*x"],
                      "sigma is 0 at every point and no face is Dirichlet"),
                     (["--bc", "x=neumannn"], "is not FACE=KIND")):
    grid = [] if "--grid" in args else ["--grid", "8,8,8"]
    p = halo3d(0, *grid, *args, "--output", "none", expect=2)
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 2 and len(lines) == 1 and needle in p.stderr, f"{' '.join(args)} refused: {p.stderr.strip()!r}")
# sigma = 0 everywhere with no Dirichlet face, decided on every rank's data together: refused on
# 3 ranks in one error line; sigma > 0 on the first rank's points only is nonsingular and runs.
nod = ["--grid", "12,8,8", "--procs", "3,1,1", "--bc", "x=neumann,y=periodic,z=neumann", "--output", "none"]
p = halo3d(3, *nod, "--shift", "expr:0*x", expect=2)
errors = [line for line in p.stderr.splitlines() if line.startswith("halo3d:")]
check(p.returncode == 2 and len(errors) == 1 and "sigma is 0 at every point" in p.stderr,
      f"sigma = 0 everywhere on 3 ranks refused in one line: {errors!r}")
p = halo3d(3, *nod, "--shift", "expr:(x<0.2)*2", "--rhs", "random", "--tol", "1e-10", quiet=False)
check(p.returncode == 0 and "converged" in p.stdout and "singular" not in p.stdout,
      "sigma > 0 on the first rank's points only: nonsingular, solved without removing a mean")
base = ["--grid", "9,8,7", "--rhs", "random", "--precond", "none", "--output", "none"]
halo3d(2, *base, "--bc", "z0=neumann", "--max-iters", "2", "--checkpoint", "c.h5", "--checkpoint-every", "1", expect=3)
for args in (["--bc", "dirichlet"], ["--bc", "z1=neumann"]):
    p = halo3d(2, *base, "--restart", "c.h5", *args, expect=2)
    check(p.returncode == 2 and "bc=z0=neumann" in p.stderr, f"restart with {' '.join(args)} refused: {p.stderr.strip()[:200]!r}")
p = halo3d(2, *base, "--restart", "c.h5", "--bc", "z0=neumann")
check(p.returncode == 0, "restart under the same boundaries continues")

sys.exit(T.finish("neumann: all checks passed"))
