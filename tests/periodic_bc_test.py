#!/usr/bin/env python3
"""--bc periodic axes through the program, against a plain numpy reference of the discrete
operator (-lap_h u + sigma u; a periodic axis has N points at i L/N, h = L/N, and wraps; the
other axes are Dirichlet with zero ghosts):
1. explicit heat steps bitwise equal to the reference's, on 1-4 ranks (2-3 along a periodic
   axis);
2. Poisson with f = A u* for a random u*: u* back to rounding with MG-PCG (double, mixed,
   --fmg, distributed coarse levels --mg-gather 0), CG (--precond none) and Jacobi's sweeps,
   1, 2 and 3 periodic axes (odd and even N) mixed with Dirichlet, /u bitwise the same on
   every process grid of 1-4 ranks (1-3 along a periodic axis);
2b. a variable k (and a variable shift) on periodic axes: k's ghosts there are the wrapped
   points' (a file's boundary layer on those axes ignored): Jacobi steps bitwise the
   reference's, u* back from f = A u* with MG-PCG (double, mixed, distributed) and CG, /u
   bitwise on every process grid;
3. built-in modes sin(2 pi k x/L): the exact discrete answer to rounding (Poisson, explicit and
   implicit heat, the implicit schemes with and without the multigrid); formulas in the
   wrapped coordinates; implicit heat with the multigrid bitwise on every process grid;
3b. the singular case (every axis periodic, no shift): the source's mean removed and reported
   (stdout, the report's result.source_mean_removed), the zero-mean answer, on every process
   grid bitwise, MG-PCG's variants and CG, iterations within one of all-Dirichlet's;
4. refusals (exit 2, one line): one face only, a malformed item, all-periodic with a
   variable shift that is 0 at every point, a restart under other boundaries.
Run: periodic_bc_test.py HALO3D MPIEXEC"""
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

import h5py
import numpy as np

from h3test import Harness, text

T = Harness("periodic")
check, halo3d, read, work, failures = T.check, T.solve, T.read, T.work, T.failures


def spacing(grid, box, per):
    return [box[d] / (grid[d] + (0 if per[d] else 1)) for d in range(3)]


def wrapped_k(k, per):
    """k [NZ+2][NY+2][NX+2] as the program holds it: on a periodic axis the boundary layer
    replaced by the wrapped points (axis by axis, so edges and corners wrap too)."""
    k = k.copy()
    for d in range(3):
        if per[d]:
            ax = 2 - d
            lo = [slice(None)] * 3
            hi = [slice(None)] * 3
            src_lo = [slice(None)] * 3
            src_hi = [slice(None)] * 3
            lo[ax], hi[ax], src_lo[ax], src_hi[ax] = 0, -1, -2, 1
            k[tuple(lo)] = k[tuple(src_lo)]
            k[tuple(hi)] = k[tuple(src_hi)]
    return k


def diag_apply_k(u, k, grid, box, sigma, per):
    """(d, A u) of the variable operator as coefficients.cpp and ops::apply_variable make it:
    face weight (2 p) (q / (p + q)) / h^2, d = ((ww + we) + (ws + wn)) + (wb + wt) + sigma,
    left to right; periodic axes: h = L/N, k and u wrapped."""
    h = spacing(grid, box, per)
    c = [1.0 / (hd * hd) for hd in h]
    k = wrapped_k(k, per)
    kin = k[1:-1, 1:-1, :]
    wx = (2.0 * kin[:, :, :-1]) * (kin[:, :, 1:] / (kin[:, :, :-1] + kin[:, :, 1:])) * c[0]
    kin = k[1:-1, :, 1:-1]
    wy = (2.0 * kin[:, :-1, :]) * (kin[:, 1:, :] / (kin[:, :-1, :] + kin[:, 1:, :])) * c[1]
    kin = k[:, 1:-1, 1:-1]
    wz = (2.0 * kin[:-1, :, :]) * (kin[1:, :, :] / (kin[:-1, :, :] + kin[1:, :, :])) * c[2]
    ww, we, ws, wn, wb, wt = wx[:, :, :-1], wx[:, :, 1:], wy[:, :-1, :], wy[:, 1:, :], wz[:-1], wz[1:]
    d = (((ww + we) + (ws + wn)) + (wb + wt)) + sigma
    p = u
    for a in range(3):
        width = [(0, 0)] * 3
        width[2 - a] = (1, 1)
        p = np.pad(p, width, mode="wrap" if per[a] else "constant")
    au = (d * u - (ww * p[1:-1, 1:-1, :-2] + we * p[1:-1, 1:-1, 2:])
          - (ws * p[1:-1, :-2, 1:-1] + wn * p[1:-1, 2:, 1:-1])
          - (wb * p[:-2, 1:-1, 1:-1] + wt * p[2:, 1:-1, 1:-1]))
    return d, au


