// Every point update halo3d does, written once for both backends: the host loops and
// the CUDA kernels call these and differ only in how they visit the points.
#pragma once
#include "layout.hpp"

namespace halo3d::ops {

// Products are rounded on their own (no fused multiply-add), so each point's value is
// the same on every backend and in every decomposition.
HALO3D_HD inline double mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

HALO3D_HD inline double apply_point(const double* u, std::ptrdiff_t c, std::ptrdiff_t sy,
                                    std::ptrdiff_t sz, const Stencil& s) {
  return mul(s.diag, u[c]) - mul(s.cx, u[c - 1] + u[c + 1]) - mul(s.cy, u[c - sy] + u[c + sy]) -
         mul(s.cz, u[c - sz] + u[c + sz]);
}

// One Jacobi update; returns the residual f - A u of the old iterate at this point.
HALO3D_HD inline double jacobi_point(const double* f, const double* u, double* unew,
                                     std::ptrdiff_t c, std::ptrdiff_t sy, std::ptrdiff_t sz,
                                     const Stencil& s, double inv_diag) {
  const double r = f[c] - apply_point(u, c, sy, sz, s);
  unew[c] = u[c] + mul(r, inv_diag);
  return r;
}

// Explicit Euler for u_t = alpha lap u: u_new = u - (alpha dt) A u.
HALO3D_HD inline double heat_point(const double* u, std::ptrdiff_t c, std::ptrdiff_t sy,
                                   std::ptrdiff_t sz, const Stencil& s, double alpha_dt) {
  return u[c] - mul(alpha_dt, apply_point(u, c, sy, sz, s));
}

// --- Error-free double-double accumulation (Knuth's TwoSum) -----------------------
// The sum of a set of rounded products is accumulated to ~2^-100 relative, so its final
// rounding to double does not depend on the order, hence not on the decomposition.
HALO3D_HD inline DD two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}
HALO3D_HD inline DD dd_add(DD x, double y) {
  DD s = two_sum(x.hi, y);
  const double e = s.lo + x.lo;
  const double hi = s.hi + e;
  return {hi, e - (hi - s.hi)};
}
HALO3D_HD inline DD dd_add(DD x, DD y) {
  DD s = two_sum(x.hi, y.hi);
  const double e = s.lo + (x.lo + y.lo);
  const double hi = s.hi + e;
  return {hi, e - (hi - s.hi)};
}

// --- Faces ----------------------------------------------------------------------
// A face of the local box is a 2D array (a fastest) over the two axes other than the
// face's own; `ghost` selects the ghost layer beyond it instead of the boundary layer.
HALO3D_HD inline void face_dims(const Layout& l, Face f, int& na, int& nb) {
  const int n[3] = {l.nx, l.ny, l.nz};
  na = n[f.axis == 0 ? 1 : 0];
  nb = n[f.axis == 2 ? 1 : 2];
}
HALO3D_HD inline std::ptrdiff_t face_point(const Layout& l, Face f, int a, int b, bool ghost) {
  const int n[3] = {l.nx, l.ny, l.nz};
  const int layer = f.side == 0 ? (ghost ? -1 : 0) : (ghost ? n[f.axis] : n[f.axis] - 1);
  switch (f.axis) {
    case 0:
      return l.at(layer, a, b);
    case 1:
      return l.at(a, layer, b);
    default:
      return l.at(a, b, layer);
  }
}

}  // namespace halo3d::ops
