// The point updates of multigrid's coarse face weights for variable coefficients
// (src/solver/coefficients.hpp, "Coarse levels"): the Galerkin product R A P of the level
// above, taken one axis at a time and lumped to 7 points. Part of point_ops.hpp (which
// includes it; the spans come from transfer_ops.hpp); the host and CUDA backends call these
// and differ only in how they visit the points, so both give the same bits.
//
// The level above's operator is A = A_x + A_y + A_z (+ a shift, coarsened apart), A_a the
// differences along a weighted by its a-faces. With an interpolation P that is a product of
// per-axis weights p_K at each fine point and R = s P^T (s: Transfer's scale), R A_a P
// couples coarse points up to one apart in every axis. Summing each row's entries over the
// two other axes (lumping them onto the a-line) leaves a 3-point operator along a whose entry
// between I and I + e_a is the weight of that coarse face:
//   W = s sum_{fine a-faces f} w_f kappa(f),  kappa(f) = -dP_I dQ_{I+1},
// dP_I the difference across f of coarse I's interpolation P_I = p_I p_{I_b} p_{I_c} (the
// row) and dQ_{I+1} that of I + 1's weight along a times the transverse masses c_b c_c (the
// column, every transverse coarse point summed; c: the interpolation of a constant, below 1
// next to a Dirichlet boundary).
// - Trilinear P (Transfer::od null): the weights along a line do not vary across it, so
//   W = s sum_{transverse j, k} q_b(j) q_c(k) sum_f w_f kappa(f) with q = p c and kappa from
//   the hats alone, once per line: symmetric by construction.
// - Operator-dependent P (Transfer::od, transfer_ops.hpp): every factor varies from point to
//   point, so each point's weights are read along every line, and R A_a P is not exactly
//   symmetric; each coupling is taken from its lower point's row (the upper's where the
//   lower is a boundary). Some 3-4x the trilinear set-up's work (PERFORMANCE.md).
// Where the grids do not nest, a fine face that straddles a coarse point couples the coarse
// points either side of it (two apart); that coupling v is taken as two faces of 2v in series
// (the same conductance between the two, and 7 points kept): kappa gains the terms of I - 1
// with I + 1 and of I with I + 2. A Dirichlet axis's boundary is the weight of coarse point -1
// (or nc), whose coupling is the boundary face; behind a Neumann face the fine faces are 0
// and so is the coarse one. For k = 1 and trilinear P this is the rediscretised operator; for
// a jumping k it is what carries the jump to every level (docs/PERFORMANCE.md, "Galerkin
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

// --- Trilinear interpolation ------------------------------------------------------------
// p_K(i): the weight of coarse point K (global, any: -1 and nc are a Dirichlet axis's
// boundary, beyond them on a periodic axis the next period's) at fine point i (global, any)
// along axis a of t: the hat of K, 1 at its position and 0 one coarse spacing away, in exact
// integer arithmetic then one division. 0 at positions off a bounded axis. Not
// interp_weight: that one takes fine points of the grid only and does not continue a
// periodic axis's hats past its ends, which the sums over unwrapped indices need.
HALO3D_HD inline double trilinear_hat(const Transfer& t, int a, int K, int i) {
  const long long mf = t.mf[a], mc = t.mc[a], at0 = t.at0[a];
  if (t.bounded[a] && (i + at0 < 0 || i + at0 > mf)) return 0.0;
  long long d = (i + at0) * mc - (K + at0) * mf;
  if (d < 0) d = -d;
  return d >= mf ? 0.0 : div(double(mf - d), double(mf));
}
// c(j): the interpolation of the constant 1 on the coarse unknowns at fine point j (below 1
// next to a Dirichlet boundary, whose hats are not unknowns).
HALO3D_HD inline double trilinear_mass(const Transfer& t, int a, int j) {
  if (!t.bounded[a]) return 1.0;
  return 1.0 - trilinear_hat(t, a, -1, j) - trilinear_hat(t, a, t.nc[a], j);
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
    s.q[m] = mul(trilinear_hat(t, a, K, s.first + m), trilinear_mass(t, a, s.first + m));
  return s;
}

