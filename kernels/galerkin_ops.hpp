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
//   lower is a boundary). Each coarse point makes its lines' weights itself (a fine line is
//   read by the 2-4 coarse points whose transverse spans hold it): the multigrid set-up
//   costs 7.5x the trilinear one on a CPU core (whose host backend sums each line once),
//   2.2x on an H100 (PERFORMANCE.md). Walking each line once for all its readers was no
//   faster on a core: each reader's steps are the cost, not the shared reads
//   (performance-log.md, session 50).
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

// The fine points of coarse point K's restriction along a (global) and, for trilinear
// interpolation (hats: the operator-dependent parts make their own per point), their
// transverse weights q(j) = p_K(j) c(j).
struct GalerkinSpan {
  int first = 0, count = 0;
  double q[kGalerkinSpan];
};
HALO3D_HD inline GalerkinSpan galerkin_span(const Transfer& t, int a, int K, bool hats) {
  GalerkinSpan s;
  int last;
  restrict_span(K, t.nf[a], t.mf[a], t.mc[a], s.first, last, t.at0[a], t.bounded[a]);
  s.count = last - s.first + 1;
  if (s.count > kGalerkinSpan) s.count = kGalerkinSpan;  // not reached: spans are 3 or 4
  for (int m = 0; m < s.count && hats; ++m)
    s.q[m] = mul(trilinear_hat(t, a, K, s.first + m), trilinear_mass(t, a, s.first + m));
  return s;
}

