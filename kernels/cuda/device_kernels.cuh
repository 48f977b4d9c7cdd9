// The CUDA kernels (included by cuda_kernels.cu only). Each point update is the shared one from
// point_ops.hpp; the kernels differ from the host loops only in how they visit points and combine
// partial sums.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "kernels.hpp"
#include "launch_config.hpp"
#include "layout.hpp"
#include "point_ops.hpp"

// Sweeps kept (docs/PERFORMANCE.md has the measurements behind each, and the variants
// measured and removed: march, slab, shfl, the cp.async pipe, the row-wave vector kernel):
// * naive: one thread per point; the baseline and the shape for thin boundary slabs.
// * tile3d: each thread does T z-consecutive points with all loads issued first, grid z
//   slowest so resident blocks share planes and tile halos in L2 (the apply default).
// * smem (2.5D): an (x,y) tile + halo in shared memory per plane, z-neighbours in
//   registers (the default for reducing sweeps: tile3d with its reduction is no faster).
// * Vector kernels: flat/vec2 issue all of a thread's loads (vec2: 16-byte pairs) before
//   any store, since the arrays may alias and stores would otherwise serialise them.

namespace halo3d::cuda {

// ---- Fixed-order reductions ----------------------------------------------------------
// The same tree on every launch of a given shape, so a sum is reproducible run to run.

__device__ __forceinline__ DD shfl_down(DD v, int offset) {
  return {__shfl_down_sync(0xffffffffu, v.hi, offset), __shfl_down_sync(0xffffffffu, v.lo, offset)};
}

__device__ __forceinline__ DD warp_sum(DD v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v = ops::dd_add(v, shfl_down(v, offset));
  return v;  // in lane 0
}

// Sums one DD per thread of a kThreads-thread block and returns the total in thread 0.
template <int kThreads>
__device__ __forceinline__ DD block_sum(DD v) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps only");
  constexpr int kWarps = kThreads / 32;
  __shared__ double2 warp_total[kWarps];  // double2: __shared__ forbids DD's initialisers
  const int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  v = warp_sum(v);
  if (t % 32 == 0) warp_total[t / 32] = make_double2(v.hi, v.lo);
  __syncthreads();
  DD total{};
  if (t < 32) {
    if (t < kWarps) total = {warp_total[t].x, warp_total[t].y};
    total = warp_sum(total);
  }
  return total;
}

__device__ __forceinline__ void store_block_partial(DD v, double2* partials) {
  const DD total = block_sum<kBlockThreads>(v);
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    const long long b =
        blockIdx.x + (long long)gridDim.x * (blockIdx.y + (long long)gridDim.y * blockIdx.z);
    partials[b] = make_double2(total.hi, total.lo);
  }
}

// As store_block_partial, for blocks of any whole number of warps up to kBlockThreads (the
// tunable tile3d/smem tiles). For 256 threads it is the same tree, so the same sum.
__device__ __forceinline__ void store_block_partial_any(DD v, double2* partials) {
  constexpr int kMaxWarps = kBlockThreads / 32;
  __shared__ double2 warp_total[kMaxWarps];
  const int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const int warps = int(blockDim.x * blockDim.y * blockDim.z) / 32;
  v = warp_sum(v);
  if (t % 32 == 0) warp_total[t / 32] = make_double2(v.hi, v.lo);
  __syncthreads();
  if (t < 32) {
    DD total{};
    if (t < warps) total = {warp_total[t].x, warp_total[t].y};
    total = warp_sum(total);
    if (t == 0) {
      const long long b =
          blockIdx.x + (long long)gridDim.x * (blockIdx.y + (long long)gridDim.y * blockIdx.z);
      partials[b] = make_double2(total.hi, total.lo);
    }
  }
}

struct SlotCounts {
  long long n[kReductionSlots];
};

// One block per slot: thread t sums partials t, t+T, t+2T, ... in that order, then the
// block tree. Writes into mapped host memory, so read_slots needs no separate copy.
static __global__ void __launch_bounds__(kFinishThreads)
    finish_slots(const double2* __restrict__ scratch, SlotCounts counts, double2* out) {
  const int slot = blockIdx.x;
  long long n = 0;  // selected with constant indices: a dynamic one copies counts to the stack
#pragma unroll
  for (int s = 0; s < kReductionSlots; ++s)
    if (s == slot) n = counts.n[s];
  const double2* p = scratch + slot * kSlotCapacity;
  DD acc{};
  for (long long base = threadIdx.x; base < n; base += kFinishThreads * kFinishUnroll) {
    double2 v[kFinishUnroll];
#pragma unroll
    for (int u = 0; u < kFinishUnroll; ++u) {
      const long long i = base + (long long)u * kFinishThreads;
      v[u] = i < n ? p[i] : make_double2(0.0, 0.0);  // adding DD zero is exact
    }
#pragma unroll
    for (int u = 0; u < kFinishUnroll; ++u) acc = ops::dd_add(acc, DD{v[u].x, v[u].y});
  }
  const DD total = block_sum<kFinishThreads>(acc);
  if (threadIdx.x == 0) out[slot] = make_double2(total.hi, total.lo);
}

