// Every point update halo3d does, written once for both backends: the host loops and
// the CUDA kernels call these and differ only in how they visit the points.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "layout.hpp"

namespace halo3d::ops {

// Products are rounded on their own (no fused multiply-add), so each point's value is
// the same on every backend and in every decomposition. One overload per scalar type
// (the multigrid V-cycle also runs in float); mixed arguments do not compile, so every
// conversion is written out where it happens.
HALO3D_HD inline double mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
HALO3D_HD inline float mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

// Division correctly rounded on every backend (CUDA's intrinsics say so explicitly, whatever
// the compiler's flags).
HALO3D_HD inline double div(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}
HALO3D_HD inline float div(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

// The fields a point update reads (U): an array (const T*), or a field computed where it is
// read. ScaledField is x = cr D^{-1} b, the first smoothing step from x = 0
// (smooth_start_point's value bit for bit), so that the step after it can read x without x
// ever being stored (Kernels::smooth_from_start). With constant coefficients D^{-1} is
// folded into cr; with variable ones (PerPoint) it is each point's own, read from inv_diag
// (FaceWeights::inv_diag, ghosts included).
template <class T, bool PerPoint = false>
struct ScaledField {
  using value_type = T;
  const T* b;
  T cr;
  const T* inv_diag = nullptr;
  HALO3D_HD T operator[](std::ptrdiff_t c) const {
    if constexpr (PerPoint)
      return mul(cr, mul(inv_diag[c], b[c]));
    else
      return mul(cr, b[c]);
  }
};
template <class U>
struct FieldOf {
  using type = typename U::value_type;
};
template <class T>
struct FieldOf<T*> {
  using type = std::remove_const_t<T>;
};
template <class U>
using field_t = typename FieldOf<U>::type;
// Whether an optional field is given (a null array is not read).
template <class T>
HALO3D_HD inline bool given(const T* p) {
  return p != nullptr;
}
template <class T, bool P>
HALO3D_HD inline bool given(const ScaledField<T, P>&) {
  return true;
}
// The field read from base + o instead of base.
template <class T>
HALO3D_HD inline const T* shifted(const T* p, std::ptrdiff_t o) {
  return p + o;
}
template <class T, bool P>
HALO3D_HD inline ScaledField<T, P> shifted(const ScaledField<T, P>& x, std::ptrdiff_t o) {
  return {x.b + o, x.cr, P ? x.inv_diag + o : nullptr};
}

// Variable coefficients (Stencil::vd/vf): c indexes u and the face weights alike, so a
// caller that passes u offset by some base passes the stencil offset by it too (offset()).
// Point c's six face weights (x, y, z; low face first) and its diagonal: their sum and the
// shift (the point's own sigma_c where the weights carry a variable one, else the stencil's
// constant), in a fixed order. Read once per point update (point_residual hands a smoothing
// step both r and r / d from one read).
template <class T>
struct PointFaces {
  T w[3][2];
  T diag;
};
template <class T>
HALO3D_HD inline PointFaces<T> point_faces(const FaceWeights<T>& f, std::ptrdiff_t c,
                                           std::ptrdiff_t sy, std::ptrdiff_t sz, T shift) {
  PointFaces<T> p;
  const std::ptrdiff_t step[3] = {1, sy, sz};
  for (int a = 0; a < 3; ++a) p.w[a][0] = f.w[a][c - step[a]], p.w[a][1] = f.w[a][c];
  const T s = f.sigma ? f.sigma[c] : shift;
  p.diag = (((p.w[0][0] + p.w[0][1]) + (p.w[1][0] + p.w[1][1])) + (p.w[2][0] + p.w[2][1])) + s;
  return p;
}
template <class T>
HALO3D_HD inline T point_diag(const FaceWeights<T>& f, std::ptrdiff_t c, std::ptrdiff_t sy,
                              std::ptrdiff_t sz, T shift) {
  return point_faces(f, c, sy, sz, shift).diag;
}
template <class T, class U>
HALO3D_HD inline T apply_variable(const U& u, std::ptrdiff_t c, std::ptrdiff_t sy,
                                  std::ptrdiff_t sz, const PointFaces<T>& p) {
  return mul(p.diag, u[c]) - (mul(p.w[0][0], u[c - 1]) + mul(p.w[0][1], u[c + 1])) -
         (mul(p.w[1][0], u[c - sy]) + mul(p.w[1][1], u[c + sy])) -
         (mul(p.w[2][0], u[c - sz]) + mul(p.w[2][1], u[c + sz]));
}
// The stencil for arrays addressed from base + b instead of base.
inline Stencil offset(const Stencil& s, std::ptrdiff_t b) {
  Stencil o = s;
  for (int a = 0; a < 3; ++a) {
    if (s.vd.w[a]) o.vd.w[a] = s.vd.w[a] + b;
    if (s.vf.w[a]) o.vf.w[a] = s.vf.w[a] + b;
  }
  if (s.vd.sigma) o.vd.sigma = s.vd.sigma + b;
  if (s.vf.sigma) o.vf.sigma = s.vf.sigma + b;
  if (s.vd.inv_diag) o.vd.inv_diag = s.vd.inv_diag + b;
  if (s.vf.inv_diag) o.vf.inv_diag = s.vf.inv_diag + b;
  return o;
}

// The point updates below take the grid's scalar type T (double or float); coefficients
// (double) are rounded to T once, the same way on every backend, and the arithmetic is
// T's. For T = double every expression is the one it was before the templates.
template <class U, class T = field_t<U>>
HALO3D_HD inline T apply_point(const U& u, std::ptrdiff_t c, std::ptrdiff_t sy, std::ptrdiff_t sz,
                               const Stencil& s) {
  if (s.variable())
    return apply_variable(u, c, sy, sz, point_faces(faces_of(s, T()), c, sy, sz, T(s.shift)));
  return mul(T(s.diag), u[c]) - mul(T(s.cx), u[c - 1] + u[c + 1]) -
         mul(T(s.cy), u[c - sy] + u[c + sy]) - mul(T(s.cz), u[c - sz] + u[c + sz]);
}

// r scaled by the inverse diagonal at point c: r / d_c with variable coefficients; with
// constant ones r unchanged (the callers' factors hold 1/diag already).
template <class T>
HALO3D_HD inline T by_diag(T r, std::ptrdiff_t c, std::ptrdiff_t sy, std::ptrdiff_t sz,
                           const Stencil& s) {
  if (!s.variable()) return r;
  return div(r, point_diag(faces_of(s, T()), c, sy, sz, T(s.shift)));
}
// r = b - A u at point c, and scaled = by_diag(r), from one read of the point's weights.
template <class T>
struct PointResidual {
  T r, scaled;
};
template <class T, class U>
HALO3D_HD inline PointResidual<T> point_residual(T b, const U& u, std::ptrdiff_t c,
                                                 std::ptrdiff_t sy, std::ptrdiff_t sz,
                                                 const Stencil& s) {
  if (!s.variable()) {
    const T r = b - apply_point(u, c, sy, sz, s);
    return {r, r};
  }
  const PointFaces<T> p = point_faces(faces_of(s, T()), c, sy, sz, T(s.shift));
  const T r = b - apply_variable(u, c, sy, sz, p);
  return {r, div(r, p.diag)};
}

// res = f - A u at one point; returns res.res's term (its square, in double).
template <class T>
HALO3D_HD inline double residual_point(const T* f, const T* u, T* res, std::ptrdiff_t c,
                                       std::ptrdiff_t sy, std::ptrdiff_t sz, const Stencil& s) {
  const T r = f[c] - apply_point(u, c, sy, sz, s);
  res[c] = r;
  return double(mul(r, r));
}

// One Jacobi update; returns the residual f - A u of the old iterate at this point.
// inv_diag is 1/diag (constant coefficients) or 1 (variable: r / d_c).
HALO3D_HD inline double jacobi_point(const double* f, const double* u, double* unew,
                                     std::ptrdiff_t c, std::ptrdiff_t sy, std::ptrdiff_t sz,
                                     const Stencil& s, double inv_diag) {
  const PointResidual<double> q = point_residual(f[c], u, c, sy, sz, s);
  unew[c] = u[c] + (s.variable() ? q.scaled : mul(q.r, inv_diag));
  return q.r;
}

// Explicit Euler for u_t = alpha lap u: u_new = u - (alpha dt) A u.
HALO3D_HD inline double heat_point(const double* u, std::ptrdiff_t c, std::ptrdiff_t sy,
                                   std::ptrdiff_t sz, const Stencil& s, double alpha_dt) {
  return u[c] - mul(alpha_dt, apply_point(u, c, sy, sz, s));
}

// One smoothing step (a Chebyshev step, or damped Jacobi when cd = 0):
// d = cd d_in + cr D^{-1} (f - A u); unew = u + d; d_out = d. With constant coefficients
// cr includes 1/diag; with variable ones the point divides by its own diagonal. d_in is
// not read when null (cd = 0) and may alias u; d_out is not written when null. u and d_in
// are arrays or a ScaledField. Returns f.unew at the point (for reductions).
template <class T, class U, class D>
HALO3D_HD inline double smooth_point(const T* f, const U& u, const D& d_in, T* d_out, T* unew,
                                     std::ptrdiff_t c, std::ptrdiff_t sy, std::ptrdiff_t sz,
                                     const Stencil& s, double cd, double cr) {
  const T r = mul(T(cr), point_residual(f[c], u, c, sy, sz, s).scaled);
  const T dn = given(d_in) ? mul(T(cd), d_in[c]) + r : r;
  if (d_out) d_out[c] = dn;
  const T v = u[c] + dn;
  unew[c] = v;
  return double(mul(f[c], v));
}

// A smoothing step from u = 0: x = cr D^{-1} b (as smooth_point, without a sweep). With
// variable coefficients D^{-1} is the level's stored inverse diagonal (FaceWeights::inv_diag),
// so that the step after it can compute x at its neighbours (start_field).
template <class T>
HALO3D_HD inline void smooth_start_point(const T* b, T* x, std::ptrdiff_t c, const Stencil& s,
                                         double cr) {
  if (s.variable())
    x[c] = ScaledField<T, true>{b, T(cr), faces_of(s, T()).inv_diag}[c];
  else
    x[c] = ScaledField<T>{b, T(cr)}[c];
}

// The coarsest level's exact solve x = M b at interior point i of l (x fastest): M is the
// level's inverse, column-major over its n interior points (column j at m + j n, so that
// consecutive rows read consecutive words), and the row is summed over j in order.
template <class T>
HALO3D_HD inline T dense_row(const Layout& l, const T* m, const T* b, int i) {
  const std::ptrdiff_t n = std::ptrdiff_t(l.nx) * l.ny * l.nz;
  T sum = 0;
  std::ptrdiff_t j = 0;
  for (int z = 0; z < l.nz; ++z)
    for (int y = 0; y < l.ny; ++y)
      for (int x = 0; x < l.nx; ++x, ++j) sum += mul(m[i + j * n], b[l.at(x, y, z)]);
  return sum;
}
// The padded-box index of interior point i (x fastest).
HALO3D_HD inline std::ptrdiff_t interior_point(const Layout& l, int i) {
  return l.at(i % l.nx, i / l.nx % l.ny, i / l.nx / l.ny);
}

// y = a x + b y at one point (coefficients rounded to T).
template <class T>
HALO3D_HD inline T axpby_point(T a, T x, T b, T y) {
  return mul(a, x) + mul(b, y);
}

// --- Fields from global indices (see FieldGen) ---------------------------------------
// Reproducible value in [-1, 1) for global point index `index` (splitmix64): integer
// arithmetic and one exact scaling, so every backend gives the same bits.
HALO3D_HD inline double random_point(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + index + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return double(z >> 11) * 0x1.0p-52 - 1.0;  // 53 random bits in [-1, 1)
}

// The value of a FieldGen at interior point (i,j,k). The separable terms' axis values are
// computed once on the host (sines), so the device only multiplies and adds, rounding each
// operation as the host does.
HALO3D_HD inline double field_point(const FieldGen& g, const Layout& l, int i, int j, int k) {
  if (g.kind == FieldGen::random) {
    const std::uint64_t gi = std::uint64_t(g.off[0] + i), gj = std::uint64_t(g.off[1] + j),
                        gk = std::uint64_t(g.off[2] + k);
    return random_point(g.seed, gi + std::uint64_t(g.gnx) * (gj + std::uint64_t(g.gny) * gk));
  }
  const std::ptrdiff_t stride = 1 + std::ptrdiff_t(l.nx) + l.ny + l.nz;
  double v = 0;
  for (int m = 0; m < g.terms; ++m) {
    const double* t = g.tables + m * stride;
    v += mul(t[0], mul(mul(t[1 + i], t[1 + l.nx + j]), t[1 + l.nx + l.ny + k]));
  }
  return v;
}

// |x| as an integer whose order is the order of the magnitudes, with every NaN above +Inf:
// the maximum of these over any set of points, in any order, is the same bits on every
// backend and gives NaN when a NaN is present (see Kernels::max_abs).
HALO3D_HD inline std::uint64_t magnitude_bits(double x) {
#if defined(__CUDA_ARCH__)
  const std::uint64_t b = std::uint64_t(__double_as_longlong(x));
#else
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
#endif
  return b & 0x7FFFFFFFFFFFFFFFull;
}
HALO3D_HD inline double from_magnitude_bits(std::uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double((long long)b);
#else
  double x;
  std::memcpy(&x, &b, sizeof x);
  return x;
#endif
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
// face's own, including the ghost rim of those axes: (n_a + 2) x (n_b + 2) points, a = 0
// being ghost index -1. `ghost` selects the ghost layer beyond it instead of the boundary
// layer. The rim is why faces are wide: a stencil reads only face ghosts, but the
// trilinear transfers of multigrid read edge and corner ghosts too, which a neighbour
// across a face can pass on only as part of its own (already exchanged) face ghosts: one
// exchange per split axis fills every ghost (DistributedOperator::exchange on the
// transports that cannot send to diagonal neighbours; the others use box_point below).
HALO3D_HD inline void face_dims(const Layout& l, Face f, int& na, int& nb) {
  const int n[3] = {l.nx, l.ny, l.nz};
  na = n[f.axis == 0 ? 1 : 0] + 2;
  nb = n[f.axis == 2 ? 1 : 2] + 2;
}
HALO3D_HD inline std::ptrdiff_t face_point(const Layout& l, Face f, int a, int b, bool ghost) {
  const int n[3] = {l.nx, l.ny, l.nz};
  const int layer = f.side == 0 ? (ghost ? -1 : 0) : (ghost ? n[f.axis] : n[f.axis] - 1);
  switch (f.axis) {
    case 0:
      return l.at(layer, a - 1, b - 1);
    case 1:
      return l.at(a - 1, layer, b - 1);
    default:
      return l.at(a - 1, b - 1, layer);
  }
}

// --- Boxes ----------------------------------------------------------------------
// Point (i, j, k) of sub-box r (ghost layers allowed) as an index into the padded box; a
// packed box holds it at i + ni (j + nj k), ni and nj the box's x and y extents.
HALO3D_HD inline std::ptrdiff_t box_point(const Layout& l, const Region& r, int i, int j, int k) {
  return l.at(r.i0 + i, r.j0 + j, r.k0 + k);
}
// The padded-box index of value p of a packed BoxList (one thread per value on CUDA; the
// host walks the boxes in the same order with box_point).
HALO3D_HD inline std::ptrdiff_t boxes_point(const Layout& l, const BoxList& b, long long p) {
  int n = 0;
  while (p >= b.start[n + 1]) ++n;
  const Region& r = b.box[n];
  const long long q = p - b.start[n], ni = r.i1 - r.i0, nj = r.j1 - r.j0;
  return box_point(l, r, int(q % ni), int(q / ni % nj), int(q / (ni * nj)));
}

}  // namespace halo3d::ops

// The grid transfers' and the variable-coefficient set-up's point updates.
#include "coefficient_ops.hpp"  // IWYU pragma: export
#include "galerkin_ops.hpp"     // IWYU pragma: export
#include "transfer_ops.hpp"     // IWYU pragma: export
