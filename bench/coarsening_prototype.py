"""Coarse levels for a jumping coefficient on halo3d's Dirichlet hierarchy: MG-PCG iterations
to 1e-8 (random right-hand side, seed 1) for k = 1e4 in the octant x, y, z < 0.5 (the
`--coefficient 'expr:(x<0.5 && y<0.5 && z<0.5) ? 1e4 : 1'` of issue 25's target), in
numpy/scipy. The model is bench/bc_prototype.py's (halo3d's operator, Chebyshev 2+2, R =
s P^T, exact coarsest solve); its counts with halo3d's hierarchy equal halo3d's (127^3: 14,
128^3: 18, 129^3: 14). Options per run:

  --coarse redisc     k averaged by the normalised restriction weights, rediscretised (halo3d)
           galerkin   R A P (27 points): what a Galerkin coarse operator would give
           flux       face conductances in series along the face's normal and in parallel
                      (restriction-weighted) across it, from the fine faces
           collapsed  R A P collapsed to 7 points: each off-diagonal entry shared equally
                      among the axes it is off along, row sums kept
           axis       R A_a P per axis lumped onto the a-line (halo3d since session 45,
                      kernels/galerkin_ops.hpp); couplings two apart (non-nested steps) as two
                      faces of 2v in series (SERIES; False keeps them as they are)
  --k      block (the octant), slab (x < 0.3), L (x < 0.3 or y > 0.6 and z < 0.4), one
  --sizes  halo3d     even N -> N+1 intervals to ceil((N+1)/1.5) (ratio 1.5), odd N nests
           half       even N -> N/2 - 1 (ratio (N+1)/(N/2), just above 2), odd N nests

    /usr/bin/python3 bench/coarsening_prototype.py --grid 64,128 --coarse redisc,galerkin \
        --sizes halo3d,half

Measured 2026-12-05 on the 2-core VM (block k / k = 1):
  redisc, halo3d:  31: 12, 32: 12, 63: 14, 64: 13, 127: 14, 128: 18 / 7, 129: 14, 256: 19 / 7
  galerkin, halo3d: 31: 10, 32: 9, 63: 10, 64: 9, 127: 10, 128: 14, 129: 10
  flux, halo3d:    31: 18, 32: 19, 63: 21, 64: 24 (k = 1: 7)
  redisc, half:    64: 11 / 7, 128: 12 / 7, 256: 13 / 7
Session 44 (2026-12-06), --sizes half (halo3d's hierarchy since session 37), 32^3 / 64^3:
  redisc:    block 10 / 11, slab 15 / 16, L 14 / 18, one 7 / 7
  galerkin:  block 6 / 6, slab 10 / 10, L 14 / 17, one 6 / 6
  flux:      slab 16 / 17, L 18 / 23
  collapsed: block 21 / 29, slab 39 / 34, L 48 / 100, one 20 / 29
(docs/performance-log.md, "Blocks of k that are not the octant").
Session 45 (2026-12-07), --sizes half, 32^3 / 64^3 / 127^3 / 128^3:
  axis:      block 9 / 9 / 11 / 9, slab 12 / 11 / 11 / 12, L 13 / 14 / 13 / 14, one 7 / 7
(docs/performance-log.md, "Galerkin coarse faces for variable k").
So the count's growth on even grids (halo3d's 512^3: 22) comes from the ratio-1.5 first
coarsening, not from the coarse operator: ratio 2 keeps it at 11-13, and the smaller level 1
(N/2 - 1 instead of 2N/3 points per axis) would make the V-cycle cheaper too. halo3d cannot
take it as it stands: with ratio above 2 a coarse point's restriction reads 4 fine points per
axis, and on a distributed level the owned coarse points' spans then need two ghost layers
(mg_coarse_first's rule cannot place them within one).
"""
import argparse
import sys

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from bc_prototype import assemble, harm, level, pcg, prolongation  # noqa: E402

def coarser_halo3d(n):
    if n <= 1: return n
    if n % 2 == 1: return (n - 1) // 2
    m = (2 * (n + 1) + 2) // 3
    if m % 2: m += 1
    return m - 1

def interp(nf, nc):
    mf, mc = nf + 1, nc + 1
    P = np.zeros((nf, nc))
    for i in range(nf):
        num = (i + 1) * mc
        lo = num // mf - 1; t = (num % mf) / mf
        if 0 <= lo < nc: P[i, lo] += 1 - t
        if 0 <= lo + 1 < nc and t > 0: P[i, lo + 1] += t
    return P

def coarser_half(n):
    if n <= 2: return 1 if n == 2 else n
    return (n - 1) // 2 if n % 2 else n // 2 - 1

