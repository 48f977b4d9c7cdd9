// The CUDA kernels other than the stencil sweeps (included by cuda_kernels.cu only): the
// vector kernels over the interior, multigrid's smoothing step and transfers, fields and
// checks over a box, and the halo faces. They use device_kernels.cuh's fixed-order
// reductions and aligned pair accesses; each point update is point_ops.hpp's.
#pragma once
#include "device_kernels.cuh"

namespace halo3d::cuda {

// ---- Vector kernels over the interior ------------------------------------------------

// An op loads a point's inputs (load, load2 for a pair) and then stores and returns its
// reduction term (finish, finish2); flat_kernel loads all of a thread's points before
// finishing any, since stores to possibly aliasing arrays would otherwise serialise the loads.

// T: y's scalar type (double, or float for a float V-cycle); X: x's, T or (mixed) a float x
// widened into a double y. a and b are rounded to T on the host, as the host backend does.
template <class X, class T>
struct AxpbyOp {
  static constexpr int kFlatRows = 2;  // flat/vec2 rows per thread: 16 loads (8 vec2) each
  T a, b;
  const X* x;
  T* y;
  struct In {
    X x;
    T y;
  };
  __device__ In load(std::ptrdiff_t c) const { return {x[c], y[c]}; }
  __device__ double finish(std::ptrdiff_t c, const In& v) const {
    y[c] = ops::axpby_point(a, T(v.x), b, v.y);
    return 0.0;
  }
  // Points c, c+1 (c even: aligned to a pair).
  __device__ void load2(std::ptrdiff_t c, In& v0, In& v1) const {
    const auto xx = ld2(x + c);
    const auto yy = ld2(y + c);
    v0 = {xx.x, yy.x};
    v1 = {xx.y, yy.y};
  }
  __device__ void finish2(std::ptrdiff_t c, const In& v0, const In& v1, double& t0,
                          double& t1) const {
    st2(y + c, ops::axpby_point(a, T(v0.x), b, v0.y), ops::axpby_point(a, T(v1.x), b, v1.y));
    t0 = t1 = 0.0;
  }
};

// rf: null, or where the new r goes rounded to float too (the float V-cycle's input).
struct CgUpdateOp {
  static constexpr int kFlatRows = 1;
  double alpha;
  const double* p;
  const double* ap;
  double* x;
  double* r;
  float* rf;
  struct In {
    double p, ap, x, r;
  };
  __device__ In load(std::ptrdiff_t c) const { return {__ldg(p + c), __ldg(ap + c), x[c], r[c]}; }
  __device__ double finish(std::ptrdiff_t c, const In& v) const {
    // As the host's x += alpha p; r -= alpha ap; r.r
    const double rn = v.r - ops::mul(alpha, v.ap);
    x[c] = v.x + ops::mul(alpha, v.p);
    r[c] = rn;
    if (rf) rf[c] = float(rn);
    return ops::mul(rn, rn);
  }
  __device__ void load2(std::ptrdiff_t c, In& v0, In& v1) const {
    const double2 pp = ldg2(p + c), aa = ldg2(ap + c), xx = ld2(x + c), rr = ld2(r + c);
    v0 = {pp.x, aa.x, xx.x, rr.x};
    v1 = {pp.y, aa.y, xx.y, rr.y};
  }
  __device__ void finish2(std::ptrdiff_t c, const In& v0, const In& v1, double& t0,
                          double& t1) const {
    const double rn0 = v0.r - ops::mul(alpha, v0.ap);
    const double rn1 = v1.r - ops::mul(alpha, v1.ap);
    st2(x + c, v0.x + ops::mul(alpha, v0.p), v1.x + ops::mul(alpha, v1.p));
    st2(r + c, rn0, rn1);
    if (rf) st2(rf + c, float(rn0), float(rn1));
    t0 = ops::mul(rn0, rn0);
    t1 = ops::mul(rn1, rn1);
  }
};

// The product in P, the wider of X and Y (as the host's dot_t).
template <class X, class Y>
struct DotOp {
  static constexpr int kFlatRows = 2;
  using P = decltype(X() * Y());
  const X* x;
  const Y* y;
  struct In {
    X x;
    Y y;
  };
  __device__ In load(std::ptrdiff_t c) const { return {__ldg(x + c), __ldg(y + c)}; }
  __device__ double finish(std::ptrdiff_t, const In& v) const {
    return double(ops::mul(P(v.x), P(v.y)));
  }
  __device__ void load2(std::ptrdiff_t c, In& v0, In& v1) const {
    const auto xx = ldg2(x + c);
    const auto yy = ldg2(y + c);
    v0 = {xx.x, yy.x};
    v1 = {xx.y, yy.y};
  }
  __device__ void finish2(std::ptrdiff_t, const In& v0, const In& v1, double& t0,
                          double& t1) const {
    t0 = double(ops::mul(P(v0.x), P(v0.y)));
    t1 = double(ops::mul(P(v1.x), P(v1.y)));
  }
};

// The vector kernels' arrays allow vec2's pair accesses (else they run as flat).
template <class X, class T>
bool op_aligned16(const AxpbyOp<X, T>& o) {
  return aligned16(o.x) && aligned16(o.y);
}
inline bool op_aligned16(const CgUpdateOp& o) {
  return aligned16(o.p) && aligned16(o.ap) && aligned16(o.x) && aligned16(o.r) &&
         (!o.rf || aligned16(o.rf));
}
template <class X, class Y>
bool op_aligned16(const DotOp<X, Y>& o) {
  return aligned16(o.x) && aligned16(o.y);
}

// flat_kernel's work on one thread's rows c0[q] (ok[q]: the row exists), from unit m0 on,
// units bx apart: all loads first, then the finishes, each term added to acc.
template <class Op, bool kReduce, int UX, int UR>
__device__ __forceinline__ void flat_units(const Layout& l, const Op& op, long long m0, int bx,
                                           const std::ptrdiff_t* c0, const bool* ok, DD& acc) {
  typename Op::In v[UR][UX]{};
#pragma unroll
  for (int q = 0; q < UR; ++q)
#pragma unroll
    for (int u = 0; u < UX; ++u) {
      const long long i = m0 + (long long)u * bx;
      if (ok[q] && i < l.nx) v[q][u] = op.load(c0[q] + i);
    }
#pragma unroll
  for (int q = 0; q < UR; ++q)
#pragma unroll
    for (int u = 0; u < UX; ++u) {
      const long long i = m0 + (long long)u * bx;
      if (ok[q] && i < l.nx) {
        const double t = op.finish(c0[q] + i, v[q][u]);
        if constexpr (kReduce) acc = ops::dd_add(acc, t);
      }
    }
}

// The same for vec2 units: aligned pairs from the row's first even index; where the row
// starts at an odd index its first point is done, as a scalar, by the thread of unit 0; a
// pair of which only the first point is in the row, likewise.
template <class Op, bool kReduce, int UX, int UR>
__device__ __forceinline__ void vec2_units(const Layout& l, const Op& op, long long m0, int bx,
                                           const std::ptrdiff_t* c0, const bool* ok, DD& acc) {
  typename Op::In v[UR][UX][2]{};
  typename Op::In head[UR]{};
#pragma unroll
  for (int q = 0; q < UR; ++q) {
    const std::ptrdiff_t start = c0[q] + (c0[q] & 1), end = c0[q] + l.nx;
#pragma unroll
    for (int u = 0; u < UX; ++u) {
      const std::ptrdiff_t e = start + 2 * (m0 + (long long)u * bx);
      // e + 1 <= end: at worst the row's high ghost, which is in the array.
      if (ok[q] && e < end) op.load2(e, v[q][u][0], v[q][u][1]);
    }
    if (ok[q] && m0 == 0 && (c0[q] & 1)) head[q] = op.load(c0[q]);
  }
#pragma unroll
  for (int q = 0; q < UR; ++q) {
    const std::ptrdiff_t start = c0[q] + (c0[q] & 1), end = c0[q] + l.nx;
#pragma unroll
    for (int u = 0; u < UX; ++u) {
      const std::ptrdiff_t e = start + 2 * (m0 + (long long)u * bx);
      if (ok[q] && e < end) {
        if (e + 1 < end) {
          double t0, t1;
          op.finish2(e, v[q][u][0], v[q][u][1], t0, t1);
          if constexpr (kReduce) acc = ops::dd_add(ops::dd_add(acc, t0), t1);
        } else {
          const double t = op.finish(e, v[q][u][0]);
          if constexpr (kReduce) acc = ops::dd_add(acc, t);
        }
      }
    }
    if (ok[q] && m0 == 0 && (c0[q] & 1)) {
      const double t = op.finish(c0[q], head[q]);
      if constexpr (kReduce) acc = ops::dd_add(acc, t);
    }
  }
}

// flat (kPairs false) / vec2 (kPairs true): see flat_launch. Each thread loads all of its
// UX x Op::kFlatRows units before it finishes (stores) any, and a block does one row group
// unless a reducing launch was capped.
template <class Op, bool kReduce, bool kPairs>
__global__ void __launch_bounds__(kBlockThreads, kFlatMinBlocks)
    flat_kernel(Layout l, long long units, Op op, double2* partials) {
  constexpr int UX = kPairs ? kVec2X : kFlatX;
  constexpr int UR = Op::kFlatRows;
  const long long rows = (long long)l.ny * l.nz;
  const int bx = int(blockDim.x), by = int(blockDim.y);
  const long long groups = (rows + (long long)by * UR - 1) / ((long long)by * UR);
  const long long chunks = (units + (long long)bx * UX - 1) / ((long long)bx * UX);
  DD acc{};
  for (long long xc = blockIdx.y; xc < chunks; xc += gridDim.y) {
    const long long m0 = xc * bx * UX + threadIdx.x;  // unit of u = 0
    for (long long g = blockIdx.x; g < groups; g += gridDim.x) {
      std::ptrdiff_t c0[UR];
      bool ok[UR];
#pragma unroll
      for (int q = 0; q < UR; ++q) {
        const long long row = g * by * UR + (long long)q * by + threadIdx.y;
        ok[q] = row < rows;
        c0[q] = ok[q] ? l.at(0, int(row % l.ny), int(row / l.ny)) : 0;
      }
      if constexpr (kPairs)
        vec2_units<Op, kReduce, UX, UR>(l, op, m0, bx, c0, ok, acc);
      else
        flat_units<Op, kReduce, UX, UR>(l, op, m0, bx, c0, ok, acc);
    }
  }
  if constexpr (kReduce) store_block_partial(acc, partials);
}

// ---- Multigrid: smoothing step and grid transfers ------------------------------------
// One thread per point of a box (x by threads, y and z by blocks): the multigrid levels
// are memory- or latency-bound, and these run the shared point updates unchanged. T is
// the grid's scalar type (double, or float for a float V-cycle).

// The smoothing step: X points of a row per thread, blockDim.x apart (each load instruction
// of a warp still covers whole lines), so a thread has X independent points in flight.
// The float step moves half the double step's bytes with the same instructions per point
// and was latency-bound at X = 1: 56% of copy against 80% in double, 65% at X = 2 (H100,
// PERFORMANCE.md). X = 2 in double made the V-cycle slower. u and d_in are arrays or a
// computed field (U: point_ops.hpp's ScaledField, Kernels::smooth_from_start).
template <class T, bool kReduce, int X, class U, Coefficients C>
__global__ void __launch_bounds__(kBlockThreads)
    smooth_sweep(Layout l, Region r, Stencil s_in, double cd, double cr, const T* f, U u, U d_in,
                 T* d_out, T* unew, double2* partials) {
  const Stencil s = compiled_for<C>(s_in);
  const int i0 = r.i0 + blockIdx.x * blockDim.x * X + threadIdx.x;
  const int j = r.j0 + blockIdx.y * blockDim.y + threadIdx.y;
  DD acc{};
  if (i0 < r.i1 && j < r.j1)
    for (int k = r.k0 + blockIdx.z; k < r.k1; k += gridDim.z) {
#pragma unroll
      for (int x = 0; x < X; ++x) {
        const int i = i0 + x * int(blockDim.x);
        if (X > 1 && i >= r.i1) break;
        const double v =
            ops::smooth_point(f, u, d_in, d_out, unew, l.at(i, j, k), l.sy(), l.sz(), s, cd, cr);
        if constexpr (kReduce) acc = ops::dd_add(acc, v);
      }
    }
  if constexpr (kReduce) store_block_partial(acc, partials);
}

// x = cr D^{-1} b (variable coefficients' smoothing step from zero).
template <class T>
__global__ void __launch_bounds__(kBlockThreads)
    smooth_start_box(Layout l, Region r, Stencil s, double cr, const T* b, T* x) {
  const int i = r.i0 + blockIdx.x * blockDim.x + threadIdx.x;
  const int j = r.j0 + blockIdx.y * blockDim.y + threadIdx.y;
  if (i < r.i1 && j < r.j1)
    for (int k = r.k0 + blockIdx.z; k < r.k1; k += gridDim.z)
      ops::smooth_start_point(b, x, l.at(i, j, k), s, cr);
}

// res = f - A u in float (double residuals take the tuned sweeps above).
template <class T, bool kReduce, Coefficients C>
__global__ void __launch_bounds__(kBlockThreads)
    residual_box(Layout l, Region r, Stencil s_in, const T* f, const T* u, T* res,
                 double2* partials) {
  const Stencil s = compiled_for<C>(s_in);
  const int i = r.i0 + blockIdx.x * blockDim.x + threadIdx.x;
  const int j = r.j0 + blockIdx.y * blockDim.y + threadIdx.y;
  DD acc{};
  if (i < r.i1 && j < r.j1)
    for (int k = r.k0 + blockIdx.z; k < r.k1; k += gridDim.z) {
      const double v = ops::residual_point(f, u, res, l.at(i, j, k), l.sy(), l.sz(), s);
      if constexpr (kReduce) acc = ops::dd_add(acc, v);
    }
  if constexpr (kReduce) store_block_partial(acc, partials);
}

// Restriction, one thread a coarse column (i, j) marching up kRestrictPlanes coarse planes:
// each fine plane's x-y part (ops::restrict_plane) is computed once and kept in a ring of
// the last four (a coarse plane reads at most four consecutive fine planes, and the first
// of them never moves down), then each coarse point is ops::restrict_z of its planes' parts:
// the host's restrict_s computes the same expressions, so the same bits. One thread a
// coarse point, summing all S^3 terms itself, read every fine plane twice through L1 and was
// L1-bound at 48% of copy (H100, 512^3: 64 terms a coarse point; PERFORMANCE.md session 39).
inline constexpr int kRestrictPlanes = 16;
template <class T, int S>
__global__ void __launch_bounds__(kBlockThreads)
    restrict_march(Transfer t, const T* __restrict__ fine, T* __restrict__ coarse) {
  __shared__ T ring[4][kBlockThreads];  // this thread's column is ring[z & 3][tid]
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= t.coarse.nx || j >= t.coarse.ny) return;  // no barrier below
  const int k0 = blockIdx.z * kRestrictPlanes;
  const int k1 = min(k0 + kRestrictPlanes, t.coarse.nz);
  int done = INT_MIN;  // the highest fine plane whose part is in the ring
  for (int k = k0; k < k1; ++k) {
    const int first = ops::restrict_plane_at(t, k, 0), last = ops::restrict_plane_at(t, k, S - 1);
    for (int z = max(first, done + 1); z <= last; ++z)
      ring[z & 3][tid] = ops::restrict_plane<S>(t, fine, i, j, z);
    done = max(done, last);
    T p[S];
#pragma unroll
    for (int c = 0; c < S; ++c) p[c] = ring[ops::restrict_plane_at(t, k, c) & 3][tid];
    coarse[t.coarse.at(i, j, k)] = ops::restrict_z<S>(t, p, k);
  }
}