// Trilinear interpolation (Transfer::od null): s times the sum over the transverse spans
// sp[b], sp[c] and the fine a-faces i in [i0, i1] of w_f kappa_J(f) q_b q_c, in one fixed
// order (c, then b, then i).
HALO3D_HD inline double galerkin_part_trilinear(const Transfer& t, const double* w,
                                                const double* below, const GalerkinSpan sp[3],
                                                int a, int J, int i0, int i1) {
  const int b = (a + 1) % 3, c = (a + 2) % 3;
  double kap[kGalerkinSpan + 2];
  int n = i1 - i0 + 1;
  if (n > kGalerkinSpan + 2) n = kGalerkinSpan + 2;  // not reached
  // The four hats at the faces' n + 1 fine points, each once (a division each).
  double hat[4][kGalerkinSpan + 3];
  for (int q = 0; q < 4; ++q)
    for (int m = 0; m <= n; ++m) hat[q][m] = trilinear_hat(t, a, J - 1 + q, i0 + m);
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

// --- Operator-dependent interpolation (Transfer::od) ---------------------------------------
// Fine position i (global, any) along axis a against the coarse grid: its lower coarse point
// lo (global; on a Dirichlet axis -1 and nc are the boundary's, on a periodic one the
// neighbouring period's), whether it lies on lo itself, and whether it lies off a bounded
// axis; made once per position and shared by every weight read there.
struct GalerkinPos {
  int lo = 0;
  bool on = false, off = false;
};
// The positions i, i + 1, ... of axis a in turn: one division at the first, then steps.
struct GalerkinWalk {
  long long pos, lo, rem, mf, mc;
  int at0;
  bool bounded;
  HALO3D_HD GalerkinWalk(const Transfer& t, int a, int i)
      : pos(i + t.at0[a]), mf(t.mf[a]), mc(t.mc[a]), at0(t.at0[a]), bounded(t.bounded[a]) {
    lo = floor_div(pos * mc, mf);
    rem = pos * mc - lo * mf;
  }
  HALO3D_HD GalerkinPos here() const {
    GalerkinPos p;
    p.off = bounded && (pos < 0 || pos > mf);
    p.lo = int(lo) - at0;
    p.on = rem == 0;
    return p;
  }
  HALO3D_HD void next() {
    ++pos;
    rem += mc;
    while (rem >= mf) rem -= mf, ++lo;
  }
};
// v[k] for a k known only at run time, without indexing (a GPU thread keeps v in registers).
HALO3D_HD inline double galerkin_pick(const double (&v)[5], int k) {
  return k == 0 ? v[0] : (k == 1 ? v[1] : (k == 2 ? v[2] : (k == 3 ? v[3] : v[4])));
}
// p_K at a fine position p: the interpolation weight of coarse point K there, Transfer::od's:
// 1 on K's own position, w (the point's t) or 1 - w for the coarse points either side of a
// fine point between two (ops::od_side's rule), else 0; 0 off a bounded axis.
HALO3D_HD inline double od_hat(const GalerkinPos& p, int K, double w) {
  if (p.off) return 0.0;
  if (p.on) return K == p.lo ? 1.0 : 0.0;
  return K == p.lo ? 1.0 - w : (K == p.lo + 1 ? w : 0.0);
}
// t at padded index c along a where position p reads it (a fine point between two coarse
// points, a point of the grid), else 0 (not read).
HALO3D_HD inline double od_t(const Transfer& t, const GalerkinPos& p, int a, std::ptrdiff_t c) {
  return p.on || p.off ? 0.0
                       : double(t.od[std::ptrdiff_t(a) * std::ptrdiff_t(t.fine.padded_size()) + c]);
}
// c at a fine point: the interpolation of the constant 1 on the coarse unknowns (below 1 next
// to a Dirichlet boundary, whose hats are not unknowns).
HALO3D_HD inline double od_mass(const Transfer& t, int a, const GalerkinPos& p, double w) {
  if (!t.bounded[a]) return 1.0;
  return 1.0 - od_hat(p, -1, w) - od_hat(p, t.nc[a], w);
}
// Whether coarse index K along a is an unknown (not a bounded axis's boundary).
HALO3D_HD inline bool galerkin_unknown(const Transfer& t, int a, int K) {
  return !t.bounded[a] || (K >= 0 && K < t.nc[a]);
}

// One part of a coarse face: the face (J, J + 1) along a, from the fine a-faces [i0, i1]
// (face i between fine positions i and i + 1).
struct GalerkinRange {
  int J, i0, i1;
};
// A part's couplings (J, J+1), (J-1, J+1), (J, J+2) as indices k of the coarse points
// Ia - 2 + k whose weights the walk keeps: the row each is taken from (its lower point's
// where that is an unknown, else the upper's) and the column, or none (both ends boundaries).
struct GalerkinCouplings {
  int row[3], col[3];
  bool any[3];
};
HALO3D_HD inline GalerkinCouplings galerkin_couplings(const Transfer& t, int a, int J, int Ia) {
  const int pq[3][2] = {{1, 2}, {0, 2}, {1, 3}}, off = J - Ia + 1;
  GalerkinCouplings k;
  for (int e = 0; e < 3; ++e) {
    const bool lo = galerkin_unknown(t, a, J - 1 + pq[e][0]);
    k.row[e] = off + (lo ? pq[e][0] : pq[e][1]);
    k.col[e] = off + (lo ? pq[e][1] : pq[e][0]);
    k.any[e] = lo || galerkin_unknown(t, a, J - 1 + pq[e][1]);
  }
  return k;
}
// kappa of a part across a face from the differences of P and Q across it.
HALO3D_HD inline double galerkin_od_kappa(const GalerkinCouplings& k, const double (&dP)[5],
                                          const double (&dQ)[5]) {
  double v[3];
  for (int e = 0; e < 3; ++e)
    v[e] = k.any[e] ? mul(galerkin_pick(dP, k.row[e]), galerkin_pick(dQ, k.col[e])) : 0.0;
  return -(v[0] + mul(2.0, v[1]) + mul(2.0, v[2]));
}
// P and Q of the coarse points I[a] - 2 + k at the fine position pa along a whose transverse
// positions are pb, pc (b, c the other axes), their weights read at padded index pt. The
// positions come one by one, not as an array indexed by axis: a GPU thread would keep such
// an array in local memory (the set-up took twice as long on an H100).
HALO3D_HD inline void galerkin_od_weights(const Transfer& t, const GalerkinPos& pa,
                                          const GalerkinPos& pb, const GalerkinPos& pc,
                                          const int I[3], int a, std::ptrdiff_t pt, double (&P)[5],
                                          double (&Q)[5]) {
  const int b = (a + 1) % 3, c = (a + 2) % 3;
  const double wb = od_t(t, pb, b, pt), wc = od_t(t, pc, c, pt);
  const double T = mul(od_hat(pb, I[b], wb), od_hat(pc, I[c], wc));
  const double M = mul(od_mass(t, b, pb, wb), od_mass(t, c, pc, wc));
  const double wa = od_t(t, pa, a, pt);  // read only where pt is the position itself
  for (int k = 0; k < 5; ++k) {
    const double h = od_hat(pa, I[a] - 2 + k, wa);
    P[k] = mul(h, T);
    Q[k] = mul(h, M);
  }
}
// Two parts along a at the transverse coarse indices of I (global), both of whose faces'
// lower points are I[a] - 1 or I[a] (Multigrid's U and D at I), walked together: out[p] = s
// times the sum over the transverse spans sp[b], sp[c] and the range's fine faces, in one
// fixed order (c, then b, then i), of w_i kappa_i, kappa = -(C(J, J+1) + 2 C(J-1, J+1) +
// 2 C(J, J+2)) (couplings two apart as two faces of 2v in series), C(P, Q) = dP_P dQ_Q across
// the face, from P's row where P is an unknown, else from Q's (as the reference in
// tests/galerkin_reference.hpp), where P_K = p_K(i) p_{I_b}(j) p_{I_c}(k) is coarse K's
// interpolation at the fine point and Q_K = p_K(i) c_b(j) c_c(k) the lumped column (every
// transverse coarse point summed). A position off the grid along a (a Dirichlet boundary's)
// takes the transverse weights of the grid's last point before it. Each position's weights
// are made once for both parts, and only the last position's are kept (a GPU thread holds
// them in registers); each part's sums are what it alone would give.
HALO3D_HD inline void galerkin_parts_od(const Transfer& t, const double* w, const double* below,
                                        const GalerkinSpan sp[3], const int I[3], int a,
                                        const GalerkinRange r[2], double out[2]) {
  const int b = (a + 1) % 3, c = (a + 2) % 3;
  const int i0 = r[0].i0 < r[1].i0 ? r[0].i0 : r[1].i0;
  int n = (r[0].i1 > r[1].i1 ? r[0].i1 : r[1].i1) + 1 - i0;  // faces [i0, i0 + n - 1]
  if (n > kGalerkinSpan + 2) n = kGalerkinSpan + 2;          // not reached
  const std::ptrdiff_t nf = std::ptrdiff_t(t.fine.padded_size());
  const GalerkinCouplings k[2] = {galerkin_couplings(t, a, r[0].J, I[a]),
                                  galerkin_couplings(t, a, r[1].J, I[a])};
  const GalerkinWalk walk_a(t, a, i0), walk_b(t, b, sp[b].first);
  GalerkinWalk wc(t, c, sp[c].first);
  double sum[2] = {0, 0};
  int idx[3];
  for (int mc = 0; mc < sp[c].count; ++mc, wc.next()) {
    idx[c] = sp[c].first + mc - t.fo[c];
    const GalerkinPos pc = wc.here();
    GalerkinWalk wb = walk_b;
    for (int mb = 0; mb < sp[b].count; ++mb, wb.next()) {
      idx[b] = sp[b].first + mb - t.fo[b];
      const GalerkinPos pb = wb.here();
      double Pp[5] = {}, Qp[5] = {}, line[2] = {0, 0};
      GalerkinWalk wa = walk_a;
      for (int m = 0; m <= n; ++m, wa.next()) {
        const int i = i0 + m;
        const int it = t.bounded[a] ? (i < 0 ? 0 : (i > t.nf[a] - 1 ? t.nf[a] - 1 : i)) : i;
        idx[a] = it - t.fo[a];
        double Pc[5], Qc[5], dP[5], dQ[5];
        galerkin_od_weights(t, wa.here(), pb, pc, I, a, t.fine.at(idx[0], idx[1], idx[2]), Pc, Qc);
        for (int q = 0; q < 5; ++q) dP[q] = Pc[q] - Pp[q], dQ[q] = Qc[q] - Qp[q];
        for (int q = 0; q < 5; ++q) Pp[q] = Pc[q], Qp[q] = Qc[q];
        if (m == 0) continue;
        // Face i - 1, between positions m - 1 and m: its weight (the one face below the ghost
        // layer is below's, one up), and each part's kappa where the face is in its range.
        int fa = i - 1 - t.fo[a];
        const double* from = w;
        if (fa < -1) ++fa, from = below;
        idx[a] = fa;
        const double wf = from[a * nf + t.fine.at(idx[0], idx[1], idx[2])];
        for (int p = 0; p < 2; ++p)
          if (i - 1 >= r[p].i0 && i - 1 <= r[p].i1)
            line[p] += mul(wf, galerkin_od_kappa(k[p], dP, dQ));
      }
      sum[0] += line[0];
      sum[1] += line[1];
    }
  }
  out[0] = mul(t.wd.scale, sum[0]);
  out[1] = mul(t.wd.scale, sum[1]);
}

// At coarse point (X, Y, Z) of t.coarse (local), for each axis a: parts[a] = U of the face to
// its +a neighbour, parts[3 + a] = D of the face to its -a neighbour (6 padded arrays of
// t.coarse, n apart). w: the level above's weights (3 padded arrays of t.fine, as
// face_weights lays them out); below: each fine point's face to its -a neighbour, read (one
// layer beyond the ghosts) only where Multigrid::coarse_parts exchanged it, else null.
// Od: Transfer::od is set (the operator-dependent parts), else the trilinear ones; a template
// so that a GPU thread of one kind holds no registers or stack for the other.
template <bool Od>
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
    // to the fine boundary (the coupling to the boundary's hat). D: from where the lower
    // point's span ends; at the first point, from the fine boundary.
    int below_last = -1;
    if (!low_end) {
      int f;
      restrict_span(J - 1, t.nf[a], t.mf[a], t.mc[a], f, below_last, t.at0[a], t.bounded[a]);
    }
    const GalerkinRange r[2] = {{J, first, high_end ? t.nf[a] - 1 : last - 1},
                                {J - 1, below_last, last - 1}};
    double out[2];
    if constexpr (Od) {
      galerkin_parts_od(t, w, below, sp, g, a, r, out);
    } else {
      for (int p = 0; p < 2; ++p)
        out[p] = galerkin_part_trilinear(t, w, below, sp, a, r[p].J, r[p].i0, r[p].i1);
    }
    parts[a * n + c] = out[0];
    parts[(3 + a) * n + c] = out[1];
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