def apply_a(u, grid, box, shift, per):
    """halo3d's point update: c_d = 1/(h_d*h_d), diag = 2*(cx+cy+cz) + shift,
    diag*u - cx*(W+E) - cy*(S+N) - cz*(B+T), left to right; periodic axes' ghosts wrap."""
    h = spacing(grid, box, per)
    c = [1.0 / (hd * hd) for hd in h]
    diag = 2.0 * (c[0] + c[1] + c[2]) + shift
    p = u
    for d in range(3):  # arrays are [z][y][x]: axis d is array axis 2-d
        width = [(0, 0)] * 3
        width[2 - d] = (1, 1)
        p = np.pad(p, width, mode="wrap" if per[d] else "constant")
    w, e = p[1:-1, 1:-1, :-2], p[1:-1, 1:-1, 2:]
    s, n = p[1:-1, :-2, 1:-1], p[1:-1, 2:, 1:-1]
    b, t = p[:-2, 1:-1, 1:-1], p[2:, 1:-1, 1:-1]
    return diag * u - c[0] * (w + e) - c[1] * (s + n) - c[2] * (b + t)


def bc(per):
    return ",".join(f"{'xyz'[d]}=periodic" for d in range(3) if per[d]) or "dirichlet"


def exact_error(stdout):
    m = re.search(r"error (?:at t )?vs exact discrete: l2 (\S+) max ([^\s;]+)", stdout)
    return float(m.group(2)) if m else float("nan")


rng = np.random.default_rng(11)
grid, box = (12, 10, 9), (3.0, 1.0, 0.5)
g, b = text(grid), text(box)

# 1. Explicit heat: u_{n+1} = u_n - alpha dt A u_n, bitwise, x and z periodic.
per, shift = (True, False, True), 1.5
u0 = rng.uniform(-1, 1, (grid[2], grid[1], grid[0]))
with h5py.File(os.path.join(work, "u0.h5"), "w") as f:
    f["u"] = u0
heat = ["--problem", "heat", "--grid", g, "--box", b, "--shift", str(shift), "--bc", bc(per),
        "--initial", "file:u0.h5:/u", "--steps", "7", "--alpha", "0.5"]
halo3d(1, *heat, "--output", "heat.h5")
u, at = read("heat.h5")
ref = u0.copy()
if at:
    ad = 0.5 * float(at["dt"])
    for _ in range(7):
        ref = ref - ad * apply_a(ref, grid, box, shift, per)
    h = spacing(grid, box, per)
    want = 0.9 / (0.5 * (2 * sum(1 / (hd * hd) for hd in h) + shift))
    check(abs(float(at["dt"]) - want) <= 4e-16 * want,
          "heat's default dt is 0.9/(alpha*diag) with h = L/N on the periodic axes")
check(np.array_equal(u, ref), f"explicit heat, --bc {bc(per)}: 7 steps bitwise equal to the numpy "
      f"reference (max diff {np.max(np.abs(u - ref)):.3e})")
for r, procs in ((2, "2,1,1"), (3, "1,1,3"), (3, "3,1,1"), (4, "2,1,2"), (4, "1,2,2")):
    halo3d(r, *heat, "--procs", procs, "--output", f"heat{r}{procs[0]}.h5")
    check(np.array_equal(read(f"heat{r}{procs[0]}.h5")[0], u), f"explicit heat bitwise equal on process grid {procs}")

