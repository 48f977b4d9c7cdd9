#!/usr/bin/env python3
"""halo3d solve gives bitwise the same /u, iteration count and residual history on every
process grid of 1-8 ranks (several shapes each), for MG-PCG in double and mixed precision,
on an odd grid whose coarse levels stay on the process grid (--mg-gather 0) and with the
default gather; and with Neumann faces (mixed with Dirichlet and periodic ones, a variable k,
a shift, fluxes and boundary values), MG-PCG double with distributed coarse levels and mixed
with the default gather, with no Dirichlet face and a variable shift, and with Dirichlet faces
and a variable k; and the operator-dependent interpolation (--mg-interp operator) with a
variable k and with Neumann faces, on distributed coarse levels. Run: invariance_test.py HALO3D MPIEXEC [BACKEND] (MPIEXEC may carry options,
e.g. "mpirun --bind-to none")."""
import os
import shlex
import subprocess
import sys
import tempfile

import h5py
import numpy as np

HALO3D, MPIEXEC = os.path.abspath(sys.argv[1]), sys.argv[2]
BACKEND = sys.argv[3] if len(sys.argv) > 3 else "host"
work = tempfile.mkdtemp(prefix="halo3d-invariance-")
failures = []
SHAPES = ["1,1,1", "2,1,1", "1,1,2", "1,3,1", "2,2,1", "1,2,2", "2,1,2", "5,1,1", "1,2,3", "3,2,1",
          "1,1,7", "2,2,2", "4,2,1", "1,2,4"]


NEUMANN = ["--bc", "x0=neumann,y=neumann,z=periodic", "--shift", "0.5",
           "--coefficient", "expr:1+0.5*sin(3*x+1)*cos(2*y)", "--boundary", "x0=0.3,x1=-0.7,y0=1.1,y1=0.2"]
# Dirichlet faces with a variable k (the coarse levels' Galerkin faces on the boundary, on
# ghost lines beside a rank's box too).
DIRICHLET_K = ["--coefficient", "expr:exp(2*sin(5*x+1)*cos(3*y)*(1+z))", "--boundary", "x0=0.4,z0=-1"]
# No Dirichlet face with a variable shift (nonsingular: the coarsest solve's low end from a
# global sum of sigma V_p).
NO_DIRICHLET = ["--bc", "x=neumann,y=periodic,z=neumann", "--shift", "expr:(x<0.3)*(0.5+y)",
                "--coefficient", "expr:1+0.5*sin(3*x+1)*cos(2*y)", "--boundary", "x0=0.3,z1=-0.7"]


def solve(procs, precision, gather, out, extra=()):
    ranks = np.prod([int(p) for p in procs.split(",")])
    cmd = shlex.split(MPIEXEC) + ["-np", str(ranks), "--oversubscribe", HALO3D, "solve", "--backend", BACKEND,
           "--grid", "45,38,52", "--rhs", "random", "--seed", "11", "--tol", "1e-10",
           "--procs", procs, "--precision", precision, "--mg-gather", gather, "--quiet",
           "--output", out] + list(extra)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=work)
    if p.returncode != 0:
        failures.append(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
        return None
    with h5py.File(os.path.join(work, out)) as f:
        return f["u"][...], int(f.attrs["iterations"]), f["residual_history"][...]


CASES = [(precision, gather, ()) for precision in ("double", "mixed") for gather in ("0", "262144")]
CASES += [("double", "0", tuple(NEUMANN)), ("mixed", "262144", tuple(NEUMANN))]
CASES += [("double", "0", tuple(NO_DIRICHLET)), ("mixed", "262144", tuple(NO_DIRICHLET))]
CASES += [("double", "0", tuple(DIRICHLET_K)), ("mixed", "262144", tuple(DIRICHLET_K))]
# The operator-dependent interpolation (--mg-interp operator): its weights are exchanged
# and read in the ghost layer by the restriction and the Galerkin parts.
OPERATOR = ["--mg-interp", "operator"]
CASES += [("double", "0", tuple(DIRICHLET_K + OPERATOR)), ("mixed", "0", tuple(NEUMANN + OPERATOR))]
for precision, gather, extra in CASES:
    ref = solve("1,1,1", precision, gather, "ref.h5", extra)
    if ref is None:
        continue
    for procs in SHAPES[1:]:
        got = solve(procs, precision, gather, "run.h5", extra)
        if got is None:
            continue
        what = f"{procs} {precision} --mg-gather {gather} {' '.join(extra)}"
        same = (got[1] == ref[1] and np.array_equal(got[2], ref[2])
                and np.array_equal(got[0].view(np.uint64), ref[0].view(np.uint64)))
        print(("ok   " if same else "FAIL ") + f"{what}: {got[1]} iterations (1 rank: {ref[1]}), "
              f"/u and residual history bitwise {'equal' if same else 'DIFFERENT'}")
        if not same:
            failures.append(what)

if failures:
    print("\n".join(["FAILED:"] + failures))
    sys.exit(1)
print("all process grids bitwise equal")
