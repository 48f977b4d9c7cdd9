#!/usr/bin/env python3
"""Fields from files and formulas, and Dirichlet boundary values, through the program:
exact answers (a boundary linear in x, y, z with zero source gives that linear function at
every interior point; a constant gives the constant) on 1-4 ranks with --precond mg and
none, file/formula/modes agreement, float32 files, heat continued from an output file,
decomposition invariance, report/attributes, and restart identity.
Run: fields_test.py HALO3D MPIEXEC"""
import json
import os
import sys

import h5py
import numpy as np

from h3test import Harness

T = Harness("fields")
check, halo3d, read, work, failures = T.check, T.solve, T.read, T.work, T.failures


def coords(grid, ghosts=False):
    """x, y, z of every point as [NZ][NY][NX] arrays; point i at (i+1)/(N+1), ghosts -1 and N."""
    axes = [(np.arange(-1 if ghosts else 0, n + 1 if ghosts else n) + 1) / (n + 1) for n in grid]
    z, y, x = np.meshgrid(axes[2], axes[1], axes[0], indexing="ij")
    return x, y, z


def write(name, data, dataset="f"):
    with h5py.File(os.path.join(work, name), "w") as f:
        f[dataset] = data
    return name


grid = (13, 11, 9)
g = ",".join(map(str, grid))
x, y, z = coords(grid)

# 1. A boundary linear in x, y, z with zero source: that linear function at every interior
# point, on 1-4 ranks, multigrid and plain CG; a constant boundary: the constant.
lin = "1+2*x-3*y+0.5*z"
exact = 1 + 2 * x - 3 * y + 0.5 * z
for ranks in (1, 2, 3, 4):
    for pc in ("mg", "none"):
        out = f"lin_{ranks}_{pc}.h5"
        halo3d(ranks, "--grid", g, "--rhs", "expr:0", "--boundary", f"expr:{lin}", "--precond", pc, "--tol", "1e-12",
               "--output", out)
        u, _ = read(out)
        err = np.abs(u - exact).max()
        check(err < 1e-9, f"linear boundary {lin}, {ranks} rank(s), --precond {pc}: max error {err:.1e}")
for ranks, pc in ((1, "mg"), (4, "none"), (3, "mg")):
    out = f"const_{ranks}_{pc}.h5"
    halo3d(ranks, "--grid", g, "--rhs", "expr:0", "--boundary", "2.5", "--precond", pc, "--tol", "1e-12", "--output", out)
    u, _ = read(out)
    check(np.abs(u - 2.5).max() < 1e-9, f"--boundary 2.5, {ranks} rank(s), --precond {pc}: max error "
          f"{np.abs(u - 2.5).max():.1e}")
# Jacobi solves the lifted system too (fewer digits: it converges slowly).
halo3d(2, "--grid", "6,5,4", "--rhs", "expr:0", "--boundary", "-1.5", "--solver", "jacobi", "--tol", "1e-10",
       "--max-iters", "100000", "--output", "const_jacobi.h5")
u, _ = read("const_jacobi.h5")
check(np.abs(u + 1.5).max() < 1e-8, f"--boundary -1.5 with --solver jacobi: max error {np.abs(u + 1.5).max():.1e}")

