"""What the program-level Python tests share: the program and mpirun from the command line
(`TEST.py HALO3D MPIEXEC`), a scratch folder, checks that collect failures instead of
stopping at the first, runs of `halo3d solve`, HDF5 reads and writes, and the numpy
reference of the variable-coefficient operator's face weights.

    from h3test import Harness, text, weights
    T = Harness("coefficients")          # or Harness("heat", "--problem", "heat")
    T.check(cond, "what was checked")
    p = T.solve(2, "--grid", "9,9,9")    # mpirun -np 2 halo3d solve --quiet --grid 9,9,9
    sys.exit(T.finish("all coefficient checks passed"))
"""
import json
import os
import re
import subprocess
import sys
import tempfile

try:  # the lent GPU machine has neither; only the tests that read or write fields need them
    import h5py
    import numpy as np
except ImportError:
    h5py = np = None


class Harness:
    def __init__(self, name, *solve_args):
        """name: the scratch folder's prefix; solve_args: given to every solve (after --quiet)."""
        self.program, self.mpiexec = os.path.abspath(sys.argv[1]), sys.argv[2]
        self.failures = []
        self.work = tempfile.mkdtemp(prefix=f"halo3d-{name}-")
        self.solve_args = list(solve_args)

    def check(self, cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            self.failures.append(what)

    def solve(self, ranks, *args, expect=0, quiet=True):
        """`halo3d solve` on `ranks` ranks in the scratch folder; ranks 0: the program alone,
        without mpirun (its stderr is then the program's only). An exit status other than
        `expect` is a failure."""
        launcher = [self.mpiexec, "-np", str(ranks), "--oversubscribe"] if ranks else []
        cmd = launcher + [self.program, "solve"] + (["--quiet"] if quiet else []) + self.solve_args + list(args)
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=self.work)
        if p.returncode != expect:
            self.failures.append(f"{' '.join(args)}: exit {p.returncode}, expected {expect}\n{p.stdout}\n{p.stderr}")
        return p

    def read(self, path):
        """/u and the attributes of an output file (NaN and none where the run failed, which
        was reported already)."""
        full = os.path.join(self.work, path)
        if not os.path.exists(full):
            return np.array([np.nan]), {}
        with h5py.File(full) as f:
            return f["u"][...], {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}

    def write(self, path, data, dataset="d"):
        """An input file of one dataset in the scratch folder; returns path."""
        with h5py.File(os.path.join(self.work, path), "w") as f:
            f[dataset] = data
        return path

    def memory(self, report):
        """The "memory" section of a --report in the scratch folder (None if it was not written)."""
        path = os.path.join(self.work, report)
        if not os.path.exists(path):
            return None
        with open(path) as f:
            return json.load(f)["memory"]

    def dry_run_mib(self, ranks, *args):
        """The backend MiB `solve --dry-run` prints for its largest rank (None if not printed)."""
        out = self.solve(ranks, *args, "--dry-run", quiet=False).stdout
        m = re.search(r"memory per rank \(largest\): ([0-9.]+) MiB of backend memory", out)
        return float(m.group(1)) if m else None

    def finish(self, passed):
        """The closing lines; the exit status (1 on any failure)."""
        if self.failures:
            print("FAILED:\n  " + "\n  ".join(f[:2000] for f in self.failures))
            return 1
        print(passed)
        return 0


def text(v):
    """A list as an option's value: 1,2,3."""
    return ",".join(map(str, v))


def weights(k, grid, box):
    """Face weights as coefficients.cpp makes them: (2 p) (q / (p + q)) / h^2 for the faces
    between each point and its +d neighbour, over the box and the low boundary layer.
    k is [NZ+2][NY+2][NX+2]; returns wx [NZ][NY][NX+1] etc. (low face first)."""
    h = [box[d] / (grid[d] + 1) for d in range(3)]
    c = [1.0 / (hd * hd) for hd in h]
    kin = k[1:-1, 1:-1, :]  # rows of the box, x with the boundary layer
    wx = (2.0 * kin[:, :, :-1]) * (kin[:, :, 1:] / (kin[:, :, :-1] + kin[:, :, 1:])) * c[0]
    kin = k[1:-1, :, 1:-1]
    wy = (2.0 * kin[:, :-1, :]) * (kin[:, 1:, :] / (kin[:, :-1, :] + kin[:, 1:, :])) * c[1]
    kin = k[:, 1:-1, 1:-1]
    wz = (2.0 * kin[:-1, :, :]) * (kin[1:, :, :] / (kin[:-1, :, :] + kin[1:, :, :])) * c[2]
    return wx, wy, wz


def diag_apply(u, k, grid, box, shift):
    """(d, A u) of -div(k grad u) + shift u with zero Dirichlet ghosts, as ops::point_diag and
    ops::apply_variable write them, left to right; shift: a number or [NZ][NY][NX] (the
    points' own sigma)."""
    wx, wy, wz = weights(k, grid, box)
    ww, we = wx[:, :, :-1], wx[:, :, 1:]
    ws, wn = wy[:, :-1, :], wy[:, 1:, :]
    wb, wt = wz[:-1, :, :], wz[1:, :, :]
    d = (((ww + we) + (ws + wn)) + (wb + wt)) + shift
    p = np.pad(u, 1)
    au = (d * u - (ww * p[1:-1, 1:-1, :-2] + we * p[1:-1, 1:-1, 2:])
          - (ws * p[1:-1, :-2, 1:-1] + wn * p[1:-1, 2:, 1:-1])
          - (wb * p[:-2, 1:-1, 1:-1] + wt * p[2:, 1:-1, 1:-1]))
    return d, au


def dense(k, grid, box, shift):
    """A as a dense matrix, its columns A applied to the unit vectors (diag_apply)."""
    n = grid[0] * grid[1] * grid[2]
    a = np.zeros((n, n))
    for j in range(n):
        e = np.zeros(n)
        e[j] = 1.0
        a[:, j] = diag_apply(e.reshape(grid[2], grid[1], grid[0]), k, grid, box, shift)[1].ravel()
    return a
