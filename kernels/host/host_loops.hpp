// The host backend's loops (kernels/host/host_kernels.cpp): rows of a region in parallel,
// blocks of points vectorised, the double-double sums of their terms in a fixed order, and
// the smoothing step's block (a file of its own for host_kernels.cpp's length).
#pragma once
#include <algorithm>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "kernels.hpp"
#include "point_ops.hpp"

namespace halo3d::host {

inline int thread_count() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}
inline int thread_id() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}
inline int team_size() {
#ifdef _OPENMP
  return omp_get_num_threads();
#else
  return 1;
#endif
}

// Below this many points a loop runs on the calling thread: on the small coarse levels of
// a V-cycle an OpenMP fork/join costs more than the work it would share.
constexpr long kSerialBelow = 1 << 15;

// Visits every (j,k) row of a region in parallel and calls body(row_start_index, count)
// for the contiguous x-run of that row; returns the thread partial sums combined in
// thread order, so the result does not depend on scheduling.
template <class Body>
DD for_rows(const Layout& l, const Region& r, Body body) {
  if (r.empty()) return {};
  const int rows_y = r.j1 - r.j0, n = r.i1 - r.i0;
  const long rows = long(rows_y) * (r.k1 - r.k0);
  // One row at a time in (j, k) order; the division is per row, not per point.
  auto run = [&](long first, long last, DD acc) {
    int j = r.j0 + int(first % rows_y), k = r.k0 + int(first / rows_y);
    for (long row = first; row < last; ++row) {
      acc = body(l.at(r.i0, j, k), n, acc);
      if (++j == r.j1) j = r.j0, ++k;
    }
    return acc;
  };
  // schedule(static)'s blocks (the first rows % nt threads take one row more), made by
  // hand so that each thread walks its rows in order without a division per row. Run
  // serially, the same blocks give the same partial sums, so the result is the same bits.
  auto block = [&](long t, long nt) {
    const long q = rows / nt, extra = rows % nt, first = t * q + std::min(t, extra);
    return run(first, first + q + (t < extra ? 1 : 0), {});
  };
  // The partial sums on the stack for the usual thread counts: no allocation per call.
  // Zeroed: a team may get fewer threads than thread_count(), leaving entries unwritten.
  const int nt = thread_count();
  DD on_stack[16] = {};
  std::vector<DD> on_heap(nt > 16 ? nt : 0);
  DD* partial = nt > 16 ? on_heap.data() : on_stack;
  if (rows * n < kSerialBelow) {
    for (int t = 0; t < nt; ++t) partial[t] = block(t, nt);
  } else {
#pragma omp parallel
    partial[thread_id()] = block(thread_id(), team_size());
  }
  DD sum{};
  for (int t = 0; t < nt; ++t) sum = ops::dd_add(sum, partial[t]);
  return sum;
}

// Independent double-double accumulators of a sum (dd_sum_blocks): a power of two.
constexpr int kLanes = 16;
// Runs are done in blocks of this many points (a multiple of kLanes, see dd_sum_blocks),
// small enough that a block's buffers stay in L1.
constexpr int kBlock = 256;