// Aligned pair accesses for tile3d and vec2 (the caller guarantees 16-byte alignment).
__device__ __forceinline__ double2 ld2(const double* p) {
  return *reinterpret_cast<const double2*>(p);
}
__device__ __forceinline__ double2 ldg2(const double* p) {
  return __ldg(reinterpret_cast<const double2*>(p));
}
__device__ __forceinline__ void st2(double* p, double a, double b) {
  *reinterpret_cast<double2*>(p) = make_double2(a, b);
}
// Float pairs (8 bytes): the vector kernels' vec2 variant in float.
__device__ __forceinline__ float2 ld2(const float* p) {
  return *reinterpret_cast<const float2*>(p);
}
__device__ __forceinline__ float2 ldg2(const float* p) {
  return __ldg(reinterpret_cast<const float2*>(p));
}
__device__ __forceinline__ void st2(float* p, float a, float b) {
  *reinterpret_cast<float2*>(p) = make_float2(a, b);
}

// ---- Stencil sweeps ------------------------------------------------------------------
// op(w, fw, ow, cw, wsy, wsz) reads the stencil input w and (kReadsF) the right-hand side
// fw, writes the result to ow, all at index cw, and returns the term the sweep's reduction
// adds. The naive sweep passes the grids themselves (cw = c); tile3d and smem pass small
// register windows laid out so that the same offsets address them (cw = 3, wsy = 2,
// wsz = 3). Either way the arithmetic is the shared point update, so every variant gives
// bitwise the host's values.

// The grids a sweep op reads (u, and f where kReadsF) and writes (out), and its stencil.
struct SweepGrids {
  const double* u;
  const double* f;  // null where the op does not read it
  double* out;
  Stencil s;
};

struct ApplyOp : SweepGrids {
  static constexpr bool kReadsF = false;
  __device__ double operator()(const double* w, const double*, double* ow, std::ptrdiff_t cw,
                               std::ptrdiff_t wsy, std::ptrdiff_t wsz) const {
    ow[cw] = ops::apply_point(w, cw, wsy, wsz, s);
    return ops::mul(w[cw], ow[cw]);
  }
};

struct ResidualOp : SweepGrids {
  static constexpr bool kReadsF = true;
  __device__ double operator()(const double* w, const double* fw, double* ow, std::ptrdiff_t cw,
                               std::ptrdiff_t wsy, std::ptrdiff_t wsz) const {
    ow[cw] = fw[cw] - ops::apply_point(w, cw, wsy, wsz, s);
    return ops::mul(ow[cw], ow[cw]);
  }
};

struct JacobiOp : SweepGrids {
  static constexpr bool kReadsF = true;
  double inv_diag;
  __device__ double operator()(const double* w, const double* fw, double* ow, std::ptrdiff_t cw,
                               std::ptrdiff_t wsy, std::ptrdiff_t wsz) const {
    const double r = ops::jacobi_point(fw, w, ow, cw, wsy, wsz, s, inv_diag);
    return ops::mul(r, r);
  }
};

struct HeatOp : SweepGrids {
  static constexpr bool kReadsF = false;
  double alpha_dt;
  __device__ double operator()(const double* w, const double*, double* ow, std::ptrdiff_t cw,
                               std::ptrdiff_t wsy, std::ptrdiff_t wsz) const {
    ow[cw] = ops::heat_point(w, cw, wsy, wsz, s, alpha_dt);
    return 0.0;
  }
};

