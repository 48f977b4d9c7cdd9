// The point updates of multigrid's grid transfers (see Transfer): the axes' positions, the
// trilinear prolongation and the restriction, its scaled transpose. Part of point_ops.hpp
// (which includes it; a file of its own for its length), so both backends give the same bits.
#pragma once
#include <cstddef>

#include "point_ops.hpp"

namespace halo3d::ops {

// --- Grid transfers (see Transfer) ------------------------------------------------
// Along an axis, n points make n + 1 intervals between Dirichlet ends and n when it wraps
// (periodic); the transfers place fine point i at (i+1)/mf and coarse point I at (I+1)/mc
// of the axis, m the intervals.
HALO3D_HD inline int intervals(int n, bool periodic) { return periodic ? n : n + 1; }
// The general rule with Neumann faces (node-centred: a Neumann face's boundary node is point
// 0 or n-1): point i of an axis sits at (i + axis_first) h, h = L / axis_intervals, where
// axis_first is 1 behind a Dirichlet low face (its ghost at 0 holds the value) and 0 otherwise,
// and the intervals n - 1 + [low Dirichlet] + [high Dirichlet] (Dirichlet at both ends:
// n + 1; periodic: n, point 0 on the face).
HALO3D_HD inline int axis_first(bool periodic, bool low_neumann) {
  return periodic || low_neumann ? 0 : 1;
}
HALO3D_HD inline int axis_intervals(int n, bool periodic, bool low_neumann, bool high_neumann) {
  return periodic ? n : n - 1 + (low_neumann ? 0 : 1) + (high_neumann ? 0 : 1);
}
// Fine point i (global) between coarse points lo and lo+1 (global; -1 and nc are the
// boundary, or on a periodic axis the ghosts that wrap), at fraction t from lo: exact integer
// arithmetic, then one division, so the weights are the same bits on every backend and for
// every decomposition.
// at0: the position of point 0 in intervals (1 as above; 0 behind a Neumann low face, where
// point 0 is the boundary node: coarse I then nests at fine 2I).
HALO3D_HD inline void interp_1d(int i, int mf, int mc, int& lo, double& t, int at0 = 1) {
  const long long num = (long long)(i + at0) * mc;
  lo = int(num / mf) - at0;
  t = double(num % mf) / double(mf);
}
// Weight of coarse point I in the interpolation to fine point i (0 when not adjacent).
HALO3D_HD inline double interp_weight(int i, int I, int mf, int mc, int at0 = 1) {
  int lo;
  double t;
  interp_1d(i, mf, mc, lo, t, at0);
  return I == lo ? 1.0 - t : (I == lo + 1 ? t : 0.0);
}
// floor(a / b) and ceil(a / b) for b > 0 and any a.
HALO3D_HD inline long long floor_div(long long a, long long b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
HALO3D_HD inline long long ceil_div(long long a, long long b) { return -floor_div(-a, b); }
// The fine points (global) whose interpolation uses coarse point I: [first, last], for nf
// fine points in mf intervals. On a Dirichlet axis (mf = nf + 1) the last coarse point's span
// stops at the last fine point (the boundary is no unknown); on a periodic one the last
// coarse point's span reaches the fine ghost nf, which is fine point 0 again.
// In general (at0 as interp_1d's): the fine positions p = i + at0 with (P - 1) mf < p mc <
// (P + 1) mf, P = I + at0, kept within [0, nf - 1] where the axis has ends (bounded).
HALO3D_HD inline void restrict_span(int I, int nf, int mf, int mc, int& first, int& last, int at0,
                                    bool bounded) {
  const long long P = I + at0;
  first = int(floor_div((P - 1) * mf, mc)) + 1 - at0;
  last = int(ceil_div((P + 1) * mf, mc)) - 1 - at0;
  if (bounded && first < 0) first = 0;
  if (bounded && last > nf - 1) last = nf - 1;
}
HALO3D_HD inline void restrict_span(int I, int nf, int mf, int mc, int& first, int& last) {
  restrict_span(I, nf, mf, mc, first, last, 1, mf != nf);
}

// Transfers are tensor products: what depends on the row (j, k) is computed once per row
// (the host loops rows; a CUDA thread makes its own row), the x part per point. Loops run
// to compile-time bounds with a guard, so device code keeps the arrays in registers.
// Everything is T's arithmetic on T's weights (weights_of): for double the expressions
// are the exact tables' products; for float the weights were rounded once on the host.

// The y-z part of prolongation for fine row (j, k): the coarse rows it reads, and weights.
template <class T>
struct ProlongRow {
  const T* row[2][2];  // [z][y]: coarse rows lo and lo+1, at x = 0
  T wzy[2][2];
};
template <class T>
HALO3D_HD inline ProlongRow<T> prolong_row(const Transfer& t, const T* coarse, int j, int k) {
  const TransferWeights<T>& w = weights_of(t, T());
  ProlongRow<T> r;
  const int ly = t.pidx[1][j], lz = t.pidx[2][k];
  const T* wy = w.pw[1] + 2 * std::ptrdiff_t(j);
  const T* wz = w.pw[2] + 2 * std::ptrdiff_t(k);
  for (int c = 0; c < 2; ++c)
    for (int b = 0; b < 2; ++b) {
      r.wzy[c][b] = mul(wz[c], wy[b]);
      r.row[c][b] = coarse + t.coarse.at(0, ly + b, lz + c);
    }
  return r;
}
// (P coarse) at fine point i from the values it reads, v[z][y][x] = row[z][y][pidx[0][i] + x]:
// trilinear, z-y-x order (CUDA's pair kernel loads two points' values, then sums each here).
template <class T>
HALO3D_HD inline T prolong_sum(const Transfer& t, const ProlongRow<T>& r, int i,
                               const T (&v)[2][2][2]) {
  const T* wx = weights_of(t, T()).pw[0] + 2 * std::ptrdiff_t(i);
  T s = 0;
  for (int c = 0; c < 2; ++c)
    for (int b = 0; b < 2; ++b)
      for (int a = 0; a < 2; ++a) s += mul(mul(r.wzy[c][b], wx[a]), v[c][b][a]);
  return s;
}
// fine_row[i] += (P coarse) at fine point i of the row (fine_row = fine + at(0, j, k)).
template <class T>
HALO3D_HD inline void prolong_point(const Transfer& t, const ProlongRow<T>& r, T* fine_row, int i) {
  const int x = t.pidx[0][i];
  const T v[2][2][2] = {
      {{r.row[0][0][x], r.row[0][0][x + 1]}, {r.row[0][1][x], r.row[0][1][x + 1]}},
      {{r.row[1][0][x], r.row[1][0][x + 1]}, {r.row[1][1][x], r.row[1][1][x + 1]}}};
  fine_row[i] = fine_row[i] + prolong_sum(t, r, i, v);
}

// Restriction at coarse (I, J, K) is separable: the x part of each fine row it reads, the y
// part of those within each fine plane, then the z part, each a sum in index order (S =
// Transfer::span terms, 3 or 4; terms past a coarse point's count repeat its last fine
// point with weight 0, so their loops have fixed bounds: unrolled, every load is issued
// before the sum needs it, where data-dependent bounds sent them one at a time, 27% of copy
// in double on the H100). A zero product leaves a sum's bits as they were, so S = 3 and
// S = 4 give the same bits where every count is at most 3. Because a plane's x-y part does
// not depend on K, both backends compute it once for the two coarse planes that read it
// (CUDA's restrict_march, the host's restrict_s).

// Sum over a of rw[0](I)[a] * row[ridx[0](I).first + a]: the x part of fine row `row`
// (x = 0 at row[0]).
template <int S, class T>
HALO3D_HD inline T restrict_x(const Transfer& t, const T* row, int I) {
  const int* ix = t.ridx[0] + 2 * std::ptrdiff_t(I);
  const T* ex = weights_of(t, T()).rw[0] + 4 * std::ptrdiff_t(I);
  const int fx = ix[0], cx = ix[1];
  T v = 0;
  for (int a = 0; a < S; ++a) v += mul(ex[a], row[fx + (a < cx ? a : cx - 1)]);
  return v;
}
// The fine row of coarse row J's b-th term in fine plane z (rows = fine + at(0, 0, z)).
template <class T>
HALO3D_HD inline const T* restrict_row_at(const Transfer& t, const T* plane, int J, int b) {
  const int* iy = t.ridx[1] + 2 * std::ptrdiff_t(J);
  return plane + std::ptrdiff_t(iy[0] + (b < iy[1] ? b : iy[1] - 1)) * t.fine.sy();
}
// The x-y part of coarse (I, J) in fine plane z: sum over b of rw[1](J)[b] * restrict_x.
template <int S, class T>
HALO3D_HD inline T restrict_plane(const Transfer& t, const T* fine, int I, int J, int z) {
  const T* ey = weights_of(t, T()).rw[1] + 4 * std::ptrdiff_t(J);
  const T* plane = fine + t.fine.at(0, 0, z);
  T v = 0;
  for (int b = 0; b < S; ++b) v += mul(ey[b], restrict_x<S>(t, restrict_row_at(t, plane, J, b), I));
  return v;
}
// The fine plane of coarse plane K's c-th term.
HALO3D_HD inline int restrict_plane_at(const Transfer& t, int K, int c) {
  const int* iz = t.ridx[2] + 2 * std::ptrdiff_t(K);
  return iz[0] + (c < iz[1] ? c : iz[1] - 1);
}
// (R fine) at coarse plane K from its planes' x-y parts p[c] (plane restrict_plane_at(K, c)):
// scale times the sum over c of rw[2](K)[c] * p[c].
template <int S, class T>
HALO3D_HD inline T restrict_z(const Transfer& t, const T (&p)[S], int K) {
  const TransferWeights<T>& w = weights_of(t, T());
  const T* ez = w.rw[2] + 4 * std::ptrdiff_t(K);
  T v = 0;
  for (int c = 0; c < S; ++c) v += mul(ez[c], p[c]);
  return mul(w.scale, v);
}

// --- Operator-dependent interpolation (--mg-interp operator: Transfer::od) ---------------
// Trilinear interpolation spreads a correction across a jump in k as if k were smooth; where
// the jump falls between coarse points (an inclusion whose faces miss the coarse planes) the
// coarse level then corrects the fine one poorly: MG-PCG takes 17-19 iterations for such a
// block on even and large grids, 8-10 with these weights (PERFORMANCE.md, "operator-dependent
// interpolation"). Along axis a, fine point p between coarse points lo and lo + 1, at
// fraction g from lo (interp_1d), takes t = g W+ / (g W+ + (1 - g) W-) for lo + 1 and 1 - t
// for lo, with W- and W+ its faces toward lo and lo + 1: the value at p of the 1-D solution
// of -(k u')' = 0 between the two, were k W- on p's lower side and W+ on its upper (exact
// where the grids nest, p midway; on an even axis's first step an approximation from p's own
// two faces, so that t reads nothing beyond them). k = 1 gives t = g up to rounding. A
// point on a coarse point keeps t = 0, and where both faces are 0 (not on a grid of positive
// k) t = g. The weights are made at the box's points (from the faces face_weights and
// galerkin_faces store: the one below the box is in its low ghost slot) and exchanged, so a
// ghost's t is the bits its owner made; rounded to float once, so the double and the float
// V-cycles read the same t (1 - t is rounded to float in the float one).
HALO3D_HD inline void od_weight_point(const Transfer& t, const double* w, float* od, int x, int y,
                                      int z) {
  const std::ptrdiff_t n = std::ptrdiff_t(t.fine.padded_size()), c = t.fine.at(x, y, z);
  const std::ptrdiff_t step[3] = {1, t.fine.sy(), t.fine.sz()};
  const int idx[3] = {x, y, z};
  for (int a = 0; a < 3; ++a) {
    const long long mf = t.mf[a];
    const long long rem = (long long)(t.fo[a] + idx[a] + t.at0[a]) * t.mc[a] % mf;
    double v = 0.0;
    if (rem != 0) {
      const double up = mul(double(rem), w[a * n + c]);
      const double den = up + mul(double(mf - rem), w[a * n + c - step[a]]);
      v = den > 0 ? div(up, den) : div(double(rem), double(mf));
    }
    od[a * n + c] = float(v);  // round to nearest on both backends
  }
}
// The restriction's spans with Transfer::od: coarse point I (local) of axis a reads fine
// points first .. first + count - 1 (local, ridx's), and of those the first `below` lie below
// I (I is their upper coarse neighbour: weight t) and the rest at or above it (1 - t; on I
// itself t = 0). Integer positions, once per coarse point and axis, in fixed-bound loops
// (S = Transfer::span) as the trilinear restriction's.
struct OdSpan {
  int first, count, below;
};
template <int S>
HALO3D_HD inline OdSpan od_span(const Transfer& t, int a, int I) {
  const int* r = t.ridx[a] + 2 * std::ptrdiff_t(I);
  OdSpan s{r[0], r[1], 0};
  const long long at = (long long)(t.co[a] + I + t.at0[a]) * t.mf[a];
  for (int m = 0; m < S; ++m)
    s.below += m < s.count && (long long)(t.fo[a] + s.first + m + t.at0[a]) * t.mc[a] < at;
  return s;
}
// The weight of term m of span s from its fine point's t: 0 past the count (whose term
// repeats the last point, so that the loops have fixed bounds; a zero product leaves the
// sum's bits as they were).
template <class T>
HALO3D_HD inline T od_side(const OdSpan& s, int m, T ti) {
  return m >= s.count ? T(0) : (m < s.below ? ti : T(1) - ti);
}
// od_side's weight for a term m < s.count as lo + slope t (0 + t, or 1 + (-t): the same bits
// as t and 1 - t), for loops over many points on one side that vectorise without branches.
template <class T>
struct OdSideLine {
  T lo, slope;
};
template <class T>
HALO3D_HD inline OdSideLine<T> od_side_line(const OdSpan& s, int m) {
  return m < s.below ? OdSideLine<T>{T(0), T(1)} : OdSideLine<T>{T(1), T(-1)};
}
HALO3D_HD inline int od_term(const OdSpan& s, int m) {
  return s.first + (m < s.count ? m : s.count - 1);
}
// The y-z weight of fine point p (padded index; n: the padded size) in the restriction of a
// coarse point whose spans along z and y give it the sides c and b: wz wy, each od_side's.
template <class T>
HALO3D_HD inline T od_wzy(const Transfer& t, std::ptrdiff_t n, std::ptrdiff_t p, const OdSpan& sz,
                          int c, const OdSpan& sy, int b) {
  return mul(od_side(sz, c, T(t.od[2 * n + p])), od_side(sy, b, T(t.od[n + p])));
}
// (R fine) at coarse point (X, Y, Z) with Transfer::od: scale times the sum over the fine
// planes of its z span (in order) of their sums over the rows of its y span of the rows' sums
// over its x span, of ((wz wy) wx) fine, each w od_side's. Summed row by row, so that the host can
// make a fine row's terms for every coarse point along x in one pass (restrict_od_rows) with these
// bits.
template <int S, class T>
HALO3D_HD inline T restrict_od(const Transfer& t, const T* fine, int X, int Y, int Z) {
  const std::ptrdiff_t n = std::ptrdiff_t(t.fine.padded_size());
  const OdSpan sx = od_span<S>(t, 0, X), sy = od_span<S>(t, 1, Y), sz = od_span<S>(t, 2, Z);
  T v = 0;
  for (int c = 0; c < S; ++c) {
    T plane = 0;
    for (int b = 0; b < S; ++b) {
      const std::ptrdiff_t row = t.fine.at(0, od_term(sy, b), od_term(sz, c));
      T line = 0;
      for (int a = 0; a < S; ++a) {
        const std::ptrdiff_t p = row + od_term(sx, a);
        line += mul(mul(od_wzy<T>(t, n, p, sz, c, sy, b), od_side(sx, a, T(t.od[p]))), fine[p]);
      }
      plane += line;
    }
    v += plane;
  }
  return mul(weights_of(t, T()).scale, v);
}
// The y-z part of the prolongation of fine row (j, k) with Transfer::od: the four coarse
// rows it reads (at x = 0) and the row's three t arrays.
template <class T>
struct ProlongOdRow {
  const T* row[2][2];
  const float *tx, *ty, *tz;
};
template <class T>
HALO3D_HD inline ProlongOdRow<T> prolong_od_row(const Transfer& t, const T* coarse, int j, int k) {
  const std::ptrdiff_t n = std::ptrdiff_t(t.fine.padded_size()), p = t.fine.at(0, j, k);
  ProlongOdRow<T> r;
  const int ly = t.pidx[1][j], lz = t.pidx[2][k];
  for (int c = 0; c < 2; ++c)
    for (int b = 0; b < 2; ++b) r.row[c][b] = coarse + t.coarse.at(0, ly + b, lz + c);
  r.tx = t.od + p, r.ty = t.od + n + p, r.tz = t.od + 2 * n + p;
  return r;
}
// fine_row[i] += (P coarse) at fine point i of the row: the eight coarse points around it
// (pidx's lo and lo + 1 per axis) weighted (1 - t, t) per axis, in prolong_sum's order.
template <class T>
HALO3D_HD inline void prolong_point(const Transfer& t, const ProlongOdRow<T>& r, T* fine_row,
                                    int i) {
  const T tx = T(r.tx[i]), ty = T(r.ty[i]), tz = T(r.tz[i]);
  const T wx[2] = {T(1) - tx, tx}, wy[2] = {T(1) - ty, ty}, wz[2] = {T(1) - tz, tz};
  const int x = t.pidx[0][i];
  T s = 0;
  for (int c = 0; c < 2; ++c)
    for (int b = 0; b < 2; ++b) {
      const T wzy = mul(wz[c], wy[b]);
      for (int a = 0; a < 2; ++a) s += mul(mul(wzy, wx[a]), r.row[c][b][x + a]);
    }
  fine_row[i] = fine_row[i] + s;
}

}  // namespace halo3d::ops
