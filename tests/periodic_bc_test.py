#!/usr/bin/env python3
"""--bc periodic axes through the program, against a plain numpy reference of the discrete
operator (-lap_h u + sigma u; a periodic axis has N points at i L/N, h = L/N, and wraps; the
other axes are Dirichlet with zero ghosts):
1. explicit heat steps bitwise equal to the reference's, on 1-4 ranks (2-3 along a periodic
   axis);
2. Poisson with f = A u* for a random u*: u* back to rounding with CG (--precond none) and
   Jacobi's sweeps, 1, 2 and 3 periodic axes mixed with Dirichlet, /u
   bitwise the same on every process grid;
3. built-in modes sin(2 pi k x/L): the exact discrete answer to rounding (Poisson, explicit and
   implicit heat); formulas in the wrapped coordinates;
4. refusals (exit 2, one line): one face only, a malformed item, what periodic axes do not
   take yet, a restart under other boundaries.
Run: periodic_bc_test.py HALO3D MPIEXEC"""
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import h5py
import numpy as np

HALO3D, MPIEXEC = os.path.abspath(sys.argv[1]), sys.argv[2]
failures = []
work = tempfile.mkdtemp(prefix="halo3d-periodic-")


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def halo3d(ranks, *args, expect=0, quiet=True):
    """ranks 0: the program alone, without mpirun (its stderr is then the program's only)."""
    launcher = [MPIEXEC, "-np", str(ranks), "--oversubscribe"] if ranks else []
    cmd = launcher + [HALO3D, "solve"] + (["--quiet"] if quiet else []) + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=work)
    if p.returncode != expect:
        failures.append(f"{' '.join(args)}: exit {p.returncode}, expected {expect}\n{p.stdout}\n{p.stderr}")
    return p


def read(path):
    if not os.path.exists(os.path.join(work, path)):  # the run failed (already reported)
        return np.array([np.nan]), {}
    with h5py.File(os.path.join(work, path)) as f:
        return f["u"][...], {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}


def spacing(grid, box, per):
    return [box[d] / (grid[d] + (0 if per[d] else 1)) for d in range(3)]


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


def text(v):
    return ",".join(map(str, v))


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

# 2. Poisson: f = A u* for a random u*; CG without a preconditioner gives u* back.
for per, shift in (((True, False, False), 0.0), ((False, True, True), 0.0), ((True, True, True), 2.0)):
    ustar = rng.uniform(-1, 1, (grid[2], grid[1], grid[0]))
    with h5py.File(os.path.join(work, "f.h5"), "w") as f:
        f["f"] = apply_a(ustar, grid, box, shift, per)
    scale = np.max(np.abs(ustar))
    first = {}
    for r, procs in ((1, "1,1,1"), (2, "2,1,1"), (2, "1,2,1"), (3, "1,3,1"), (3, "3,1,1"), (4, "2,2,1"), (4, "1,2,2")):
        for which, extra in enumerate((["--precond", "none", "--tol", "1e-13"], ["--solver", "jacobi", "--iters", "40"])):
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
for scheme in ("explicit", "implicit", "crank-nicolson"):
    extra = [] if scheme == "explicit" else ["--dt", "1e-3", "--precond", "none"]
    p = halo3d(2, "--problem", "heat", "--time-scheme", scheme, "--grid", g, "--box", b, "--bc", "x=periodic,y=periodic",
               "--mode", "2,3,1", "--steps", "5", *extra, "--output", "none", quiet=False)
    err = exact_error(p.stdout)
    check(err < 1e-10, f"heat {scheme} with x, y periodic: max error vs exact discrete {err:.2e}")
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

# 4. Refusals.
for args, needle in ((["--bc", "x0=periodic"], "periodic needs both faces of axis x"),
                     (["--bc", "y1=periodic,y0=dirichlet"], "periodic needs both faces of axis y"),
                     (["--bc", "x=neumann"], "is not FACE=KIND"),
                     (["--bc", "w=periodic"], "is not FACE=KIND"),
                     (["--bc", "x=periodic"], "the multigrid preconditioner does not take periodic axes yet"),
                     (["--bc", "x=periodic", "--precond", "none", "--coefficient", "2"], "--coefficient"),
                     (["--bc", "x=periodic", "--precond", "none", "--shift", "expr:1+x"], "variable --shift"),
                     (["--bc", "x,y,z=periodic"], "is not FACE=KIND"),
                     (["--bc", "x=periodic,y=periodic,z=periodic", "--precond", "none"], "singular"),
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
