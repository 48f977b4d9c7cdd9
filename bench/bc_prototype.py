"""Design prototype for issue 25's --bc (periodic and Neumann axes): MG-PCG iteration counts
to 1e-8 in numpy/scipy, for candidate geometries, before any of it is built in halo3d.

The model is halo3d's: 7-point face-weight operator (harmonic-mean faces), rediscretised
coarse levels with k averaged by the normalised restriction weights, Chebyshev 2+2 on
D^-1 A over [b/6, b] with b the Gershgorin bound, R = P^T / 8, the coarsest level solved
exactly, PCG on a random right-hand side (projected to zero mean, with the preconditioned
residual, when no axis is Dirichlet). Its Dirichlet counts equal halo3d's (63^3: 7 with
k = 1, 14 with the 1e4 block, `halo3d solve --grid 63,63,63 --rhs random --tol 1e-8`).

`/usr/bin/python3 bench/bc_prototype.py` (about 10 minutes on the 2-core VM) printed:

case                                                     grid  k = 1  block 1e4
dirichlet, vertex (halo3d today)                     63x63x63      7         14
periodic, vertex-nested, wrapped ghosts              64x64x64      7         15
neumann, node-centred (boundary nodes unknown)       65x65x65      7         16
neumann, zero boundary faces, vertex transfers       63x63x63     30         57
  same, interpolation reflects at the boundary       63x63x63     31         32
neumann, cell-centred transfers (3/4, 1/4)           64x64x64      8         21
periodic, cell-centred transfers                     64x64x64      8         22
dirichlet, cell-centred transfers                    64x64x64      8         17
x periodic, y neumann (node), z dirichlet            64x65x63      8         16
x, y periodic, z neumann (node)                      64x64x65      7         16

So: a periodic axis keeps today's transfers (coarse I at fine 2I+1) with N even -> N/2 and
ghosts filled by the wrap; a Neumann axis is node-centred (its boundary nodes are unknowns,
x_i = i L/(N-1), N odd -> (N+1)/2 with coarse I at fine 2I, no boundary face, faces along a
Neumann boundary halved and the right-hand side and shift scaled by the control volume's
fraction, so the operator stays symmetric). Zeroing the boundary faces on today's layout
(a cell-centred operator under vertex-nested transfers: the coarse domain is shorter than
the fine one) costs 4x the iterations; cell-centred transfers cost more with the block.
"""
import numpy as np
import scipy.sparse as sp

def harm(a, b):
    return 2 * a * b / (a + b)

def assemble(k, kinds, h):
    """k: (nz,ny,nx) point values; kinds[a] in 'D','N','P' per axis (x,y,z); h[a] spacing.
    Face-weight operator: sum over faces w (u_p - u_q); Dirichlet boundary face: weight k_p/h^2
    to a zero ghost; Neumann: 0; periodic: wraps."""
    n = k.size
    shape = k.shape
    idx = np.arange(n).reshape(shape)
    rows, cols, vals = [], [], []
    diag = np.zeros(shape)
    for a in range(3):
        ax = 2 - a  # numpy axis of x is 2
        m = shape[ax]
        kl = k
        kr = np.roll(k, -1, axis=ax)
        w = harm(kl, kr) / h[a] ** 2  # face between p and p+1 (wrapping)
        for b in range(3):  # node-centred Neumann: a face along a boundary of axis b is halved
            if b != a and kinds[b] == 'V':
                bx = 2 - b
                frac = np.ones(shape[bx]); frac[0] = frac[-1] = 0.5
                sh = [1, 1, 1]; sh[bx] = shape[bx]
                w = w * frac.reshape(sh)
        il = idx
        ir = np.roll(idx, -1, axis=ax)
        interior = np.ones(shape, bool)
        sl = [slice(None)] * 3
        sl[ax] = m - 1
        if kinds[a] != 'P':
            interior[tuple(sl)] = False
        wi = w[interior]
        rows += [il[interior], ir[interior]]
        cols += [ir[interior], il[interior]]
        vals += [-wi, -wi]
        wfull = np.where(interior, w, 0.0)
        diag += wfull + np.roll(wfull, 1, axis=ax)
        if kinds[a] == 'D':  # boundary faces to the zero ghost, weight k_p / h^2
            lo = [slice(None)] * 3; lo[ax] = 0
            hi = [slice(None)] * 3; hi[ax] = m - 1
            diag[tuple(lo)] += k[tuple(lo)] / h[a] ** 2
            diag[tuple(hi)] += k[tuple(hi)] / h[a] ** 2
    rows.append(idx.ravel()); cols.append(idx.ravel()); vals.append(diag.ravel())
    A = sp.csr_matrix((np.concatenate(vals), (np.concatenate([r.ravel() for r in rows]),
                                               np.concatenate([c.ravel() for c in cols]))), shape=(n, n))
    return A