// Baseline: the region's points spread over a 3D grid, looping over y and z only when the
// grid was capped (reductions). Every neighbour load goes to the memory system.
template <class Op, bool kReduce>
__global__ void __launch_bounds__(kBlockThreads)
    naive_sweep(Layout l, Region r, Op op, double2* partials) {
  const std::ptrdiff_t sy = l.sy(), sz = l.sz();
  const int i = r.i0 + blockIdx.x * blockDim.x + threadIdx.x;
  DD acc{};
  if (i < r.i1) {
    for (int j = r.j0 + blockIdx.y * blockDim.y + threadIdx.y; j < r.j1;
         j += gridDim.y * blockDim.y) {
      for (int k = r.k0 + blockIdx.z * blockDim.z + threadIdx.z; k < r.k1;
           k += gridDim.z * blockDim.z) {
        const std::ptrdiff_t c = l.at(i, j, k);
        const double v = op(op.u, op.f, op.out, c, sy, sz);
        if constexpr (kReduce) acc = ops::dd_add(acc, v);
      }
    }
  }
  if constexpr (kReduce) store_block_partial(acc, partials);
}

// tile3d: each thread computes a 16-byte aligned pair of x-neighbours in T consecutive
// planes and exits. All of the column's T+2 pair loads and the 4T in-plane loads (y: pairs,
// x: the two scalars beside the pair) come before any point in the source; the grid's z is
// its slowest axis, so the blocks resident at once cover a few whole planes and share them
// (and every tile halo) in L2.
//
// The kernel has no masks, no loop and no conditional store: a launch covers a box of whole
// pairs (r.i0 and r.i1 even) and whole chunks of T planes, one chunk per block (tile3d_split
// gives the rest of a region to other launches). Each of those costs registers: ptxas keeps
// every predicated load or store's operands live across the whole chunk, and the occupancy
// they cost is worth more than the split launches (register counts and rates:
// docs/PERFORMANCE.md, versions 6 and 7).
//
// T and the tile (the block's shape) are the launch's: the backend runs T = kTileZ (and
// T = 1 for a region's last planes) with the kTileX x kTileY tile; bench/gpu/sweep_probe.cu
// times other shapes.
template <class Op, bool kReduce, int T = kTileZ,
          int kMinBlocks = kReduce || Op::kReadsF ? 0 : kTile3dMinBlocks>  // 0: ptxas chooses
__global__ void __launch_bounds__(kBlockThreads, kMinBlocks)
    tile3d_sweep(Layout l, Region r, Op op, double2* partials) {
  const int i = r.i0 + 2 * int(blockIdx.x * blockDim.x + threadIdx.x);  // even
  const int j = r.j0 + blockIdx.y * blockDim.y + threadIdx.y;
  DD acc{};
  if (i < r.i1 && j < r.j1) {
    // 32-bit offsets from one 64-bit base (launch_sweep checks they fit): fewer 64-bit
    // multiplies and registers, so more blocks resident (PERFORMANCE.md version 7).
    const int sy = int(l.sy()), sz = int(l.sz());
    const std::ptrdiff_t base = l.at(i, j, r.k0 + blockIdx.z * T);
    const double* __restrict__ u = op.u + base;
    double2 col[T + 2], ym[T], yp[T], fv[T];
    double xm[T], xp[T];
#pragma unroll
    for (int p = 0; p < T + 2; ++p) col[p] = ldg2(u + (p - 1) * sz);
#pragma unroll
    for (int g = 0; g < T; ++g) {
      const double* ug = u + g * sz;
      xm[g] = __ldg(ug - 1);
      xp[g] = __ldg(ug + 2);
      ym[g] = ldg2(ug - sy);
      yp[g] = ldg2(ug + sy);
      fv[g] = Op::kReadsF ? ldg2(op.f + base + g * sz) : make_double2(0.0, 0.0);
    }
#pragma unroll
    for (int g = 0; g < T; ++g) {
      const double2 b = col[g], c = col[g + 1], t = col[g + 2];
      const double w0[7] = {b.x, ym[g].x, xm[g], c.x, c.y, yp[g].x, t.x};
      const double w1[7] = {b.y, ym[g].y, c.x, c.y, xp[g], yp[g].y, t.y};
      const double f0[4] = {0.0, 0.0, 0.0, fv[g].x}, f1[4] = {0.0, 0.0, 0.0, fv[g].y};
      double o0[4], o1[4];
      const double v0 = op(w0, f0, o0, 3, 2, 3);
      const double v1 = op(w1, f1, o1, 3, 2, 3);
      double2* o = reinterpret_cast<double2*>(op.out + base + g * sz);
      *o = make_double2(o0[3], o1[3]);
      if constexpr (kReduce) acc = ops::dd_add(ops::dd_add(acc, v0), v1);
    }
  }
  if constexpr (kReduce) store_block_partial_any(acc, partials);
}