def fine_k_faces(k, a):
    """Face conductances (harmonic k) along axis a, including the two boundary faces
    (boundary k = nearest point's), shape with n+1 along a."""
    ax = 2 - a
    lo = np.take(k, [0], axis=ax); hi = np.take(k, [k.shape[ax] - 1], axis=ax)
    kk = np.concatenate([lo, k, hi], axis=ax)
    s0 = [slice(None)] * 3; s1 = [slice(None)] * 3
    s0[ax] = slice(0, -1); s1[ax] = slice(1, None)
    return harm(kk[tuple(s0)], kk[tuple(s1)])

def series_matrix(nf, nc):
    """S (nc+1, nf+1): 1/k_eff of coarse face J = sum_f S[J,f] / k_f (fraction of the coarse
    interval J covered by fine face f). Fine face f spans positions [f, f+1]; coarse point I
    at (I+1) r, coarse face J spans [J r, (J+1) r]."""
    mf, mc = nf + 1, nc + 1
    r = mf / mc
    S = np.zeros((nc + 1, nf + 1))
    for J in range(nc + 1):
        a0, a1 = J * r, (J + 1) * r
        for f in range(int(np.floor(a0)), min(nf + 1, int(np.ceil(a1)))):
            ov = min(a1, f + 1) - max(a0, f)
            if ov > 1e-12: S[J, f] = ov / r
    return S

def transverse_matrix(nf, nc):
    """T (nc, nf): normalised restriction weights (rows of P^T)."""
    P = interp(nf, nc)
    T = P.T.copy()
    return T / T.sum(axis=1, keepdims=True)

def coarse_faces(kf_faces, n, nc):
    """kf_faces[a]: fine face conductances along a (n+1 along a). Returns coarse ones."""
    out = []
    for a in range(3):
        kf = kf_faces[a]  # shape (z, y, x) with n[a]+1 along axis 2-a
        res = 1.0 / kf
        # series along a
        S = series_matrix(n[a], nc[a])
        ax = 2 - a
        res = np.moveaxis(np.tensordot(S, np.moveaxis(res, ax, 0), axes=(1, 0)), 0, ax)
        keff = 1.0 / res
        # parallel across the other two axes
        for b in range(3):
            if b == a: continue
            T = transverse_matrix(n[b], nc[b])
            bx = 2 - b
            keff = np.moveaxis(np.tensordot(T, np.moveaxis(keff, bx, 0), axes=(1, 0)), 0, bx)
        out.append(keff)
    return out

def assemble_faces(kfaces, n, h):
    """Operator from face conductances (n+1 along each axis incl. boundary faces)."""
    nx, ny, nz = n
    N = nx * ny * nz
    idx = np.arange(N).reshape(nz, ny, nx)
    diag = np.zeros((nz, ny, nx)); rows = []; cols = []; vals = []
    for a in range(3):
        ax = 2 - a
        w = kfaces[a] / h[a] ** 2
        m = n[a]
        sl = lambda lo, hi: tuple(slice(lo, hi) if d == ax else slice(None) for d in range(3))
        wl = w[sl(0, m)]; wr = w[sl(1, m + 1)]  # face below and above each point
        diag += wl + wr
        inner = w[sl(1, m)]
        p = idx[sl(0, m - 1)]; q = idx[sl(1, m)]
        rows += [p.ravel(), q.ravel()]; cols += [q.ravel(), p.ravel()]; vals += [-inner.ravel()] * 2
    rows.append(idx.ravel()); cols.append(idx.ravel()); vals.append(diag.ravel())
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(N, N))

def build(k, coarse, coarser, ncoarsest=3):
    n = list(k.shape[::-1])
    h = [1.0 / (m + 1) for m in n]
    kfaces = [fine_k_faces(k, a) for a in range(3)]
    A = assemble_faces(kfaces, n, h) if coarse == "flux" else assemble(k, "DDD", h)
    if coarse == "axis":
        Aa = [assemble_faces([kfaces[a] if b == a else 0 * kfaces[b] for b in range(3)], n, h)
              for a in range(3)]
    levels = []
    while True:
        lev = level(A, n, ncoarsest)
        levels.append(lev)
        if lev.get("coarsest"):
            return levels
        nc = [coarser(m) for m in n]
        Ps = [interp(n[a], nc[a]) for a in range(3)]
        P = prolongation(Ps)
        s = np.prod([(nc[a] + 1) / (n[a] + 1) for a in range(3)])
        lev["P"] = P
        lev["R"] = (P.T * s).tocsr()
        h = [1.0 / (m + 1) for m in nc]
        if coarse == "redisc":
            R = P.T
            k = ((R @ k.ravel()) / (R @ np.ones(k.size))).reshape(nc[2], nc[1], nc[0])
            A = assemble(k, "DDD", h)
        elif coarse == "galerkin":
            A = (lev["R"] @ A @ P).tocsr()
        elif coarse == "axis":
            Aa = [lump_axis(lev["R"] @ Aa[a] @ P, nc, a) for a in range(3)]
            A = (Aa[0] + Aa[1] + Aa[2]).tocsr()
        elif coarse == "collapsed":
            A = collapse(lev["R"] @ A @ P, nc)
        else:
            kfaces = coarse_faces(kfaces, n, nc)
            A = assemble_faces(kfaces, nc, h)
        n = nc