# 2. Poisson: f = A u* for a random u*; MG-PCG (its variants), CG without a preconditioner
# and Jacobi give u* back.
for per, shift in (((True, False, False), 0.0), ((False, True, True), 0.0), ((True, True, True), 2.0)):
    ustar = rng.uniform(-1, 1, (grid[2], grid[1], grid[0]))
    with h5py.File(os.path.join(work, "f.h5"), "w") as f:
        f["f"] = apply_a(ustar, grid, box, shift, per)
    scale = np.max(np.abs(ustar))
    first = {}
    for r, procs in ((1, "1,1,1"), (2, "2,1,1"), (2, "1,2,1"), (3, "1,3,1"), (3, "3,1,1"), (4, "2,2,1"), (4, "1,2,2")):
        for which, extra in enumerate((["--precond", "none", "--tol", "1e-13"], ["--solver", "jacobi", "--iters", "40"],
                                       ["--tol", "1e-13"], ["--precision", "mixed", "--tol", "1e-13"],
                                       ["--fmg", "--tol", "1e-13"], ["--mg-gather", "0", "--tol", "1e-13"])):
            name = f"p{r}{procs.replace(',', '')}{which}.h5"
            halo3d(r, "--grid", g, "--box", b, "--shift", str(shift), "--bc", bc(per), "--rhs", "file:f.h5:/f",
                   "--procs", procs, *extra, "--output", name)
            u, at = read(name)
            key = f"--bc {bc(per)} --shift {shift} {' '.join(extra)}"
            if procs == "1,1,1":
                first[which] = u
                if extra[1] == "jacobi":  # 40 sweeps: a fixed number, compared across grids only
                    continue
                err = np.max(np.abs(u - ustar)) / scale
                check(err < 1e-10, f"{key}: random u* back from f = A u* to {err:.2e}")
            else:
                check(np.array_equal(u, first[which]), f"{key}: /u on {r} ranks ({procs}) bitwise equal to 1 rank")
    if per == (True, False, False):
        at = read("p11110.h5")[1]
        check(at.get("bc") == "x=periodic", f"the output's attribute bc names the periodic axis: {at.get('bc')!r}")

# 2b. A variable k on periodic axes: a lognormal k from a file whose boundary layer on the
# periodic axes is 1e3 (ignored there: the ghosts hold the wrapped points' k).
kgrid = (10, 9, 7)
kg = text(kgrid)
kshape = (kgrid[2] + 2, kgrid[1] + 2, kgrid[0] + 2)
for per, sigma in (((True, False, True), 0.0), ((False, True, False), "file"), ((True, True, True), 1.5)):
    kappa = np.exp(rng.normal(0.0, 1.0, kshape))
    for d in range(3):
        if per[d]:
            idx = [slice(None)] * 3
            for end in (0, -1):
                idx[2 - d] = end
                kappa[tuple(idx)] = 1e3
    sig = rng.uniform(0, 50, kshape) if sigma == "file" else float(sigma)
    with h5py.File(os.path.join(work, "k.h5"), "w") as f:
        f["k"] = kappa
        f["s"] = sig if sigma == "file" else np.zeros(kshape)
    sig_in = sig[1:-1, 1:-1, 1:-1] if sigma == "file" else sig
    ustar = rng.uniform(-1, 1, (kgrid[2], kgrid[1], kgrid[0]))
    fk = rng.uniform(-1, 1, ustar.shape)
    with h5py.File(os.path.join(work, "fk.h5"), "w") as f:
        f["f"] = diag_apply_k(ustar, kappa, kgrid, box, sig_in, per)[1]
        f["j"] = fk
    kcommon = ["--grid", kg, "--box", b, "--bc", bc(per), "--coefficient", "file:k.h5:/k",
               "--shift", "file:k.h5:/s" if sigma == "file" else str(sigma)]
    key = f"--bc {bc(per)} k from a file, shift {sigma}"
    # Jacobi from 0: u1 = f / d, u2 = u1 + (f - A u1) / d, bitwise the reference's.
    dk, _ = diag_apply_k(np.zeros_like(fk), kappa, kgrid, box, sig_in, per)
    u2 = fk / dk + (fk - diag_apply_k(fk / dk, kappa, kgrid, box, sig_in, per)[1]) / dk
    for r, procs in ((1, "1,1,1"), (3, "3,1,1"), (3, "1,1,3"), (4, "2,2,1")):
        halo3d(r, *kcommon, "--procs", procs, "--rhs", "file:fk.h5:/j", "--solver", "jacobi", "--max-iters", "2",
               "--output", "kj.h5", expect=3)
        u = read("kj.h5")[0]
        check(u.shape == u2.shape and np.array_equal(u, u2), f"{key}: 2 Jacobi steps on {procs} bitwise the "
              f"reference's (max diff {np.max(np.abs(u - u2)) if u.shape == u2.shape else np.inf:.1e})")
    for name, extra in (("mg", []), ("mixed", ["--precision", "mixed"]), ("mg distributed", ["--mg-gather", "0"]),
                        ("cg", ["--precond", "none"])):
        first = None
        for r, procs in ((1, "1,1,1"), (2, "2,1,1"), (2, "1,2,1"), (3, "1,1,3"), (4, "2,1,2"), (4, "1,2,2")):
            out = f"k{r}{procs.replace(',', '')}.h5"
            halo3d(r, *kcommon, "--procs", procs, "--rhs", "file:fk.h5:/f", "--tol", "1e-13", *extra, "--output", out)
            u = read(out)[0]
            if first is None:
                first = u
                err = np.max(np.abs(u - ustar)) if u.shape == ustar.shape else np.inf
                check(err < 1e-9, f"{key} {name}: u* back from f = A u* to {err:.1e}")
            else:
                check(np.array_equal(u, first), f"{key} {name}: /u on {procs} bitwise equal to 1 rank")