// The restriction with operator-dependent weights (Transfer::od): one thread a coarse point,
// ops::restrict_od (the host sums the same terms by rows).
template <class T, int S>
__global__ void __launch_bounds__(kBlockThreads)
    restrict_od_box(Transfer t, const T* __restrict__ fine, T* __restrict__ coarse) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  const int k = blockIdx.z;
  if (i >= t.coarse.nx || j >= t.coarse.ny) return;
  coarse[t.coarse.at(i, j, k)] = ops::restrict_od<S>(t, fine, i, j, k);
}
// The prolongation, one thread a fine point (Od: Transfer::od's weights), the host's
// expression.
template <class T, bool Od>
__global__ void __launch_bounds__(kBlockThreads)
    prolong_box(Transfer t, const T* __restrict__ coarse, T* __restrict__ fine) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  const int k = blockIdx.z;
  if (i >= t.fine.nx || j >= t.fine.ny) return;
  T* row = fine + t.fine.at(0, j, k);
  if constexpr (Od)
    ops::prolong_point(t, ops::prolong_od_row(t, coarse, j, k), row, i);
  else
    ops::prolong_point(t, ops::prolong_row(t, coarse, j, k), row, i);
}

// prolong_box for a pair of fine points (i, i + 1), i even, per thread: one aligned pair
// load and store of the fine row, and the coarse values of both from three per coarse row
// (i + 1's lx is i's or the next). Each point's sum is prolong_sum's, so the bits are
// prolong_box's. Fewer, wider accesses: prolong_box ran at 56% of copy in double, 47% in
// float (H100, 512^3, PERFORMANCE.md session 39). Needs `fine` 16-byte aligned.
template <class T>
__global__ void __launch_bounds__(kBlockThreads)
    prolong_pairs(Transfer t, const T* __restrict__ coarse, T* __restrict__ fine) {
  const int i = 2 * int(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  const int k = blockIdx.z;
  if (i >= t.fine.nx || j >= t.fine.ny) return;
  const ops::ProlongRow<T> r = ops::prolong_row(t, coarse, j, k);
  T* row = fine + t.fine.at(0, j, k);
  if (i + 1 == t.fine.nx) {  // an odd row's last point
    ops::prolong_point(t, r, row, i);
    return;
  }
  const int lx = t.pidx[0][i];
  const bool next = t.pidx[0][i + 1] != lx;  // i + 1 reads lx + 1 and lx + 2
  T a[2][2][2], b[2][2][2];
#pragma unroll
  for (int z = 0; z < 2; ++z)
#pragma unroll
    for (int y = 0; y < 2; ++y) {
      const T* c = r.row[z][y] + lx;
      const T c0 = c[0], c1 = c[1], c2 = next ? c[2] : c1;
      a[z][y][0] = c0;
      a[z][y][1] = c1;
      b[z][y][0] = next ? c1 : c0;
      b[z][y][1] = next ? c2 : c1;
    }
  const auto f = ld2(row + i);
  st2(row + i, f.x + ops::prolong_sum(t, r, i, a), f.y + ops::prolong_sum(t, r, i + 1, b));
}

// ---- Fields and checks over a box (one thread per point, as the transfers) -----------

static __global__ void __launch_bounds__(kBlockThreads)
    fill_box(Layout l, FieldGen g, double* __restrict__ out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  const int k = blockIdx.z;
  if (i >= l.nx || j >= l.ny) return;
  out[l.at(i, j, k)] = ops::field_point(g, l, i, j, k);
}

// out = in at every interior point, converted (double -> float rounds to nearest, as the
// host's conversion does).
template <class In, class Out>
__global__ void __launch_bounds__(kBlockThreads)
    convert_box(Layout l, const In* __restrict__ in, Out* __restrict__ out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  const int k = blockIdx.z;
  if (i >= l.nx || j >= l.ny) return;
  const std::ptrdiff_t c = l.at(i, j, k);
  out[c] = Out(in[c]);
}

// x = M b, one thread per interior point (row) of the coarsest level (ops::dense_row).
template <class T>
static __global__ void __launch_bounds__(kBlockThreads)
    dense_rows(Layout l, const T* __restrict__ m, const T* __restrict__ b, T* __restrict__ x) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < l.nx * l.ny * l.nz) x[ops::interior_point(l, i)] = ops::dense_row(l, m, b, i);
}

