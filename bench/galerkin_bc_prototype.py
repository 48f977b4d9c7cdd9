"""Galerkin coarse operators (A_c = R A P, 27 points) against halo3d's rediscretised averaged k,
on bench/bc_prototype.py's Dirichlet, periodic and node-centred Neumann hierarchies: MG-PCG
iterations to 1e-8, random right-hand side, k = 1 and bc_prototype's 1e4 block (the octant
by cell fractions). `/usr/bin/python3 bench/galerkin_bc_prototype.py` (about a minute on the
2-core VM) printed, 2026-12-06 (session 44; grid, kinds, k, redisc, galerkin):
  33 VVV const 7 6, block 14 11;  65 VVV const 7 6, block 16 11
  31 DDD const 7 6, block 12 10;  63 DDD const 7 6, block 14 10
  32 PPP const 7 6, block 15 10;  64 PPP const 7 6, block 15 10
so Galerkin coarse levels take every face kind to 10-11 with the block, where today's
rediscretisation gives 12-16 (docs/performance-log.md, session 44).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

import bc_prototype as bp  # noqa: E402


def build_galerkin(k, kinds, geom='vertex', ncoarsest=3):
    """bc_prototype.build's levels with A_c = R A P below the fine one."""
    levels = []
    n = list(k.shape[::-1])  # x, y, z
    A = bp.assemble(k, kinds, [bp.spacing(n[a], kinds[a], 1.0) for a in range(3)])
    while True:
        lev = bp.level(A, n, ncoarsest)
        levels.append(lev)
        if lev.get('coarsest'):
            return levels
        Ps, nn = zip(*(bp.interp1d(n[a], kinds[a], geom) for a in range(3)))
        P = bp.prolongation(Ps)
        lev['P'] = P
        lev['R'] = P.T.tocsr() / 8.0
        A = (lev['R'] @ A @ P).tocsr()
        n = list(nn)


if __name__ == '__main__':
    for m, kinds in [(33, 'VVV'), (65, 'VVV'), (31, 'DDD'), (63, 'DDD'), (32, 'PPP'), (64, 'PPP')]:
        shape = (m, m, m)
        for kf in ('const', 'block'):
            k = np.ones(shape) if kf == 'const' else bp.block_k(shape)
            f = np.random.default_rng(1).standard_normal(k.size)
            singular = all(c != 'D' for c in kinds)
            r = bp.pcg(bp.build(k, list(kinds), [1, 1, 1], 'vertex'), f, singular)
            g = bp.pcg(build_galerkin(k, list(kinds)), f, singular)
            print(m, kinds, kf, 'redisc', r, 'galerkin', g, flush=True)