def interp1d(n, kind, geom):
    """Returns (P (n x nc), nc) for one axis."""
    if kind == 'V':  # node-centred: boundary nodes are unknowns; coarse I at fine 2I
        assert n % 2 == 1
        nc = (n + 1) // 2
        P = np.zeros((n, nc))
        for I in range(nc):
            P[2 * I, I] = 1
            if 2 * I - 1 >= 0: P[2 * I - 1, I] = 0.5
            if 2 * I + 1 < n: P[2 * I + 1, I] = 0.5
        return P, nc
    if geom == 'vertex':  # coarse I at fine 2I+1 (Dirichlet's nested scheme)
        if kind == 'P':
            assert n % 2 == 0
            nc = n // 2
        else:
            assert n % 2 == 1
            nc = (n - 1) // 2
        P = np.zeros((n, nc))
        for I in range(nc):
            P[2 * I + 1, I] = 1
            P[2 * I, I] += 0.5
            if 2 * I + 2 < n:
                P[2 * I + 2, I] += 0.5
            elif kind == 'P':
                P[0, I] += 0.5  # wraps: fine 2nc = fine 0
        if kind == 'N+':  # reflect: fine 0 = c_0 (ghost copies the first coarse point)
            P[0, 0] = 1.0
        return P, nc
    if geom == 'cell':  # coarse cell I = fine cells 2I, 2I+1; linear (3/4, 1/4)
        assert n % 2 == 0
        nc = n // 2
        P = np.zeros((n, nc))
        for I in range(nc):
            for f, nb in ((2 * I, I - 1), (2 * I + 1, I + 1)):
                P[f, I] += 0.75
                if 0 <= nb < nc:
                    P[f, nb] += 0.25
                elif kind == 'P':
                    P[f, nb % nc] += 0.25
                elif kind in ('N', 'N+'):
                    P[f, I] += 0.25  # reflect
                # Dirichlet cell-centred: ghost = -c_I (zero on the face)
                else:
                    P[f, I] -= 0.25
        return P, nc
    raise ValueError(geom)

def coarsen_k(k, Ps):
    # restriction-weighted mean (normalised rows of P^T), as halo3d's coarsen_kappa
    Px, Py, Pz = Ps
    R = sp.kron(sp.kron(sp.csr_matrix(Pz.T), sp.csr_matrix(Py.T)), sp.csr_matrix(Px.T))
    num = R @ k.ravel()
    den = R @ np.ones(k.size)
    return (num / den).reshape(Pz.shape[1], Py.shape[1], Px.shape[1])

def spacing(n, kind, length):
    """h of an axis of n points on the vertex layout: periodic and zero-face Neumann L/n,
    node-centred Neumann L/(n-1), Dirichlet L/(n+1)."""
    if kind in ('P', 'N', 'N+'):
        return length / n
    return length / (n - 1) if kind == 'V' else length / (n + 1)

def level(A, n, ncoarsest):
    """A level of operator A on n points an axis: its diagonal, the Gershgorin bound b of
    D^-1 A, and below ncoarsest points an axis its pseudo-inverse (the exact coarsest solve)."""
    lev = {'A': A, 'D': A.diagonal()}
    off = np.asarray(abs(A).sum(axis=1)).ravel() - lev['D']
    lev['b'] = 1 + np.max(off / lev['D'])
    if min(n) <= ncoarsest:
        lev['coarsest'] = True
        lev['pinv'] = np.linalg.pinv(A.toarray())
    return lev

def prolongation(Ps):
    """The 3D interpolation from the axes' (x, y, z) 1D ones."""
    return sp.kron(sp.kron(sp.csr_matrix(Ps[2]), sp.csr_matrix(Ps[1])), sp.csr_matrix(Ps[0])).tocsr()

def build(k, kinds, L, geom, ncoarsest=3):
    levels = []
    n = list(k.shape[::-1])  # x, y, z
    while True:
        if geom == 'vertex':
            h = [spacing(n[a], kinds[a], L[a]) for a in range(3)]
        else:
            h = [L[a] / n[a] for a in range(3)]
        akinds = ['N' if c == 'N+' else c for c in kinds]
        lev = level(assemble(k, akinds, h), n, ncoarsest)
        levels.append(lev)
        if lev.get('coarsest'):
            break
        Ps = []
        nn = []
        for a in range(3):
            P, nc = interp1d(n[a], kinds[a], geom)
            Ps.append(P); nn.append(nc)
        P = prolongation(Ps)
        lev['P'] = P
        lev['R'] = P.T.tocsr() / 8.0
        k = coarsen_k(k, Ps)
        n = nn
    return levels