// The halo cell thread t of a TX x TY smem tile at (it, jt) loads, if any (smem_sweep):
// threads t < 80 (t = tx + 32 ty) own one each, warps 0 and 1 the rows below and above the
// tile, lanes 0-15 of warp 2 the columns left and right of it.
struct SmemHaloCell {
  int i = 0, j = 0, row = 0, col = 0;  // grid point, and its place in the tile
  bool has = false;
};
template <int TX, int TY>
__device__ __forceinline__ SmemHaloCell smem_halo_cell(const Region& r, int t, int it, int jt) {
  SmemHaloCell h;
  if (t < TX) {
    h = {it + t, jt - 1, 0, t + 1};
    h.has = h.i < r.i1;
  } else if (t < 2 * TX) {
    h = {it + t - TX, jt + TY, TY + 1, t - TX + 1};
    h.has = h.i < r.i1 && h.j <= r.j1;
  } else if (t < 2 * TX + TY) {
    h = {it - 1, jt + t - 2 * TX, 0, 0};
    h.row = h.j - jt + 1;
    h.has = h.j < r.j1;
  } else if (t < 2 * TX + 2 * TY) {
    h = {it + TX, jt + t - 2 * TX - TY, 0, TX + 1};
    h.row = h.j - jt + 1;
    h.has = h.i <= r.i1 && h.j < r.j1;
  }
  return h;
}

// smem_sweep's register columns from plane k on: ucol[p] = u at plane k - 1 + p for p in
// [U0, U1), h[p] and fcol[p] at plane k + p for p in [H0, H1); 0 where the thread has no
// such cell or the plane is past ke (the pointers are dereferenced only under the flags).
template <bool kReadsF, int U0, int U1, int H0, int H1>
__device__ __forceinline__ void smem_load(double* ucol, double* h, double* fcol, const double* uc,
                                          const double* uh, const double* fc, std::ptrdiff_t sz,
                                          int k, int ke, bool has_c, bool has_h, bool active) {
#pragma unroll
  for (int p = U0; p < U1; ++p) ucol[p] = has_c && k - 1 + p <= ke ? __ldg(uc + (p - 1) * sz) : 0.0;
#pragma unroll
  for (int p = H0; p < H1; ++p) {
    h[p] = has_h && k + p < ke ? __ldg(uh + p * sz) : 0.0;
    fcol[p] = kReadsF && active && k + p < ke ? __ldg(fc + p * sz) : 0.0;
  }
}