// out = double(in) with slot += with.out (the mixed V-cycle's z and PCG's r.z), strided
// over z as the reducing box sweeps.
static __global__ void __launch_bounds__(kBlockThreads)
    widen_dot_box(Layout l, Region r, const float* __restrict__ in, double* __restrict__ out,
                  const double* __restrict__ with, double2* partials) {
  const int i = r.i0 + blockIdx.x * blockDim.x + threadIdx.x;
  const int j = r.j0 + blockIdx.y * blockDim.y + threadIdx.y;
  DD acc{};
  if (i < r.i1 && j < r.j1)
    for (int k = r.k0 + blockIdx.z; k < r.k1; k += gridDim.z) {
      const std::ptrdiff_t c = l.at(i, j, k);
      const double v = double(in[c]);
      out[c] = v;
      acc = ops::dd_add(acc, ops::mul(with[c], v));
    }
  store_block_partial(acc, partials);
}

// The largest magnitude (ops::magnitude_bits) of the box into *result (max_word), each
// thread over every gridDim.z-th plane (max_word_planes).
static __global__ void __launch_bounds__(kBlockThreads)
    max_abs_box(Layout l, const double* __restrict__ x, unsigned long long* result) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  max_word_over_planes(
      i < l.nx && j < l.ny, blockIdx.z, l.nz,
      [&](int k) { return ops::magnitude_bits(x[l.at(i, j, k)]); }, result);
}