def cheb(A, Dinv, b, f, x, steps):
    lo, hi = b / 6, b
    theta, delta = (hi + lo) / 2, (hi - lo) / 2
    sigma = theta / delta
    rho = 1 / sigma
    r = f - A @ x
    d = Dinv * r / theta
    for i in range(steps):
        x = x + d
        if i + 1 == steps:
            break
        r = f - A @ x
        rho_new = 1 / (2 * sigma - rho)
        d = rho_new * rho * d + 2 * rho_new / delta * Dinv * r
        rho = rho_new
    return x

def vcycle(levels, l, f, s=2):
    L = levels[l]
    if L.get('coarsest'):
        return L['pinv'] @ f
    Dinv = 1 / L['D']
    x = cheb(L['A'], Dinv, L['b'], f, np.zeros_like(f), s)
    r = f - L['A'] @ x
    e = vcycle(levels, l + 1, L['R'] @ r, s)
    x = x + L['P'] @ e
    x = cheb(L['A'], Dinv, L['b'], f, x, s)
    return x

def pcg(levels, f, singular, tol=1e-8, maxit=100):
    A = levels[0]['A']
    proj = (lambda v: v - v.mean()) if singular else (lambda v: v)
    f = proj(f)
    x = np.zeros_like(f)
    r = f.copy()
    z = proj(vcycle(levels, 0, r))
    p = z.copy()
    rz = r @ z
    nf = np.linalg.norm(f)
    for it in range(1, maxit + 1):
        Ap = A @ p
        a = rz / (p @ Ap)
        x += a * p
        r -= a * Ap
        if np.linalg.norm(r) <= tol * nf:
            return it
        z = proj(vcycle(levels, 0, r))
        rz_new = r @ z
        p = z + rz_new / rz * p
        rz = rz_new
    return maxit

def block_k(shape):
    """k = 1e4 in the lower octant (by the points' index fractions), 1 elsewhere."""
    g = [(np.arange(m) + 0.5) / m for m in shape]
    Z, Y, X = np.meshgrid(*g, indexing='ij')
    k = np.ones(shape)
    k[(X < 0.5) & (Y < 0.5) & (Z < 0.5)] = 1e4
    return k


def run(shape, kinds, geom, kfield, seed=1):
    """MG-PCG iterations to 1e-8 on a random right-hand side; shape (nz, ny, nx)."""
    k = np.ones(shape) if kfield == 'const' else block_k(shape)
    levels = build(k, kinds, [1, 1, 1], geom)
    f = np.random.default_rng(seed).standard_normal(k.size)
    return pcg(levels, f, all(c != 'D' for c in kinds)), len(levels)


CASES = [  # label, kinds (x, y, z), geometry, shape (nz, ny, nx)
    ('dirichlet, vertex (halo3d today)', 'DDD', 'vertex', (63, 63, 63)),
    ('periodic, vertex-nested, wrapped ghosts', 'PPP', 'vertex', (64, 64, 64)),
    ('neumann, node-centred (boundary nodes unknown)', 'VVV', 'vertex', (65, 65, 65)),
    ('neumann, zero boundary faces, vertex transfers', 'NNN', 'vertex', (63, 63, 63)),
    ('  same, interpolation reflects at the boundary', ['N+'] * 3, 'vertex', (63, 63, 63)),
    ('neumann, cell-centred transfers (3/4, 1/4)', 'NNN', 'cell', (64, 64, 64)),
    ('periodic, cell-centred transfers', 'PPP', 'cell', (64, 64, 64)),
    ('dirichlet, cell-centred transfers', 'DDD', 'cell', (64, 64, 64)),
    ('x periodic, y neumann (node), z dirichlet', ['P', 'V', 'D'], 'vertex', (63, 65, 64)),
    ('x, y periodic, z neumann (node)', ['P', 'P', 'V'], 'vertex', (65, 64, 64)),
]

if __name__ == '__main__':
    print(f"{'case':50s} {'grid':>10s} {'k = 1':>6s} {'block 1e4':>10s}")
    for label, kinds, geom, shape in CASES:
        its = [run(shape, list(kinds), geom, kf)[0] for kf in ('const', 'block')]
        grid = 'x'.join(str(m) for m in shape[::-1])
        print(f'{label:50s} {grid:>10s} {its[0]:6d} {its[1]:10d}', flush=True)
