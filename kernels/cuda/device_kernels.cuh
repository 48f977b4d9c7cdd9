// The CUDA reductions and stencil sweeps (included by cuda_kernels.cu, and by
// bench/gpu/sweep_probe.cu; the other kernels are in device_vector_kernels.cuh). Each point update
// is the shared one from point_ops.hpp; the kernels differ from the host loops only in how they
// visit points and combine partial sums.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

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

// Whether an array allows the pair accesses below (cudaMalloc's do); a sweep op's arrays.
inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }
template <class SweepOp>
bool op_aligned16(const SweepOp& o) {
  return aligned16(o.u) && aligned16(o.out) && (!SweepOp::kReadsF || aligned16(o.f));
}

// The largest of the threads' words into *result: a warp maximum, then one atomic per warp
// (max_abs, the set-up's bounds). Every thread takes part in the shuffles (those with no
// point: word 0).
__device__ inline void max_word(unsigned long long m, unsigned long long* result) {
  for (int d = 16; d > 0; d /= 2) {
    const unsigned long long o = __shfl_down_sync(0xffffffffu, m, d);
    m = o > m ? o : m;
  }
  if ((threadIdx.x + blockDim.x * threadIdx.y) % 32 == 0 && m > 0) atomicMax(result, m);
}
// The largest word(k) over a thread's planes k = k0, k0 + gridDim.z, ... below k1 (none where
// `in` is false) into *result: each thread's own maximum first, then max_word, so that a
// launch of max_word_planes planes makes few atomics on the one word.
template <class Word>
__device__ void max_word_over_planes(bool in, int k0, int k1, const Word& word,
                                     unsigned long long* result) {
  unsigned long long m = 0;
  if (in)
    for (int k = k0; k < k1; k += gridDim.z) {
      const unsigned long long w = word(k);
      m = w > m ? w : m;
    }
  max_word(m, result);
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

// The op a tiled sweep (tile3d, smem) runs: its stencil without face weights (launch_sweep
// sends variable stencils to the naive sweep; Coefficients, layout.hpp). Compiled in, the
// variable branch's registers made ptxas spill tile3d's apply (904 bytes of stack under its
// 40-register bound, 10% of copy, session 35).
template <class Op>
__device__ __forceinline__ Op constant_only(Op op) {
  op.s = compiled_for<Coefficients::constant>(op.s);
  return op;
}

// Baseline: the region's points spread over a 3D grid, looping over y and z only when the
// grid was capped (reductions). Every neighbour load goes to the memory system.
template <class Op, bool kReduce, Coefficients C>
__global__ void __launch_bounds__(kBlockThreads)
    naive_sweep(Layout l, Region r, Op op, double2* partials) {
  op.s = compiled_for<C>(op.s);
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
    tile3d_sweep(Layout l, Region r, Op op_in, double2* partials) {
  const Op op = constant_only(op_in);
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

// The sweep kernels compiled: tile3d with kTileZ planes per thread (T = 1 for a region's
// last nk mod kTileZ planes) and smem, both with the kTileX x kTileY tile of
// launch_config.hpp, and naive. Other shapes lost when measured (docs/performance-log.md,
// versions 4, 5 and 8); bench/gpu/sweep_probe.cu still compiles them to measure.
template <class Op, bool kReduce>
auto tile3d_kernel(int z) {
  return z == 1 ? tile3d_sweep<Op, kReduce, 1> : tile3d_sweep<Op, kReduce, kTileZ>;
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
    smem_sweep(Layout l, Region r, int kz, Op op_in, double2* partials) {
  const Op op = constant_only(op_in);
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

}  // namespace halo3d::cuda