def collapse(G, n):
    """G (27 points) as 7: an entry off along m axes adds 1/m of itself to the face
    neighbour along each of them; the diagonal keeps G's row sums."""
    G = G.tocoo()
    strides = [1, n[0], n[0] * n[1]]
    off = G.row != G.col
    row, col, val = G.row[off], G.col[off], G.data[off]
    d = [(col // s) % m - (row // s) % m for s, m in zip(strides, n)]
    axes = sum(np.abs(x) for x in d)
    rows, cols, vals = [], [], []
    for a in range(3):
        for sign in (-1, 1):
            m = d[a] == sign
            rows.append(row[m]); cols.append(row[m] + sign * strides[a]); vals.append(val[m] / axes[m])
    N = int(np.prod(n))
    O = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(N, N))
    diag = np.asarray(G.sum(axis=1)).ravel() - np.asarray(O.sum(axis=1)).ravel()
    return (O + sp.diags(diag)).tocsr()


SERIES = True  # --coarse axis: couplings two apart as two faces in series (halo3d's rule)


def lump_axis(G, n, a):
    """G = R A_a P (27 points) lumped onto the axis a: each entry goes to the point of its
    row's a-line at the same offset along a (the transverse offsets summed)."""
    G = G.tocoo()
    strides = [1, n[0], n[0] * n[1]]
    da = (G.col // strides[a]) % n[a] - (G.row // strides[a]) % n[a]
    N = int(np.prod(n))
    L = sp.csr_matrix((G.data, (G.row, G.row + da * strides[a])), shape=(N, N))
    if SERIES:
        # couplings 2 apart (non-nested steps): conductance v between I and I+2 becomes 2v on
        # each of the two faces between them (in series: v again); row sums kept.
        L = L.tocoo()
        d = (L.col // strides[a]) % n[a] - (L.row // strides[a]) % n[a]
        rowsum = np.asarray(L.sum(axis=1)).ravel()
        m1 = d == 1
        face = {}  # lower point -> conductance of its +a face
        for r, v in zip(L.row[m1], -L.data[m1]): face[r] = face.get(r, 0) + v
        m2 = d == 2
        for r, v in zip(L.row[m2], -L.data[m2]):
            face[r] = face.get(r, 0) + 2 * v
            face[r + strides[a]] = face.get(r + strides[a], 0) + 2 * v
        assert abs(d).max() <= 2
        rows, cols, vals = [], [], []
        diag = rowsum.copy()
        for r, v in face.items():
            q = r + strides[a]
            rows += [r, q]; cols += [q, r]; vals += [-v, -v]; diag[r] += v; diag[q] += v
        L = (sp.csr_matrix((vals, (rows, cols)), shape=(N, N)) + sp.diags(diag)).tocsr()
    asym = abs(L - L.T).max() / abs(L).max()
    if asym > 1e-12: print("lump_axis asymmetry", asym, file=sys.stderr)
    return L


def k_field(kind, n, contrast=1e4):
    """k = contrast on a block (see --k), else 1, at the points (i + 1) / (n + 1)."""
    if kind == "one":
        return np.ones(n[::-1])
    x = [(np.arange(m) + 1) / (m + 1) for m in n[::-1]]
    Z, Y, X = np.meshgrid(*x, indexing="ij")
    inside = {"block": (X < 0.5) & (Y < 0.5) & (Z < 0.5), "slab": X < 0.3,
              "L": (X < 0.3) | ((Y > 0.6) & (Z < 0.4)),
              "center": (abs(X - 0.5) < 0.2) & (abs(Y - 0.5) < 0.2) & (abs(Z - 0.5) < 0.2)}[kind]
    return np.where(inside, contrast, 1.0)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--grid", default="64")
    ap.add_argument("--coarse", default="redisc")
    ap.add_argument("--sizes", default="halo3d")
    ap.add_argument("--k", default="block", help="block, slab, L, one (comma-separated)")
    a = ap.parse_args()
    rules = {"halo3d": coarser_halo3d, "half": coarser_half}
    for N in map(int, a.grid.split(",")):
        f = np.random.default_rng(1).standard_normal(N ** 3)
        for kind in a.k.split(","):
            k = k_field(kind, (N, N, N))
            for c in a.coarse.split(","):
                for r in a.sizes.split(","):
                    print(f"{N}^3 k={kind} coarse={c} sizes={r}: "
                          f"{pcg(build(k, c, rules[r]), f, False)} iterations", flush=True)