// ---- Halo faces ----------------------------------------------------------------------

template <class T>
__global__ void __launch_bounds__(kBlockThreads)
    pack_face(Layout l, Face f, int na, int nb, const T* __restrict__ u, T* __restrict__ buf) {
  const int a = blockIdx.x * blockDim.x + threadIdx.x;
  if (a >= na) return;
  for (int b = blockIdx.y * blockDim.y + threadIdx.y; b < nb; b += gridDim.y * blockDim.y)
    buf[a + std::ptrdiff_t(na) * b] = u[ops::face_point(l, f, a, b, false)];
}

template <class T>
__global__ void __launch_bounds__(kBlockThreads)
    unpack_face(Layout l, Face f, int na, int nb, const T* __restrict__ buf, T* __restrict__ u) {
  const int a = blockIdx.x * blockDim.x + threadIdx.x;
  if (a >= na) return;
  for (int b = blockIdx.y * blockDim.y + threadIdx.y; b < nb; b += gridDim.y * blockDim.y)
    u[ops::face_point(l, f, a, b, true)] = buf[a + std::ptrdiff_t(na) * b];
}

// The one-round exchange's sub-boxes (BoxList): one thread per packed value, grid-stride;
// kPack: buf[p] = u[point p], else u[point p] = buf[p].
template <class T, bool kPack>
__global__ void __launch_bounds__(kBlockThreads)
    move_boxes(Layout l, BoxList b, const T* __restrict__ from, T* __restrict__ to) {
  const long long n = b.points(), step = (long long)gridDim.x * blockDim.x;
  for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < n; p += step) {
    const std::ptrdiff_t c = ops::boxes_point(l, b, p);
    if (kPack)
      to[p] = from[c];
    else
      to[c] = from[p];
  }
}

}  // namespace halo3d::cuda