// Trilinear interpolation (Transfer::od null): s times the sum over the transverse spans
// sp[b], sp[c] and the fine a-faces i in [i0, i1] of w_f kappa_J(f) q_b q_c, in one fixed
// order (c, then b, then i). The host makes each fine line's sum once for every coarse point
// that reads it (HostSetupKernels::galerkin_trilinear_axis) from the three pieces below
// (kappa at the faces, a line's sum, the spans' sum); CUDA's point update,
// galerkin_part_trilinear, computes the same in one piece, the same operations in the same
// order (SetupKernelsTest.GalerkinTrilinearPartsBitwiseThePointUpdate holds them bitwise
// equal): made of the pieces, its kernel kept arrays on the thread's stack (64 registers,
// 640 B; in one piece 122 and 352 B) and the H100's 512^3 set-up took 37.3 ms against 30.0
// before (1.8 of the 7.3 the inverse diagonal's, PERFORMANCE.md).
struct GalerkinKappa {
  int i0 = 0, n = 0;  // the faces [i0, i0 + n) (global)
  double kap[kGalerkinSpan + 2];
};
HALO3D_HD inline GalerkinKappa galerkin_kappa_of(const Transfer& t, int a, int J, int i0, int i1) {
  GalerkinKappa k;
  k.i0 = i0;
  k.n = i1 - i0 + 1;
  if (k.n > kGalerkinSpan + 2) k.n = kGalerkinSpan + 2;  // not reached
  // The four hats at the faces' n + 1 fine points, each once (a division each).
  double hat[4][kGalerkinSpan + 3];
  for (int q = 0; q < 4; ++q)
    for (int m = 0; m <= k.n; ++m) hat[q][m] = trilinear_hat(t, a, J - 1 + q, i0 + m);
  for (int m = 0; m < k.n; ++m) {
    double d[4];
    for (int q = 0; q < 4; ++q) d[q] = hat[q][m + 1] - hat[q][m];
    k.kap[m] = galerkin_kappa(d);
  }
  return k;
}
// The sum of w_f kappa(f) along the fine a-line at local transverse indices ib (along b =
// a + 1) and ic (c = a + 2).
HALO3D_HD inline double galerkin_line(const Transfer& t, const double* w, const double* below,
                                      int a, const GalerkinKappa& k, int ib, int ic) {
  const std::ptrdiff_t nf = std::ptrdiff_t(t.fine.padded_size());
  const std::ptrdiff_t step = a == 0 ? 1 : (a == 1 ? t.fine.sy() : t.fine.sz());
  // The line's point at ia along a (b = a + 1, c = a + 2).
  const auto at = [&t, a, ib, ic](int ia) {
    return a == 0 ? t.fine.at(ia, ib, ic) : a == 1 ? t.fine.at(ic, ia, ib) : t.fine.at(ib, ic, ia);
  };
  int ia = k.i0 - t.fo[a];
  double line = 0;
  int m = 0;
  if (k.n > 0 && ia < -1) {  // the one face below the ghost layer: below's, one up
    ++ia;
    line += mul(below[a * nf + at(ia)], k.kap[0]);
    ++m;
  }
  if (m < k.n) {
    const double* f = w + a * nf + at(ia);
    for (int r = 0; m < k.n; ++m, ++r) line += mul(f[r * step], k.kap[m]);
  }
  return line;
}
// s times the sum over the transverse spans of q_b q_c times each line's sum (line(ib, ic):
// galerkin_line's value at those local indices, however it is had).
template <class Line>
HALO3D_HD inline double galerkin_spans_sum(const Transfer& t, const GalerkinSpan& sb,
                                           const GalerkinSpan& sc, int a, const Line& line) {
  const int b = (a + 1) % 3, c = (a + 2) % 3;
  double sum = 0;
  for (int mc = 0; mc < sc.count; ++mc)
    for (int mb = 0; mb < sb.count; ++mb)
      sum += mul(mul(sc.q[mc], sb.q[mb]), line(sb.first + mb - t.fo[b], sc.first + mc - t.fo[c]));
  return mul(t.wd.scale, sum);
}
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
// The interpolation weights of the coarse points at a fine position p, Transfer::od's: 1 for
// the coarse point it lies on, 1 - w and w (w: the point's t) for the coarse points lo and
// lo + 1 either side of a fine point between two (ops::od_side's rule), 0 for every other
// coarse point and off a bounded axis. Kept as the two that can be nonzero: those of lo and
// lo + 1, counted as k and k + 1 from coarse point `first`.
struct OdHats {
  int k;
  double lo, hi;
};
HALO3D_HD inline OdHats od_hats(const GalerkinPos& p, int first, double w) {
  return {p.lo - first, p.off ? 0.0 : (p.on ? 1.0 : 1.0 - w), p.off || p.on ? 0.0 : w};
}
// The weight of coarse point first + k.
HALO3D_HD inline double od_hat_at(const OdHats& h, int k) {
  return k == h.k ? h.lo : (k == h.k + 1 ? h.hi : 0.0);
}
// p_K at p: coarse point K's weight.
HALO3D_HD inline double od_hat(const GalerkinPos& p, int K, double w) {
  return od_hat_at(od_hats(p, 0, w), K);
}
// t of an axis (t_a: its Transfer::od array) at padded index c where position p reads it (a
// fine point between two coarse points, a point of the grid), else 0 (not read).
HALO3D_HD inline double od_t(const float* t_a, const GalerkinPos& p, std::ptrdiff_t c) {
  return p.on || p.off ? 0.0 : double(t_a[c]);
}
// c at a fine point: the interpolation of the constant 1 on the coarse unknowns (below 1 next
// to a Dirichlet boundary, whose hats are not unknowns).
HALO3D_HD inline double od_mass(const Transfer& t, int a, const GalerkinPos& p, double w) {
  if (!t.bounded[a]) return 1.0;
  return 1.0 - od_hat(p, -1, w) - od_hat(p, t.nc[a], w);
}
// A line's transverse weights along axis a at its position p, as functions of each point's t:
// coarse point K's hat, lo + slope t (0 + t and 1 + (-t): od_hat's bits), and whether its
// mass is 1 whatever t (no boundary hat reaches p; od_mass then gives 1 exactly).
struct OdLine {
  double lo, slope;
  bool plain;
};
HALO3D_HD inline bool od_hat_zero(const GalerkinPos& p, int K) {  // whatever t
  return p.off || (K != p.lo && (p.on || K != p.lo + 1));
}
HALO3D_HD inline OdLine od_line(const Transfer& t, int a, const GalerkinPos& p, int K) {
  const bool between = !p.off && !p.on, lo = !p.off && K == p.lo, hi = between && K == p.lo + 1;
  return {lo ? 1.0 : 0.0, lo && between ? -1.0 : (hi ? 1.0 : 0.0),
          !t.bounded[a] || (od_hat_zero(p, -1) && od_hat_zero(p, t.nc[a]))};
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
// C(p, q) across a face, for coarse points first + p < first + q: dP_p dQ_q from p's row where
// p is an unknown (u), else dP_q dQ_p from q's, 0 where neither is. The callers pass p and q
// as constants, so a GPU thread keeps dP and dQ in registers.
HALO3D_HD inline double galerkin_coupling(const bool (&u)[5], const double (&dP)[5],
                                          const double (&dQ)[5], int p, int q) {
  return u[p] ? mul(dP[p], dQ[q]) : (u[q] ? mul(dP[q], dQ[p]) : 0.0);
}
// At the next position along a line: P_k = h_k T and Q_k = h_k M of the coarse points first + k
// (h: od_hats from first), their differences from the last position's (Pp, Qp) across the
// face between them, and the last position's replaced by these.
HALO3D_HD inline void galerkin_od_step(const OdHats& h, double T, double M, double (&Pp)[5],
                                       double (&Qp)[5], double (&dP)[5], double (&dQ)[5]) {
  const double Plo = mul(h.lo, T), Phi = mul(h.hi, T), Qlo = mul(h.lo, M), Qhi = mul(h.hi, M);
  for (int k = 0; k < 5; ++k) {  // 0 (mul(0, T)'s bits: T, M >= 0) at the others
    const double P = k == h.k ? Plo : (k == h.k + 1 ? Phi : 0.0);
    const double Q = k == h.k ? Qlo : (k == h.k + 1 ? Qhi : 0.0);
    dP[k] = P - Pp[k], dQ[k] = Q - Qp[k];
    Pp[k] = P, Qp[k] = Q;
  }
}
// Adds a face's w_f kappa to the line sums of the parts whose range holds it: line[0], U's (of
// the face (I, I + 1), in_u), and line[1], D's (of (I - 1, I), in_d), from the differences of
// P and Q across it (coarse points I - 2 .. I + 2 at k = 0 .. 4). C(I - 1, I + 1) is in both.
HALO3D_HD inline void galerkin_od_face(const bool (&u)[5], const double (&dP)[5],
                                       const double (&dQ)[5], double wf, bool in_u, bool in_d,
                                       double (&line)[2]) {
  const double shared = in_u || in_d ? galerkin_coupling(u, dP, dQ, 1, 3) : 0.0;
  if (in_u) {
    const double k = -(galerkin_coupling(u, dP, dQ, 2, 3) + mul(2.0, shared) +
                       mul(2.0, galerkin_coupling(u, dP, dQ, 2, 4)));
    line[0] += mul(wf, k);
  }
  if (in_d) {
    const double k = -(galerkin_coupling(u, dP, dQ, 1, 2) +
                       mul(2.0, galerkin_coupling(u, dP, dQ, 0, 2)) + mul(2.0, shared));
    line[1] += mul(wf, k);
  }
}
// Two parts along a at the transverse coarse indices of I (global): U, of the face (I, I + 1),
// and D, of the face (I - 1, I) (Multigrid's U and D at I), walked together: out[p] = s
// times the sum over the transverse spans sp[b], sp[c] and the range's fine faces, in one
// fixed order (c, then b, then i), of w_i kappa_i, kappa = -(C(J, J+1) + 2 C(J-1, J+1) +
// 2 C(J, J+2)) (couplings two apart as two faces of 2v in series), C(P, Q) = dP_P dQ_Q across
// the face, from P's row where P is an unknown, else from Q's (as the reference in
// tests/galerkin_reference.hpp), where P_K = p_K(i) p_{I_b}(j) p_{I_c}(k) is coarse K's
// interpolation at the fine point and Q_K = p_K(i) c_b(j) c_c(k) the lumped column (every
// transverse coarse point summed). The coarse points are I - 2 .. I + 2 along a (k = 0 .. 4).
// A position off the grid along a (a Dirichlet boundary's) takes the transverse weights of
// the grid's last point before it. Each position's weights are made once for both parts, and
// only the last position's are kept (a GPU thread holds them in registers).
HALO3D_HD inline void galerkin_parts_od(const Transfer& t, const double* w, const double* below,
                                        const GalerkinSpan sp[3], const int I[3], int a,
                                        const GalerkinRange r[2], double out[2]) {
  const int b = (a + 1) % 3, c = (a + 2) % 3, first = I[a] - 2;
  const int i0 = r[0].i0 < r[1].i0 ? r[0].i0 : r[1].i0;
  int n = (r[0].i1 > r[1].i1 ? r[0].i1 : r[1].i1) + 1 - i0;  // faces [i0, i0 + n - 1]
  if (n > kGalerkinSpan + 2) n = kGalerkinSpan + 2;          // not reached
  const std::ptrdiff_t nf = std::ptrdiff_t(t.fine.padded_size());
  const std::ptrdiff_t step = a == 0 ? 1 : (a == 1 ? t.fine.sy() : t.fine.sz());
  bool u[5];
  for (int k = 0; k < 5; ++k) u[k] = galerkin_unknown(t, a, first + k);
  const float *ta = t.od + a * nf, *tb = t.od + b * nf, *tc = t.od + c * nf;
  const double *wa = w + a * nf, *ba = below ? below + a * nf : nullptr;
  const GalerkinWalk walk_a(t, a, i0), walk_b(t, b, sp[b].first);
  GalerkinWalk walk_c(t, c, sp[c].first);
  double sum[2] = {0, 0};
  int idx[3];
  for (int mc = 0; mc < sp[c].count; ++mc, walk_c.next()) {
    idx[c] = sp[c].first + mc - t.fo[c];
    const GalerkinPos pc = walk_c.here();
    const OdLine lc = od_line(t, c, pc, I[c]);
    GalerkinWalk walk_b_line = walk_b;
    for (int mb = 0; mb < sp[b].count; ++mb, walk_b_line.next()) {
      idx[b] = sp[b].first + mb - t.fo[b];
      idx[a] = 0;
      const std::ptrdiff_t row = t.fine.at(idx[0], idx[1], idx[2]);  // the line at a = 0
      const GalerkinPos pb = walk_b_line.here();
      const OdLine lb = od_line(t, b, pb, I[b]);
      double Pp[5] = {}, Qp[5] = {}, line[2] = {0, 0};
      GalerkinWalk walk = walk_a;
      for (int m = 0; m <= n; ++m, walk.next()) {
        const int i = i0 + m;
        const int it = t.bounded[a] ? (i < 0 ? 0 : (i > t.nf[a] - 1 ? t.nf[a] - 1 : i)) : i;
        const std::ptrdiff_t pt = row + (it - t.fo[a]) * step;
        const GalerkinPos pa = walk.here();
        const double wb = od_t(tb, pb, pt), wc = od_t(tc, pc, pt);
        const double T = mul(lb.lo + mul(lb.slope, wb), lc.lo + mul(lc.slope, wc));
        const double M =
            mul(lb.plain ? 1.0 : od_mass(t, b, pb, wb), lc.plain ? 1.0 : od_mass(t, c, pc, wc));
        const OdHats h = od_hats(pa, first, od_t(ta, pa, pt));
        double dP[5], dQ[5];
        galerkin_od_step(h, T, M, Pp, Qp, dP, dQ);
        if (m == 0) continue;
        // Face i - 1, between positions m - 1 and m: its weight (the one face below the ghost
        // layer is below's, one up), and each part's kappa where the face is in its range.
        const int fa = i - 1 - t.fo[a];
        const double wf = fa < -1 ? ba[row + (fa + 1) * step] : wa[row + fa * step];
        galerkin_od_face(u, dP, dQ, wf, i - 1 >= r[0].i0 && i - 1 <= r[0].i1,
                         i - 1 >= r[1].i0 && i - 1 <= r[1].i1, line);
      }
      sum[0] += line[0];
      sum[1] += line[1];
    }
  }
  out[0] = mul(t.wd.scale, sum[0]);
  out[1] = mul(t.wd.scale, sum[1]);
}

// The fine a-faces of coarse point J's two parts along a (sp: its span along a): r[0] for
// U, r[1] for D.
HALO3D_HD inline void galerkin_ranges(const Transfer& t, int a, int J, const GalerkinSpan& sp,
                                      GalerkinRange (&r)[2]) {
  const int first = sp.first, last = first + sp.count - 1;
  const bool low_end = t.bounded[a] && J == 0, high_end = t.bounded[a] && J == t.nc[a] - 1;
  // U: the faces within this point's span; at a bounded axis's last point, every face up
  // to the fine boundary (the coupling to the boundary's hat). D: from where the lower
  // point's span ends; at the first point, from the fine boundary.
  int below_last = -1;
  if (!low_end) {
    int f;
    restrict_span(J - 1, t.nf[a], t.mf[a], t.mc[a], f, below_last, t.at0[a], t.bounded[a]);
  }
  r[0] = {J, first, high_end ? t.nf[a] - 1 : last - 1};
  r[1] = {J - 1, below_last, last - 1};
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
  for (int a = 0; a < 3; ++a) sp[a] = galerkin_span(t, a, g[a], !Od);
  for (int a = 0; a < 3; ++a) {
    GalerkinRange r[2];
    galerkin_ranges(t, a, g[a], sp[a], r);
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