# 3. Modes sin(2 pi k x/L) on periodic axes: the exact discrete answer; formulas wrap.
for per, shift, modes in (((True, False, False), 0.0, ["3,2,1", "1,1,4"]),
                          ((True, True, False), 0.0, ["5,4,2"]),
                          ((True, True, True), 0.5, ["1,2,3", "4,1,2"])):
    margs = sum((["--mode", m] for m in modes), [])
    for r, procs in ((1, "1,1,1"), (3, "3,1,1"), (4, "2,2,1")):
        p = halo3d(r, "--grid", g, "--box", b, "--shift", str(shift), "--bc", bc(per), *margs, "--precond", "none",
                   "--tol", "1e-13", "--procs", procs, "--output", "none", quiet=False)
        err = exact_error(p.stdout)
        check(err < 1e-10, f"--bc {bc(per)} --mode {' '.join(modes)} on {procs}: max error vs exact discrete {err:.2e}")
for scheme, extra in (("explicit", []), ("implicit", ["--precond", "none"]), ("crank-nicolson", ["--precond", "none"]),
                      ("implicit", []), ("crank-nicolson", ["--precision", "mixed"])):
    extra = extra + ([] if scheme == "explicit" else ["--dt", "1e-3", "--tol", "1e-13"])
    p = halo3d(2, "--problem", "heat", "--time-scheme", scheme, "--grid", g, "--box", b, "--bc", "x=periodic,y=periodic",
               "--mode", "2,3,1", "--steps", "5", *extra, "--output", "none", quiet=False)
    err = exact_error(p.stdout)
    check(err < 1e-10, f"heat {scheme} {' '.join(extra)} with x, y periodic: max error vs exact discrete {err:.2e}")
# Implicit heat with the multigrid (I + c A's hierarchy) from a random state: bitwise on every
# process grid, and each step's solve satisfies (I + c A) u1 = u0 to rounding.
per = (False, True, True)
with h5py.File(os.path.join(work, "h0.h5"), "w") as f:
    f["u"] = rng.uniform(-1, 1, (grid[2], grid[1], grid[0]))
first = None
for r, procs in ((1, "1,1,1"), (2, "1,2,1"), (3, "1,1,3"), (4, "1,2,2"), (4, "2,1,2")):
    halo3d(r, "--problem", "heat", "--time-scheme", "implicit", "--grid", g, "--box", b, "--bc", bc(per),
           "--initial", "file:h0.h5:/u", "--steps", "1", "--dt", "2e-3", "--alpha", "0.5", "--tol", "1e-13",
           "--procs", procs, "--output", "hi.h5")
    u = read("hi.h5")[0]
    if first is None:
        first = u
        with h5py.File(os.path.join(work, "h0.h5")) as f:
            u0 = f["u"][...]
        res = np.max(np.abs(u + 0.5 * 2e-3 * apply_a(u, grid, box, 0.0, per) - u0)) if u.shape == u0.shape else np.inf
        check(res < 1e-11, f"implicit heat with the multigrid, --bc {bc(per)}: (I + c A) u1 = u0 to {res:.1e}")
    else:
        check(np.array_equal(u, first), f"implicit heat with the multigrid on {procs}: /u bitwise equal to 1 rank")
