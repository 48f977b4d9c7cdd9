// The point updates of the variable-coefficient set-up (src/solver/coefficients.hpp): face
// weights, a coarse point field (sigma), the boundary's ghosts, the spectrum bound and the largest
// diagonal. Part of point_ops.hpp (which includes it; a file of its own for its length): the host
// and CUDA backends call these and differ only in how they visit the points, so both give the same
// bits.
#pragma once
#include <cstdint>

#include "point_ops.hpp"

namespace halo3d::ops {

// The weight of the face between points with k_low (the lower along the axis) and k_high:
// their harmonic mean times inv_h2 (1/h^2 of the axis), written so that equal values give
// exactly that value and no product overflows.
HALO3D_HD inline double face_weight(double k_low, double k_high, double inv_h2) {
  return mul(mul(mul(2.0, k_low), div(k_high, k_low + k_high)), inv_h2);
}

// Whether global index g of axis a lies in a Neumann boundary plane of p.
HALO3D_HD inline bool in_neumann_plane(const NeumannPlanes& p, int a, int g) {
  return ((p.faces >> (2 * a) & 1) && g == 0) ||
         ((p.faces >> (2 * a + 1) & 1) && g == p.place.grid[a] - 1);
}
// The area fraction of a face of axis a at global point g: 1/2 for each other axis on whose
// Neumann plane it lies (exact powers of two).
HALO3D_HD inline double neumann_area(const NeumannPlanes& p, int a, const int g[3]) {
  double f = 1.0;
  for (int b = 0; b < 3; ++b)
    if (b != a && in_neumann_plane(p, b, g[b])) f *= 0.5;
  return f;
}
// The factor of the face between global point g and its +a neighbour (dual-cell finite
// volumes, A divided by the full cell volume): 0 between a boundary node and the ghost beyond
// its Neumann face (no flux but the source g), else the face's area fraction.
HALO3D_HD inline double neumann_face_factor(const NeumannPlanes& p, int a, const int g[3]) {
  if (((p.faces >> (2 * a) & 1) && g[a] == -1) ||
      ((p.faces >> (2 * a + 1) & 1) && g[a] == p.place.grid[a] - 1))
    return 0.0;
  return neumann_area(p, a, g);
}
// The control-volume fraction V_p of global point g (1/2 for each Neumann plane it lies in):
// the shift and the right-hand side are scaled by it.
HALO3D_HD inline double neumann_volume(const NeumannPlanes& p, const int g[3]) {
  double v = 1.0;
  for (int b = 0; b < 3; ++b)
    if (in_neumann_plane(p, b, g[b])) v *= 0.5;
  return v;
}

// Point (x, y, z) of the box of layout l: v times its control volume's fraction (sigma V_p,
// the shift of a point in Neumann planes; heat's mass V u), or divided by it (divide: V^{-1},
// explicit heat's step). Exact: V_p is a power of two. Each point reads and writes only itself.
HALO3D_HD inline void volume_scale_point(const Layout& l, const NeumannPlanes& np, bool divide,
                                         double* v, int x, int y, int z) {
  const int g[3] = {np.place.offset[0] + x, np.place.offset[1] + y, np.place.offset[2] + z};
  const double f = neumann_volume(np, g);
  double& p = v[l.at(x, y, z)];
  p = mul(p, divide ? div(1.0, f) : f);
}

// The face weights at point (x, y, z) of the padded box of layout l: array a (of 3, n =
// padded_size() apart) holds at point c the face between c and its +a neighbour, for every
// point but the ghost layer above along a (the sweeps read the box's faces and, along a, the
// ghost layer's below; multigrid's coarse faces also those of the ghost lines beside the
// box, boundary faces included, which no exchange brings). k: over the padded box,
// every ghost filled; spacing: cx, cy, cz are 1/h^2 per axis; np: the Neumann planes, whose
// factors (neumann_face_factor) multiply the weights (none: the bits of the plain formula).
HALO3D_HD inline void face_weights_point(const Layout& l, const Stencil& spacing,
                                         const NeumannPlanes& np, const double* k, double* w, int x,
                                         int y, int z) {
  const std::ptrdiff_t c = l.at(x, y, z), n = std::ptrdiff_t(l.padded_size());
  const std::ptrdiff_t step[3] = {1, l.sy(), l.sz()};
  const double inv_h2[3] = {spacing.cx, spacing.cy, spacing.cz};
  const int idx[3] = {x, y, z};
  const int top[3] = {l.nx, l.ny, l.nz};
  for (int a = 0; a < 3; ++a) {
    if (idx[a] == top[a]) continue;  // its +a neighbour is off the padded box
    const double plain = face_weight(k[c], k[c + step[a]], inv_h2[a]);
    if (np.faces == 0) {
      w[a * n + c] = plain;
      continue;
    }
    const int g[3] = {np.place.offset[0] + x, np.place.offset[1] + y, np.place.offset[2] + z};
    const double f = neumann_face_factor(np, a, g);
    w[a * n + c] = f == 0.0 ? 0.0 : mul(plain, f);
  }
}

// D^{-1} at point (x, y, z) of the padded box of l (FaceWeights::inv_diag): 1 / point_diag
// at the box's points, 0 in the ghost layer (the caller exchanges the neighbours' values in;
// beyond the domain's boundary the ghosts of b are 0, and so is the start step's value).
HALO3D_HD inline void inverse_diagonal_point(const Layout& l, const FaceWeights<double>& f,
                                             double shift, double* out, int x, int y, int z) {
  const bool in = x >= 0 && x < l.nx && y >= 0 && y < l.ny && z >= 0 && z < l.nz;
  const std::ptrdiff_t c = l.at(x, y, z);
  out[c] = in ? div(1.0, point_diag(f, c, l.sy(), l.sz(), shift)) : 0.0;
}

// The fine rows a coarse row (J, K) reads, at most S each way (rows past a coarse point's
// count repeat its last row with weight 0, as in the restriction), and the y-z
// products of their weights, computed once per row.
template <class T, int S = 3>
struct RestrictRow {
  const T* row[S][S];  // [z][y]: fine rows at x = 0
  T wzy[S][S];
};
template <int S, class T>
HALO3D_HD inline RestrictRow<T, S> restrict_row(const Transfer& t, const T* fine, int J, int K) {
  const TransferWeights<T>& w = weights_of(t, T());
  RestrictRow<T, S> r;
  const int* iy = t.ridx[1] + 2 * std::ptrdiff_t(J);
  const int* iz = t.ridx[2] + 2 * std::ptrdiff_t(K);
  const T* ey = w.rw[1] + 4 * std::ptrdiff_t(J);
  const T* ez = w.rw[2] + 4 * std::ptrdiff_t(K);
  for (int c = 0; c < S; ++c)
    for (int b = 0; b < S; ++b) {
      r.wzy[c][b] = mul(ez[c], ey[b]);  // 0 past either count
      const int y = iy[0] + (b < iy[1] ? b : iy[1] - 1), z = iz[0] + (c < iz[1] ? c : iz[1] - 1);
      r.row[c][b] = fine + t.fine.at(0, y, z);
    }
  return r;
}
// k at coarse point I of a row from k at t.fine's points (every ghost filled): the mean of
// the fine values the restriction gathers there (r: restrict_row's rows of the fine k),
// weighted by its weights (each the product of the axes' weights, z-y-x), normalised to sum
// to 1. The terms past the counts add zero weights.
template <int S>
HALO3D_HD inline double coarsen_point(const Transfer& t, const RestrictRow<double, S>& r, int I) {
  const int* ix = t.ridx[0] + 2 * std::ptrdiff_t(I);
  const double* ex = t.wd.rw[0] + 4 * std::ptrdiff_t(I);
  double num = 0, den = 0;
  for (int c = 0; c < S; ++c)
    for (int b = 0; b < S; ++b)
      for (int a = 0; a < S; ++a) {
        const double wt = mul(r.wzy[c][b], ex[a]);
        num += mul(wt, r.row[c][b][ix[0] + (a < ix[1] ? a : ix[1] - 1)]);
        den += wt;
      }
  return div(num, den);
}

// Point (x, y, z) of the padded box ([-1, n] per axis) of a non-empty layout: a ghost beyond
// one of the box's sides on the domain's boundary (bit 2 a + side of `sides`, side 1 high)
// takes the value of the nearest point of the box (coarse levels have no boundary layer of
// their own). Reads only points no call writes, so the points may go in any order.
HALO3D_HD inline void boundary_ghost_point(const Layout& l, int sides, double* k, int x, int y,
                                           int z) {
  const int n[3] = {l.nx, l.ny, l.nz};
  int idx[3] = {x, y, z};
  bool moved = false;
  for (int a = 0; a < 3; ++a) {
    if (idx[a] < 0 && (sides >> (2 * a) & 1)) idx[a] = 0, moved = true;
    if (idx[a] >= n[a] && (sides >> (2 * a + 1) & 1)) idx[a] = n[a] - 1, moved = true;
  }
  if (moved) k[l.at(x, y, z)] = k[l.at(idx[0], idx[1], idx[2])];
}

// Maxima over points as integers (magnitude_bits): an integer maximum is exact in any order
// and on any backend, so these reductions give the same bits on every process grid.
// Gershgorin's bound at interior point (x, y, z): 1 + the ratio of its off-diagonal weights
// (neighbours that are unknowns only: one beyond the global grid is a Dirichlet value) to
// its diagonal (the shift, or sigma_c, then each axis's two faces), as a maximum's word: a
// value below 1 or NaN counts as 1, the bound's least.
HALO3D_HD inline std::uint64_t spectrum_word(const Layout& l, const FaceWeights<double>& f,
                                             double shift, const BoxPlace& p, int x, int y, int z) {
  const std::ptrdiff_t c = l.at(x, y, z);
  const std::ptrdiff_t step[3] = {1, l.sy(), l.sz()};
  const int idx[3] = {x, y, z};
  double diag = f.sigma ? f.sigma[c] : shift, off = 0;
  for (int a = 0; a < 3; ++a) {
    const double lo = f.w[a][c - step[a]], hi = f.w[a][c];
    diag += lo + hi;
    const int g = p.offset[a] + idx[a];
    if (g > 0) off += lo;
    if (g + 1 < p.grid[a]) off += hi;
  }
  const double v = 1.0 + div(off, diag);
  return magnitude_bits(v >= 1.0 ? v : 1.0);
}
// The diagonal of point (x, y, z) (point_diag) divided by its control volume's fraction V_p
// under np (neumann_volume: 1 without Neumann planes), as a maximum's word: the diagonal of
// M^{-1} A, M = diag V_p, whose largest value bounds explicit heat's step (Gershgorin on M^{-1}
// A). The division by a power of two is exact. NaN (weights that overflowed, inf times 0: an
// unusable operator, not a small one) counts as +inf, a value <= 0 as 0.
HALO3D_HD inline std::uint64_t diagonal_word(const Layout& l, const FaceWeights<double>& f,
                                             double shift, const NeumannPlanes& np, int x, int y,
                                             int z) {
  double d = point_diag(f, l.at(x, y, z), l.sy(), l.sz(), shift);
  if (np.faces) {
    const int g[3] = {np.place.offset[0] + x, np.place.offset[1] + y, np.place.offset[2] + z};
    d = div(d, neumann_volume(np, g));
  }
  if (d != d) return 0x7FF0000000000000ull;  // +inf's bits
  return d > 0 ? magnitude_bits(d) : 0;
}

}  // namespace halo3d::ops
