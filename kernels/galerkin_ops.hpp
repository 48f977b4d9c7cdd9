// The point updates of multigrid's coarse face weights for variable coefficients
// (src/solver/coefficients.hpp, "Coarse levels"): the Galerkin product R A P of the level
// above, taken one axis at a time and lumped to 7 points. Part of point_ops.hpp (which
// includes it; the spans come from transfer_ops.hpp); the host and CUDA backends call these
// and differ only in how they visit the points, so both give the same bits.
//
// The level above's operator is A = A_x + A_y + A_z (+ a shift, coarsened apart), A_a the
// differences along a weighted by its a-faces. With the tensor interpolation P (hats p_K per
// axis) and R = s P^T (s: Transfer's scale), R A_a P couples coarse points up to one apart in
// every axis. Summing each row's entries over the two other axes (lumping them onto the
// a-line; the interpolation of a constant transverse is the mass c(j) below) leaves a
// 3-point operator along a whose entry between I and I + e_a is the weight of that coarse
// face:
//   W = s sum_{transverse j, k} q_b(j) q_c(k) sum_{fine a-faces f} w_f kappa(f),
// q_b(j) = p_{I_b}(j) c_b(j), kappa(f) = -dp_I dp_{I+1} (dp: a hat's difference across f),
// symmetric by construction. Where the grids do not nest, a fine face that straddles a coarse
// point couples the coarse points either side of it (two apart); that coupling v is taken as
// two faces of 2v in series (the same conductance between the two, and 7 points kept):
// kappa gains -2 dp_{I-1} dp_{I+1} - 2 dp_I dp_{I+2}. A Dirichlet axis's boundary is the hat
// of coarse point -1 (or nc), whose coupling is the boundary face; behind a Neumann face the
// fine faces are 0 and so is the coarse one. For k = 1 this is the rediscretised operator;
// for a jumping k it is what carries the jump to every level (docs/PERFORMANCE.md, "Galerkin
// coarse faces").
//
// Each coarse face is the sum of two parts over the fine faces: U, those within the
// restriction's span of its lower point, computed there, and D, the rest, within the span of
// its upper point, computed there; the face is U + D, added in that order wherever it is
// made. So every part reads the faces between fine points the restriction reads (within one
// ghost layer; at a bounded axis's first and last coarse point also the fine boundary face,
// which can lie one beyond: Multigrid::coarse_parts), and a face's bits do not depend on
// which rank makes it.
#pragma once

#include "point_ops.hpp"
#include "transfer_ops.hpp"  // restrict_span