# expr: sin(2 pi x/LX) at x_i = i LX/NX is the mode (1,.,.) times its source coefficient.
halo3d(1, "--grid", g, "--box", b, "--bc", "x=periodic", "--rhs", "expr:sin(2*_pi*x/3)*sin(_pi*y)*sin(2*_pi*z)",
       "--precond", "none", "--tol", "1e-13", "--output", "expr.h5")
halo3d(1, "--grid", g, "--box", b, "--bc", "x=periodic", "--mode", "1,1,1", "--rhs", "modes",
       "--precond", "none", "--tol", "1e-13", "--output", "modes.h5")
ue, um = read("expr.h5")[0], read("modes.h5")[0]
# The XDMF sidecar places the first point at 0 on the periodic axis x, at h on y and z.
geo = [e.text for e in ET.parse(os.path.join(work, "modes.xdmf")).iter("DataItem")][:2]
nx, ny, nz = (int(v) for v in g.split(","))
lx, ly, lz = (float(v) for v in b.split(","))
want = [[lz / (nz + 1), ly / (ny + 1), 0.0], [lz / (nz + 1), ly / (ny + 1), lx / nx]]
got = [[float(v) for v in t.split()] for t in geo]
check(np.allclose(got, want, rtol=1e-15, atol=0), f"XDMF origin and spacing (z y x) {got}, want {want}")
rate = np.pi ** 2 * ((2 / 3) ** 2 + 1 + 4)  # the modes' source is rate times the mode
check(np.max(np.abs(ue * rate - um)) < 1e-10 * np.max(np.abs(um)),
      f"an expr: formula sees the periodic coordinates i L/N (diff {np.max(np.abs(ue * rate - um)):.2e})")

# 3b. The singular case: every axis periodic, no shift (A 1 = 0). f = A u* for a random
# zero-mean u*, plus a constant: the program removes f's mean (reported: 0.75 to rounding)
# and gives u* back, the zero-mean solution, with MG-PCG (double, mixed, --fmg, distributed
# coarse levels, k = 2), CG; /u bitwise on every process grid; f's constant changes the
# answer only by rounding; MG-PCG within one iteration of all-Dirichlet's.
sgrid = (12, 9, 16)
sg = text(sgrid)
per = (True, True, True)
ustar = rng.uniform(-1, 1, (sgrid[2], sgrid[1], sgrid[0]))
ustar -= ustar.mean()
fs = apply_a(ustar, sgrid, box, 0.0, per)
with h5py.File(os.path.join(work, "fs.h5"), "w") as f:
    f["f"] = fs + 0.75
    f["g"] = fs - 2.5
for name, extra in (("mg", []), ("mixed", ["--precision", "mixed"]), ("fmg", ["--fmg"]),
                    ("mg distributed", ["--mg-gather", "0"]), ("cg", ["--precond", "none"]),
                    ("mg k=2", ["--coefficient", "2"])):
    first = None
    for r, procs in ((1, "1,1,1"), (2, "1,2,1"), (3, "3,1,1"), (3, "1,1,3"), (4, "2,1,2"), (4, "1,2,2")):
        out = f"s{r}{procs.replace(',', '')}.h5"
        p = halo3d(r, "--grid", sg, "--box", b, "--bc", bc(per), "--rhs", "file:fs.h5:/f", "--tol", "1e-13",
                   "--procs", procs, *extra, "--output", out, "--report", "s.json", quiet=False)
        u = read(out)[0]
        if first is None:
            first = u
            scale = 2.0 if "--coefficient" in extra else 1.0  # k = 2: A is twice the Laplacian
            err = np.max(np.abs(u * scale - ustar)) if u.shape == ustar.shape else np.inf
            check(err < 1e-10, f"singular, {name}: the zero-mean u* back from f = A u* + 0.75 to {err:.1e} "
                  f"(mean of u {np.mean(u):.1e})")
            m = re.search(r"the source's mean (\S+) removed", p.stdout)
            check(m is not None and abs(float(m.group(1)) - 0.75) < 1e-12,
                  f"singular, {name}: stdout names the mean removed ({m.group(1) if m else None}, want 0.75)")
            rep = {}
            if os.path.exists(os.path.join(work, "s.json")):
                with open(os.path.join(work, "s.json")) as fj:
                    rep = json.load(fj)["result"].get("source_mean_removed") or {}
            rel = 0.75 * np.sqrt(fs.size) / np.linalg.norm(fs + 0.75)
            check(abs(rep.get("mean", 0) - 0.75) < 1e-12 and abs(rep.get("relative", 0) - rel) < 1e-9 * rel,
                  f"singular, {name}: the report's source_mean_removed {rep}")
        else:
            check(np.array_equal(u, first), f"singular, {name}: /u on {procs} bitwise equal to 1 rank")
