#!/usr/bin/env python3
"""A random lognormal coefficient k for `halo3d solve --coefficient file:K.h5:/k`.

k = exp(s * g) on the whole padded grid [NZ+2][NY+2][NX+2] (boundary layer included, as
--coefficient file: reads it), g a standard normal field from numpy's PCG64 seeded with
--seed: pointwise independent (--corr 0), or smoothed by a separable box filter of
2*corr+1 points per axis (periodic wrap, then renormalised to unit variance) for a field
correlated over about `corr` points. s is chosen so that max(k)/min(k) is exactly
--contrast (up to rounding), and k is scaled so that its geometric mean is 1.

Usage: lognormal_k.py --grid NX,NY,NZ [--contrast 1e4] [--corr 0] [--seed 1] OUT.h5
Writes dataset /k (float64) and prints min, max and the contrast."""
import argparse
import sys

import h5py
import numpy as np


def smooth(g, corr):
    # Separable box filter, periodic: each axis averaged over 2*corr+1 points.
    for axis in range(3):
        acc = np.zeros_like(g)
        for s in range(-corr, corr + 1):
            acc += np.roll(g, s, axis=axis)
        g = acc / (2 * corr + 1)
    return g


def lognormal(grid, contrast, corr, seed):
    nx, ny, nz = grid
    g = np.random.Generator(np.random.PCG64(seed)).standard_normal((nz + 2, ny + 2, nx + 2))
    if corr > 0:
        g = smooth(g, corr)
    g = (g - g.mean()) / g.std()
    s = np.log(contrast) / (g.max() - g.min())  # max/min of exp(s g) = contrast
    return np.exp(s * g), s


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--grid", required=True, help="NX,NY,NZ (interior points, as halo3d's --grid)")
    p.add_argument("--contrast", type=float, default=1e4, help="max(k)/min(k) (default 1e4)")
    p.add_argument("--corr", type=int, default=0, help="smoothing half-width in points (0: independent)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--dataset", default="/k")
    p.add_argument("out")
    a = p.parse_args()
    try:
        grid = [int(v) for v in a.grid.split(",")]
        if len(grid) != 3 or min(grid) < 1:
            raise ValueError
    except ValueError:
        sys.exit(f"lognormal_k.py: --grid must be NX,NY,NZ of positive integers, got {a.grid!r}")
    if not a.contrast >= 1 or not np.isfinite(a.contrast):
        sys.exit(f"lognormal_k.py: --contrast must be a finite number >= 1, got {a.contrast}")
    if a.corr < 0:
        sys.exit(f"lognormal_k.py: --corr must be >= 0, got {a.corr}")
    k, s = lognormal(grid, a.contrast, a.corr, a.seed)
    with h5py.File(a.out, "w") as f:
        f.create_dataset(a.dataset, data=k)
    print(f"{a.out}:{a.dataset} shape {k.shape} sigma {s:.4g} min {k.min():.4g} max {k.max():.4g} "
          f"contrast {k.max() / k.min():.6g}")


if __name__ == "__main__":
    main()