namespace halo3d::ops {

// The most fine points one coarse point's restriction reads along an axis, with room.
inline constexpr int kGalerkinSpan = 6;

// p_K(i): the weight of coarse point K (global, any: -1 and nc are a Dirichlet axis's
// boundary, beyond them on a periodic axis the next period's) at fine point i (global, any)
// along axis a of t: the hat of K, 1 at its position and 0 one coarse spacing away, in exact
// integer arithmetic then one division. 0 at positions off a bounded axis. Not
// interp_weight: that one takes fine points of the grid only and does not continue a
// periodic axis's hats past its ends, which the sums over unwrapped indices need.
HALO3D_HD inline double galerkin_hat(const Transfer& t, int a, int K, int i) {
  const long long mf = t.mf[a], mc = t.mc[a], at0 = t.at0[a];
  if (t.bounded[a] && (i + at0 < 0 || i + at0 > mf)) return 0.0;
  long long d = (i + at0) * mc - (K + at0) * mf;
  if (d < 0) d = -d;
  return d >= mf ? 0.0 : div(double(mf - d), double(mf));
}
// c(j): the interpolation of the constant 1 on the coarse unknowns at fine point j (below 1
// next to a Dirichlet boundary, whose hats are not unknowns).
HALO3D_HD inline double galerkin_mass(const Transfer& t, int a, int j) {
  if (!t.bounded[a]) return 1.0;
  return 1.0 - galerkin_hat(t, a, -1, j) - galerkin_hat(t, a, t.nc[a], j);
}
// kappa of a fine face for the coarse face (J, J + 1) from the differences across it of the
// hats J - 1, J, J + 1 and J + 2.
HALO3D_HD inline double galerkin_kappa(const double d[4]) {
  return -(mul(d[1], d[2]) + mul(2.0, mul(d[0], d[2])) + mul(2.0, mul(d[1], d[3])));
}

// The fine points of coarse point K's restriction along a (global) and their transverse
// weights q(j) = p_K(j) c(j).
struct GalerkinSpan {
  int first = 0, count = 0;
  double q[kGalerkinSpan];
};
HALO3D_HD inline GalerkinSpan galerkin_span(const Transfer& t, int a, int K) {
  GalerkinSpan s;
  int last;
  restrict_span(K, t.nf[a], t.mf[a], t.mc[a], s.first, last, t.at0[a], t.bounded[a]);
  s.count = last - s.first + 1;
  if (s.count > kGalerkinSpan) s.count = kGalerkinSpan;  // not reached: spans are 3 or 4
  for (int m = 0; m < s.count; ++m)
    s.q[m] = mul(galerkin_hat(t, a, K, s.first + m), galerkin_mass(t, a, s.first + m));
  return s;
}

// s sum over the transverse spans sp[b], sp[c] and the fine a-faces i in [i0, i1] of
// w_f kappa_J(f) q_b q_c, in one fixed order (c, then b, then i).
HALO3D_HD inline double galerkin_part(const Transfer& t, const double* w, const double* below,
                                      const GalerkinSpan sp[3], int a, int J, int i0, int i1) {
  const int b = (a + 1) % 3, c = (a + 2) % 3;
  double kap[kGalerkinSpan + 2];
  int n = i1 - i0 + 1;
  if (n > kGalerkinSpan + 2) n = kGalerkinSpan + 2;  // not reached
  // The four hats at the faces' n + 1 fine points, each once (a division each).
  double hat[4][kGalerkinSpan + 3];
  for (int q = 0; q < 4; ++q)
    for (int m = 0; m <= n; ++m) hat[q][m] = galerkin_hat(t, a, J - 1 + q, i0 + m);
  for (int m = 0; m < n; ++m) {
    double d[4];
    for (int q = 0; q < 4; ++q) d[q] = hat[q][m + 1] - hat[q][m];
    kap[m] = galerkin_kappa(d);
  }
  const std::ptrdiff_t nf = std::ptrdiff_t(t.fine.padded_size());
  const std::ptrdiff_t step = a == 0 ? 1 : (a == 1 ? t.fine.sy() : t.fine.sz());
  double sum = 0;
  int idx[3];
  for (int mc = 0; mc < sp[c].count; ++mc) {
    idx[c] = sp[c].first + mc - t.fo[c];
    for (int mb = 0; mb < sp[b].count; ++mb) {
      idx[b] = sp[b].first + mb - t.fo[b];
      const double q = mul(sp[c].q[mc], sp[b].q[mb]);
      double line = 0;
      int m = 0;
      idx[a] = i0 - t.fo[a];
      if (n > 0 && idx[a] < -1) {  // the one face below the ghost layer: below's, one up
        ++idx[a];
        line += mul(below[a * nf + t.fine.at(idx[0], idx[1], idx[2])], kap[0]);
        ++m;
      }
      if (m < n) {
        const double* f = w + a * nf + t.fine.at(idx[0], idx[1], idx[2]);
        for (int r = 0; m < n; ++m, ++r) line += mul(f[r * step], kap[m]);
      }
      sum += mul(q, line);
    }
  }
  return mul(t.wd.scale, sum);
}

// At coarse point (X, Y, Z) of t.coarse (local), for each axis a: parts[a] = U of the face to
// its +a neighbour, parts[3 + a] = D of the face to its -a neighbour (6 padded arrays of
// t.coarse, n apart). w: the level above's weights (3 padded arrays of t.fine, as
// face_weights lays them out); below: each fine point's face to its -a neighbour, read (one
// layer beyond the ghosts) only where Multigrid::coarse_parts exchanged it, else null.
HALO3D_HD inline void galerkin_parts_point(const Transfer& t, const double* w, const double* below,
                                           double* parts, int X, int Y, int Z) {
  const std::ptrdiff_t n = std::ptrdiff_t(t.coarse.padded_size()), c = t.coarse.at(X, Y, Z);
  const int g[3] = {t.co[0] + X, t.co[1] + Y, t.co[2] + Z};
  GalerkinSpan sp[3];
  for (int a = 0; a < 3; ++a) sp[a] = galerkin_span(t, a, g[a]);
  for (int a = 0; a < 3; ++a) {
    const int J = g[a], first = sp[a].first, last = first + sp[a].count - 1;
    const bool low_end = t.bounded[a] && J == 0, high_end = t.bounded[a] && J == t.nc[a] - 1;
    // U: the faces within this point's span; at a bounded axis's last point, every face up
    // to the fine boundary (the coupling to the boundary's hat).
    parts[a * n + c] =
        galerkin_part(t, w, below, sp, a, J, first, high_end ? t.nf[a] - 1 : last - 1);
    // D: from where the lower point's span ends; at the first point, from the fine boundary.
    int below_last = -1;
    if (!low_end) {
      int f;
      restrict_span(J - 1, t.nf[a], t.mf[a], t.mc[a], f, below_last, t.at0[a], t.bounded[a]);
    }
    parts[(3 + a) * n + c] = galerkin_part(t, w, below, sp, a, J - 1, below_last, last - 1);
  }
}

// The coarse level's weights at point (x, y, z) of the padded box of layout l, as
// Kernels::face_weights lays them out (all but the ghost layer above along a): w[a] at c =
// U at c + D at c + e_a (parts: 6 padded arrays of l with every ghost filled, zero beyond
// the domain's boundary).
HALO3D_HD inline void galerkin_faces_point(const Layout& l, const double* parts, double* w, int x,
                                           int y, int z) {
  const std::ptrdiff_t c = l.at(x, y, z), n = std::ptrdiff_t(l.padded_size());
  const std::ptrdiff_t step[3] = {1, l.sy(), l.sz()};
  const int idx[3] = {x, y, z}, top[3] = {l.nx, l.ny, l.nz};
  for (int a = 0; a < 3; ++a) {
    if (idx[a] == top[a]) continue;
    w[a * n + c] = parts[a * n + c] + parts[(3 + a) * n + c + step[a]];
  }
}

// below[a] at point (x, y, z) of l's box = w[a] at its -a neighbour (the face below it).
HALO3D_HD inline void faces_below_point(const Layout& l, const double* w, double* below, int x,
                                        int y, int z) {
  const std::ptrdiff_t c = l.at(x, y, z), n = std::ptrdiff_t(l.padded_size());
  const std::ptrdiff_t step[3] = {1, l.sy(), l.sz()};
  for (int a = 0; a < 3; ++a) below[a * n + c] = w[a * n + c - step[a]];
}

}  // namespace halo3d::ops