# 2. The boundary from a ghost-inclusive file gives the same linear answer; per-face values
# give what a file with those faces gives (bitwise: the same numbers are lifted).
xg, yg, zg = coords(grid, ghosts=True)
write("bnd_lin.h5", 1 + 2 * xg - 3 * yg + 0.5 * zg, "g")
halo3d(3, "--grid", g, "--rhs", "expr:0", "--boundary", "file:bnd_lin.h5:/g", "--tol", "1e-12", "--output", "lin_file.h5")
u, attrs = read("lin_file.h5")
check(np.abs(u - exact).max() < 1e-9, f"linear boundary from a file: max error {np.abs(u - exact).max():.1e}")
faces = np.zeros((grid[2] + 2, grid[1] + 2, grid[0] + 2))
faces[:, :, 0], faces[:, :, -1], faces[:, 0, :], faces[:, -1, :], faces[0, :, :], faces[-1, :, :] = 1, -2, 0.5, 0, 3, 0
faces[5, 5, 5] = 1e300  # the interior of the file is ignored
write("bnd_faces.h5", faces, "g")
halo3d(2, "--grid", g, "--boundary", "file:bnd_faces.h5:/g", "--output", "faces_file.h5")
halo3d(4, "--grid", g, "--boundary", "x0=1,x1=-2,y0=0.5,z0=3", "--output", "faces_spec.h5")
a, _ = read("faces_file.h5")
b, attrs = read("faces_spec.h5")
check(np.array_equal(a, b), "per-face --boundary equals the same faces from a file (bitwise, 2 vs 4 ranks)")
check(attrs.get("boundary") == "x0=1,x1=-2,y0=0.5,z0=3" and attrs.get("rhs") == "modes",
      f"HDF5 attributes rhs and boundary: {attrs.get('rhs')!r} {attrs.get('boundary')!r}")
check(np.isnan(attrs.get("max_error", 0.0)), "no exact answer claimed with boundary values")

# 3. Decomposition invariance with boundary values and a random source: bitwise on 1 and 4 ranks.
halo3d(1, "--grid", g, "--rhs", "random", "--boundary", "expr:sin(3*x)*cos(y)+z^2", "--output", "inv1.h5")
halo3d(4, "--grid", g, "--rhs", "random", "--boundary", "expr:sin(3*x)*cos(y)+z^2", "--procs", "1,2,2",
       "--output", "inv4.h5")
check(np.array_equal(read("inv1.h5")[0], read("inv4.h5")[0]), "boundary values: 1 rank and 4 ranks bitwise equal")

# 4. Zero boundary values given explicitly change nothing (bitwise).
halo3d(2, "--grid", g, "--rhs", "random", "--output", "zero_default.h5")
halo3d(2, "--grid", g, "--rhs", "random", "--boundary", "x0=0,y1=0", "--output", "zero_faces.h5")
check(np.array_equal(read("zero_default.h5")[0], read("zero_faces.h5")[0]), "--boundary x0=0,y1=0 is the default, bitwise")

# 5. Sources from formulas and files: the formula of mode 1,1,1 gives modes' answer; a float64
# file of f and a float32 file agree with the float64 file of the float32 values (bitwise).
halo3d(2, "--grid", g, "--output", "modes.h5")
halo3d(3, "--grid", g, "--rhs", "expr:3*pi^2*sin(pi*x)*sin(pi*y)*sin(pi*z)", "--output", "modes_expr.h5")
a, b = read("modes.h5")[0], read("modes_expr.h5")[0]
check(np.abs(a - b).max() / np.abs(a).max() < 1e-9, f"--rhs expr of mode 1,1,1 = --rhs modes: {np.abs(a - b).max():.1e}")
f = 3 * np.pi ** 2 * np.sin(np.pi * x) * np.sin(np.pi * y) * np.sin(np.pi * z)
write("f64.h5", f)
halo3d(4, "--grid", g, "--rhs", "file:f64.h5:/f", "--output", "modes_file.h5", "--report", "modes_file.json")
u, attrs = read("modes_file.h5")
check(np.abs(u - a).max() / np.abs(a).max() < 1e-9, f"--rhs file of mode 1,1,1 = --rhs modes: {np.abs(u - a).max():.1e}")
check(attrs.get("rhs") == "file:f64.h5:/f" and attrs.get("boundary") == "0", f"attributes {attrs.get('rhs')!r}")
rj = os.path.join(work, "modes_file.json")
rep = json.load(open(rj)) if os.path.exists(rj) else {"config": {}}
fr = rep.get("fields", {}).get("rhs", {})
check(fr.get("kind") == "file" and fr.get("file") == "f64.h5" and fr.get("dataset") == "/f"
      and fr.get("file_absolute") == os.path.join(os.path.realpath(work), "f64.h5")
      and rep.get("fields", {}).get("boundary", {}).get("kind") == "constant"
      and rep["config"].get("rhs") == "file:f64.h5:/f",
      f"report records the file and dataset: {rep.get('fields')}")