// smem (2.5D): a block owns a TX x TY (i,j) tile and kz planes (short chunks: blocks are
// short-lived and launched z-slowest, so resident blocks stay at nearby z). Per plane each
// thread puts its own u into a (32+2)x(8+2) shared tile, the edge threads the tile's halo,
// and after one barrier computes its point from the tile (x,y neighbours) and registers
// (z neighbours). Global traffic per point: one u (+ 1/4 + 1/16 halo, mostly L2 hits), one
// store, f where read. Loads run one group of kSmemDepth planes ahead of the compute
// (they are only used in the next step, so they stay in flight across it); the two tile buffers
// alternate by plane so one barrier per plane suffices.
//
// Tile cells: a thread with i <= r.i1 and j <= r.j1 loads its own cell (the region's high
// neighbours i = r.i1 / j = r.j1 may be cells of this tile); 80 threads load one halo cell
// each where a computed point reads it. Every cell a computed point reads is loaded
// (corners are never read).
//
// The tile TX x TY needs 2(TX+TY) <= TX*TY halo threads; the backend compiles only the
// default kTileX x kTileY (launch_config.hpp). The register budget is per 256 threads
// whatever the tile: as many resident threads per SM.
template <class Op, bool kReduce, int TX = kTileX, int TY = kTileY>
__global__ void __launch_bounds__(TX* TY, (Op::kReadsF ? kSmemMinBlocksF : kSmemMinBlocks) *
                                              kBlockThreads / (TX * TY))
    smem_sweep(Layout l, Region r, int kz, Op op, double2* partials) {
  static_assert(TX % 32 == 0 && TX * TY <= kBlockThreads && 2 * (TX + TY) <= TX * TY,
                "smem tile: whole warps, one halo cell per thread at most");
  constexpr int D = kSmemDepth;
  __shared__ double tile[2][TY + 2][TX + 2];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int i = r.i0 + blockIdx.x * TX + tx;
  const int j = r.j0 + blockIdx.y * TY + ty;
  const int kb = r.k0 + blockIdx.z * kz;
  const int ke = min(kb + kz, r.k1);
  const bool active = i < r.i1 && j < r.j1;
  const bool has_c = i <= r.i1 && j <= r.j1;
  const SmemHaloCell hc =
      smem_halo_cell<TX, TY>(r, tx + TX * ty, r.i0 + blockIdx.x * TX, r.j0 + blockIdx.y * TY);
  const bool has_h = hc.has;
  DD acc{};
  const std::ptrdiff_t sz = l.sz();
  // Pointers are only dereferenced under the flags above.
  const std::ptrdiff_t c = l.at(i, j, kb);
  const double* __restrict__ uc = op.u + c;
  const double* __restrict__ uh = op.u + l.at(hc.i, hc.j, kb);
  const double* __restrict__ fc = (Op::kReadsF ? op.f : op.u) + c;
  double* __restrict__ out = op.out + c;
  // ucol[p]: u at plane k-1+p; h[p], fcol[p]: at plane k+p. Planes past ke read 0.
  double ucol[2 * D + 2], h[2 * D], fcol[2 * D];
  smem_load<Op::kReadsF, 0, D + 2, 0, D>(ucol, h, fcol, uc, uh, fc, sz, kb, ke, has_c, has_h,
                                         active);
  for (int k = kb; k < ke; k += D) {
    const std::ptrdiff_t o = std::ptrdiff_t(k - kb) * sz;
    smem_load<Op::kReadsF, D + 2, 2 * D + 2, D, 2 * D>(ucol, h, fcol, uc + o, uh + o, fc + o, sz, k,
                                                       ke, has_c, has_h, active);
#pragma unroll
    for (int g = 0; g < D; ++g) {
      if (k + g >= ke) break;  // uniform across the block
      double(*s)[TX + 2] = tile[g & 1];
      if (has_c) s[ty + 1][tx + 1] = ucol[g + 1];
      if (has_h) s[hc.row][hc.col] = h[g];
      __syncthreads();
      if (active) {
        const double w[7] = {ucol[g],           s[ty][tx + 1],     s[ty + 1][tx], ucol[g + 1],
                             s[ty + 1][tx + 2], s[ty + 2][tx + 1], ucol[g + 2]};
        const double fw[4] = {0.0, 0.0, 0.0, fcol[g]};
        double ow[4];
        const double v = op(w, fw, ow, 3, 2, 3);
        out[o + g * sz] = ow[3];
        if constexpr (kReduce) acc = ops::dd_add(acc, v);
      }
    }
#pragma unroll
    for (int p = 0; p < D + 2; ++p) ucol[p] = ucol[p + D];
#pragma unroll
    for (int p = 0; p < D; ++p) {
      h[p] = h[p + D];
      fcol[p] = fcol[p + D];
    }
  }
  if constexpr (kReduce) {
    if constexpr (TX * TY == kBlockThreads)
      store_block_partial(acc, partials);
    else
      store_block_partial_any(acc, partials);
  }
}

// ---- Vector kernels over the interior ------------------------------------------------

// An op loads a point's inputs (load, load2 for a pair) and then stores and returns its
// reduction term (finish, finish2); flat_kernel loads all of a thread's points before
// finishing any, since stores to possibly aliasing arrays would otherwise serialise the loads.

// T: the arrays' scalar type (double, or float for a float V-cycle); a and b are rounded to
// T on the host, as the host backend does.
template <class T>
struct AxpbyOp {
  static constexpr int kFlatRows = 2;  // flat/vec2 rows per thread: 16 loads (8 vec2) each
  T a, b;
  const T* x;
  T* y;
  struct In {
    T x, y;
  };
  __device__ In load(std::ptrdiff_t c) const { return {x[c], y[c]}; }
  __device__ double finish(std::ptrdiff_t c, const In& v) const {
    y[c] = ops::axpby_point(a, v.x, b, v.y);
    return 0.0;
  }
  // Points c, c+1 (c even: aligned to a pair).
  __device__ void load2(std::ptrdiff_t c, In& v0, In& v1) const {
    const auto xx = ld2(x + c), yy = ld2(y + c);
    v0 = {xx.x, yy.x};
    v1 = {xx.y, yy.y};
  }
  __device__ void finish2(std::ptrdiff_t c, const In& v0, const In& v1, double& t0,
                          double& t1) const {
    st2(y + c, ops::axpby_point(a, v0.x, b, v0.y), ops::axpby_point(a, v1.x, b, v1.y));
    t0 = t1 = 0.0;
  }
};

