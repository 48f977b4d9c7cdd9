#!/usr/bin/env python3
"""Plain CG in numpy on halo3d's variable-coefficient system (zero Dirichlet boundary,
face weight 2 k_p k_q / (k_p + k_q) / h^2, the boundary layer's k on boundary faces,
--rhs random --seed S), x0 = 0, stop at ||r||/||b|| <= tol on the recursive residual: the
iteration count with plain double dot products (as hypre's) and with exactly rounded ones
(math.fsum; halo3d's are double-double), to tell a matrix mismatch from rounding.

Usage: cg_reference.py --grid N,N,N --coefficient K.h5:/k [--seed 1] [--tol 1e-8]"""
import argparse
import math

import h5py
import numpy as np
import scipy.sparse as sp


def random_value(seed, index):  # halo3d's --rhs random (bench/peers/common.hpp), vectorised
    m = np.uint64(0xFFFFFFFFFFFFFFFF)
    with np.errstate(over="ignore"):
        z = np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) + index + np.uint64(0x632BE59BD9B4E019)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = (z ^ (z >> np.uint64(31))) & m
    return (z >> np.uint64(11)).astype(np.float64) * 2.0**-52 - 1.0


def matrix(k, grid):
    nx, ny, nz = grid
    inv_h2 = [1.0 / (1.0 / (n + 1.0)) ** 2 for n in grid]
    idx = np.arange(nx * ny * nz).reshape(nz, ny, nx)
    diag = np.zeros((nz, ny, nx))
    rows, cols, vals = [], [], []
    for a, (ax, c) in enumerate(((2, inv_h2[0]), (1, inv_h2[1]), (0, inv_h2[2]))):
        lo = [slice(1, -1)] * 3
        hi = [slice(1, -1)] * 3
        lo[ax], hi[ax] = slice(0, -1), slice(1, None)
        kl, kh = k[tuple(lo)], k[tuple(hi)]
        w = 2.0 * kl * (kh / (kl + kh)) * c  # faces 0..n along ax (n+1 of them)
        sl = [slice(None)] * 3
        sl[ax] = slice(0, -1)
        low = w[tuple(sl)]  # each point's low face
        sl[ax] = slice(1, None)
        high = w[tuple(sl)]
        diag += low + high
        inner = [slice(None)] * 3
        inner[ax] = slice(1, -1)
        wi = w[tuple(inner)]  # faces between two unknowns
        a0 = [slice(None)] * 3
        a1 = [slice(None)] * 3
        a0[ax], a1[ax] = slice(0, -1), slice(1, None)
        p, q = idx[tuple(a0)].ravel(), idx[tuple(a1)].ravel()
        rows += [p, q]
        cols += [q, p]
        vals += [-wi.ravel(), -wi.ravel()]
    n = nx * ny * nz
    rows.append(np.arange(n))
    cols.append(np.arange(n))
    vals.append(diag.ravel())
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n))


def cg(A, b, tol, dot):
    x, r = np.zeros_like(b), b.copy()
    p, rr, bb = r.copy(), dot(r, r), dot(b, b)
    for it in range(1, 100000):
        Ap = A @ p
        alpha = rr / dot(p, Ap)
        x += alpha * p
        r -= alpha * Ap
        rr_new = dot(r, r)
        if math.sqrt(rr_new / bb) <= tol:
            return it, np.linalg.norm(b - A @ x) / math.sqrt(bb)
        p = r + (rr_new / rr) * p
        rr = rr_new
    return -1, float("nan")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--grid", required=True)
    p.add_argument("--coefficient", required=True, help="PATH.h5:/DATASET")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--tol", type=float, default=1e-8)
    a = p.parse_args()
    grid = [int(v) for v in a.grid.split(",")]
    path, ds = a.coefficient.rsplit(":/", 1)
    k = h5py.File(path)[ds][...]
    A = matrix(k, grid)
    b = random_value(a.seed, np.arange(grid[0] * grid[1] * grid[2], dtype=np.uint64))
    for name, dot in (("plain double dots", lambda u, v: float(np.dot(u, v))),
                      ("exactly rounded dots", lambda u, v: math.fsum(u * v))):
        it, rel = cg(A, b, a.tol, dot)
        print(f"numpy CG, {name}: {it} iterations, true relres {rel:.6e}")


if __name__ == "__main__":
    main()