rng = np.random.default_rng(3)
r = rng.standard_normal((grid[2], grid[1], grid[0]))
with h5py.File(os.path.join(work, "grp.h5"), "w") as h:
    h.create_group("in")["f32"] = r.astype(np.float32)
write("f32as64.h5", r.astype(np.float32).astype(np.float64))
halo3d(2, "--grid", g, "--rhs", "file:grp.h5:/in/f32", "--output", "r32.h5")
halo3d(3, "--grid", g, "--rhs", "file:f32as64.h5:/f", "--output", "r64.h5")
check(np.array_equal(read("r32.h5")[0], read("r64.h5")[0]), "a float32 dataset (in a group) reads as its float64 values")

# 6. Heat: --initial formula = --initial modes; --rhs still gives heat's initial state; a run
# continued from a previous /u with --initial file: equals the uninterrupted run (bitwise).
heat = ["--problem", "heat", "--grid", g]
halo3d(2, *heat, "--steps", "20", "--initial", "modes", "--output", "h_modes.h5")
halo3d(2, *heat, "--steps", "20", "--initial", "expr:sin(pi*x)*sin(pi*y)*sin(pi*z)", "--output", "h_expr.h5",
       "--report", "h_expr.json")
a, b = read("h_modes.h5")[0], read("h_expr.h5")[0]
check(np.abs(a - b).max() < 1e-12, f"heat --initial expr = --initial modes: {np.abs(a - b).max():.1e}")
_, attrs = read("h_expr.h5")
check(attrs.get("initial") == "expr:sin(pi*x)*sin(pi*y)*sin(pi*z)" and attrs.get("rhs") == attrs.get("initial"),
      f"heat attributes initial/rhs: {attrs.get('initial')!r}")
hj = os.path.join(work, "h_expr.json")
check(os.path.exists(hj) and json.load(open(hj)).get("fields", {}).get("initial", {}).get("kind") == "expr",
      "report fields.initial")
halo3d(2, *heat, "--steps", "20", "--rhs", "random", "--output", "h_rhs.h5")
halo3d(2, *heat, "--steps", "20", "--initial", "random", "--output", "h_init.h5")
check(np.array_equal(read("h_rhs.h5")[0], read("h_init.h5")[0]), "heat: --rhs random and --initial random agree")
halo3d(2, *heat, "--steps", "10", "--initial", "random", "--output", "h10.h5")
halo3d(3, *heat, "--steps", "10", "--initial", "file:h10.h5:/u", "--output", "h10b.h5")
check(np.array_equal(read("h10b.h5")[0], read("h_init.h5")[0]),
      "heat continued with --initial file:h10.h5:/u = 20 steps in one run (bitwise)")

# 7. A checkpoint is only continued with the same fields: another boundary or rhs is refused.
p = halo3d(2, "--grid", g, "--rhs", "random", "--boundary", "1", "--precond", "none", "--max-iters", "4",
           "--checkpoint", "c.h5", "--checkpoint-every", "2", "--output", "none", expect=3)
for name, extra, needle in (("boundary", ["--rhs", "random", "--boundary", "2"], "boundary is '1' in the checkpoint"),
                            ("rhs", ["--rhs", "expr:x", "--boundary", "1"], "rhs is 'random' in the checkpoint")):
    p = halo3d(2, "--grid", g, "--precond", "none", "--restart", "c.h5", "--output", "none", *extra, expect=2)
    check(p.returncode == 2 and needle in p.stderr, f"restart with another {name} refused: {p.stderr.strip()[:160]!r}")
p = halo3d(2, "--grid", g, "--rhs", "random", "--boundary", "1", "--precond", "none", "--restart", "c.h5",
           "--output", "none", "--max-iters", "10000")
check(p.returncode == 0, "restart with the same fields continues")

if failures:
    print("FAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("all field checks passed")