struct CgUpdateOp {
  static constexpr int kFlatRows = 1;
  double alpha;
  const double* p;
  const double* ap;
  double* x;
  double* r;
  struct In {
    double p, ap, x, r;
  };
  __device__ In load(std::ptrdiff_t c) const { return {__ldg(p + c), __ldg(ap + c), x[c], r[c]}; }
  __device__ double finish(std::ptrdiff_t c, const In& v) const {
    // As the host's x += alpha p; r -= alpha ap; r.r
    const double rn = v.r - ops::mul(alpha, v.ap);
    x[c] = v.x + ops::mul(alpha, v.p);
    r[c] = rn;
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
    t0 = ops::mul(rn0, rn0);
    t1 = ops::mul(rn1, rn1);
  }
};

template <class T>
struct DotOp {
  static constexpr int kFlatRows = 2;
  const T* x;
  const T* y;
  struct In {
    T x, y;
  };
  __device__ In load(std::ptrdiff_t c) const { return {__ldg(x + c), __ldg(y + c)}; }
  __device__ double finish(std::ptrdiff_t, const In& v) const { return double(ops::mul(v.x, v.y)); }
  __device__ void load2(std::ptrdiff_t c, In& v0, In& v1) const {
    const auto xx = ldg2(x + c), yy = ldg2(y + c);
    v0 = {xx.x, yy.x};
    v1 = {xx.y, yy.y};
  }
  __device__ void finish2(std::ptrdiff_t, const In& v0, const In& v1, double& t0,
                          double& t1) const {
    t0 = double(ops::mul(v0.x, v0.y));
    t1 = double(ops::mul(v1.x, v1.y));
  }
};

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

template <class T, bool kReduce>
__global__ void __launch_bounds__(kBlockThreads)
    smooth_sweep(Layout l, Region r, Stencil s, double cd, double cr, const T* f, const T* u,
                 const T* d_in, T* d_out, T* unew, double2* partials) {
  const int i = r.i0 + blockIdx.x * blockDim.x + threadIdx.x;
  const int j = r.j0 + blockIdx.y * blockDim.y + threadIdx.y;
  DD acc{};
  if (i < r.i1 && j < r.j1)
    for (int k = r.k0 + blockIdx.z; k < r.k1; k += gridDim.z) {
      const double v =
          ops::smooth_point(f, u, d_in, d_out, unew, l.at(i, j, k), l.sy(), l.sz(), s, cd, cr);
      if constexpr (kReduce) acc = ops::dd_add(acc, v);
    }
  if constexpr (kReduce) store_block_partial(acc, partials);
}

// res = f - A u in float (double residuals take the tuned sweeps above).
template <class T, bool kReduce>
__global__ void __launch_bounds__(kBlockThreads)
    residual_box(Layout l, Region r, Stencil s, const T* f, const T* u, T* res, double2* partials) {
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

template <class T>
__global__ void __launch_bounds__(kBlockThreads)
    restrict_box(Transfer t, const T* __restrict__ fine, T* __restrict__ coarse) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  const int k = blockIdx.z;
  if (i >= t.coarse.nx || j >= t.coarse.ny) return;
  coarse[t.coarse.at(i, j, k)] = ops::restrict_point(t, ops::restrict_row(t, fine, j, k), i);
}

template <class T>
__global__ void __launch_bounds__(kBlockThreads)
    prolong_box(Transfer t, const T* __restrict__ coarse, T* __restrict__ fine) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  const int k = blockIdx.z;
  if (i >= t.fine.nx || j >= t.fine.ny) return;
  ops::prolong_point(t, ops::prolong_row(t, coarse, j, k), fine + t.fine.at(0, j, k), i);
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

// The largest magnitude (ops::magnitude_bits) of the box into *result: a warp maximum,
// then one atomic per warp. Every thread takes part in the shuffles.
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

static __global__ void __launch_bounds__(kBlockThreads)
    max_abs_box(Layout l, const double* __restrict__ x, unsigned long long* result) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  const int k = blockIdx.z;
  unsigned long long m = i < l.nx && j < l.ny ? ops::magnitude_bits(x[l.at(i, j, k)]) : 0;
  for (int d = 16; d > 0; d /= 2) {
    const unsigned long long o = __shfl_down_sync(0xffffffffu, m, d);
    m = o > m ? o : m;
  }
  if ((threadIdx.x + blockDim.x * threadIdx.y) % 32 == 0 && m > 0) atomicMax(result, m);
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

}  // namespace halo3d::cuda