// Sums the terms of one contiguous run into acc: block(cb, m, term) does the m points from
// index cb and writes their terms to term[0..m). Computing a block's points first lets
// the compiler vectorise them (each point's arithmetic is point_ops' own, so the bits do
// not change). A double-double addition is a chain of nine dependent operations, so the
// sum keeps kLanes independent accumulators, as vector lanes: with 4 (two SSE2 vectors)
// the chain's latency bound a reducing sweep on one core (`apply_dot` took 2.2x `apply`'s
// time at 256^3, session 43); 16 leave it bound by throughput. The sum stays exact to
// ~2^-100, so the split does not show. Terms c0+l, c0+l+kLanes, ... go to accumulator l,
// the last n mod kLanes to accumulator 0, whatever the block size; the accumulators are
// then added pairwise (0+1, 2+3, ..., then those sums pairwise).
template <class Block>
DD dd_sum_blocks(std::ptrdiff_t c0, int n, DD acc, const Block& block) {
  alignas(64) double term[kBlock];
  // The accumulators as lanes (hi and lo apart), so that their additions vectorise.
  alignas(64) double hi[kLanes] = {acc.hi}, lo[kLanes] = {acc.lo};
  int q = 0, m = 0;  // after the loop: the last block's terms not in a group of kLanes
  for (int b = 0; b < n; b += kBlock) {
    m = std::min(kBlock, n - b);
    block(c0 + b, m, term);
    for (q = 0; q + kLanes <= m; q += kLanes) {
#pragma omp simd
      for (int l = 0; l < kLanes; ++l) {
        const DD x = ops::dd_add(DD{hi[l], lo[l]}, term[q + l]);
        hi[l] = x.hi;
        lo[l] = x.lo;
      }
    }
  }
  DD a[kLanes];
  for (int l = 0; l < kLanes; ++l) a[l] = {hi[l], lo[l]};
  for (; q < m; ++q) a[0] = ops::dd_add(a[0], term[q]);
  for (int width = 1; width < kLanes; width *= 2)
    for (int l = 0; l < kLanes; l += 2 * width) a[l] = ops::dd_add(a[l], a[l + width]);
  return a[0];
}
// The same blocks without a sum: the terms go to a scratch buffer nobody reads.
template <class Block>
void each_block(std::ptrdiff_t c0, int n, const Block& block) {
  alignas(64) double scratch[kBlock];
  for (int b = 0; b < n; b += kBlock) block(c0 + b, std::min(kBlock, n - b), scratch);
}

// The block of point(c) (which does the point's update and returns its term), vectorised.
template <class Point>
auto point_block(const Point& point) {
  return [point](std::ptrdiff_t cb, int m, double* term) {
#pragma omp simd
    for (int q = 0; q < m; ++q) term[q] = point(cb + q);
  };
}
// Sums point(c) over a run.
template <class Point>
DD dd_sum_run(std::ptrdiff_t c0, int n, DD acc, const Point& point) {
  return dd_sum_blocks(c0, n, acc, point_block(point));
}

// point(c) for every c of a run, vectorised: the point updates write only their own c.
template <class Point>
void each_point(std::ptrdiff_t c0, int n, const Point& point) {
#pragma omp simd
  for (std::ptrdiff_t c = c0; c < c0 + n; ++c) point(c);
}

// One block of a smoothing step. smooth_point tests its optional directions for null,
// which keeps a loop over it from vectorising unless the compiler can see the answer:
// a direction it reads or writes (kIn, kOut) goes through a local buffer (whose address
// is never null), the others are a literal nullptr. Each point reads d_in and writes
// d_out at its own index only, so copying a block in before and out after is the same
// computation, also when d_in and d_out are one array or d_in is u. u and d_in are arrays
// or a computed field (U: point_ops.hpp's ScaledField). C: the stencil's coefficients
// (compiled_for, layout.hpp: with the variable branch in it the loop does not vectorise).
template <class T, bool kIn, bool kOut, class U, Coefficients C>
struct SmoothBlock {
  const T* f;
  U u, d_in;
  T *d_out, *unew;
  std::ptrdiff_t sy, sz;
  Stencil s;
  double cd, cr;
  void operator()(std::ptrdiff_t cb, int m, double* term) const {
    alignas(64) T din[kBlock], dout[kBlock];
    if (kIn)
#pragma omp simd
      for (int q = 0; q < m; ++q) din[q] = d_in[cb + q];
    const T* fb = f + cb;
    const U ub = ops::shifted(u, cb);
    T* nb = unew + cb;
    const Stencil sb = compiled_for<C>(ops::offset(s, cb));  // weights addressed as fb, ub
#pragma omp simd
    for (int q = 0; q < m; ++q)
      term[q] = ops::smooth_point<T>(fb, ub, kIn ? din : nullptr, kOut ? dout : nullptr, nb, q, sy,
                                     sz, sb, cd, cr);
    if (kOut)
#pragma omp simd
      for (int q = 0; q < m; ++q) d_out[cb + q] = dout[q];
  }
};

}  // namespace halo3d::host