halo3d(2, "--grid", sg, "--box", b, "--bc", bc(per), "--rhs", "file:fs.h5:/g", "--tol", "1e-13", "--output", "sg.h5")
halo3d(2, "--grid", sg, "--box", b, "--bc", bc(per), "--rhs", "file:fs.h5:/f", "--tol", "1e-13", "--output", "sf.h5")
d = np.max(np.abs(read("sg.h5")[0] - read("sf.h5")[0]))
check(d < 1e-12, f"singular: f + 0.75 and f - 2.5 give the same answer to rounding ({d:.1e})")
its = {}
for bcs in ("dirichlet", bc(per)):
    p = halo3d(1, "--grid", "32,32,32", "--bc", bcs, "--rhs", "random", "--tol", "1e-8", "--output", "none", quiet=False)
    m = re.search(r"converged after (\d+) iterations", p.stdout)
    its[bcs] = int(m.group(1)) if m else 99
check(its[bc(per)] <= its["dirichlet"] + 1, f"singular: MG-PCG iterations on 32^3 {its[bc(per)]}, "
      f"all-Dirichlet {its['dirichlet']}")

# --dry-run plans the run's hierarchy: periodic N = 16 halves to 8 (a Dirichlet 16 would go to 10).
dry = halo3d(1, "--grid", "16,15,15", "--bc", "x=periodic", "--dry-run", quiet=False).stdout
run = halo3d(1, "--grid", "16,15,15", "--bc", "x=periodic", "--output", "none", quiet=False).stdout
m1 = re.search(r"multigrid: \d+ levels: (.*)", dry)
m2 = re.search(r"V-cycle, \d+ levels \(([^)]*)\)", run)
check(m1 is not None and m2 is not None and m1.group(1).strip() == m2.group(1) and m2.group(1).startswith("16x15x15 8x7x7"),
      f"--dry-run's multigrid levels {m1.group(1) if m1 else None!r} are the run's {m2.group(1) if m2 else None!r}")

# 4. Refusals.
for args, needle in ((["--bc", "x0=periodic"], "periodic needs both faces of axis x"),
                     (["--bc", "y1=periodic,y0=dirichlet"], "periodic needs both faces of axis y"),
                     (["--bc", "x=robin"], "is not FACE=KIND"),
                     (["--bc", "w=periodic"], "is not FACE=KIND"),
                     (["--bc", "x,y,z=periodic"], "is not FACE=KIND"),
                     (["--bc", "x=periodic,y=periodic,z=periodic", "--shift", "expr:0*x"],
                      "sigma is 0 at every point and no face is Dirichlet"),
                     (["--bc", "x=periodic", "--precond", "none", "--mode", "4,1,1"], "below N/2")):
    p = halo3d(0, "--grid", "8,8,8", *args, "--output", "none", expect=2)
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 2 and len(lines) == 1 and needle in p.stderr, f"{' '.join(args)} refused: {p.stderr.strip()!r}")
base = ["--grid", g, "--rhs", "random", "--precond", "none", "--output", "none"]
halo3d(2, *base, "--bc", "z=periodic", "--max-iters", "2", "--checkpoint", "c.h5", "--checkpoint-every", "1", expect=3)
for args in (["--bc", "dirichlet"], ["--bc", "x=periodic"]):
    p = halo3d(2, *base, "--restart", "c.h5", *args, expect=2)
    check(p.returncode == 2 and "bc=z=periodic" in p.stderr, f"restart with {' '.join(args)} refused: {p.stderr.strip()[:200]!r}")
p = halo3d(2, *base, "--restart", "c.h5", "--bc", "z0=periodic,z1=periodic")
check(p.returncode == 0, "restart under the same boundaries continues")

print(f"{len(failures)} failure(s)")
for f in failures:
    print("FAIL:", f[:2000])
sys.exit(1 if failures else 0)
