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

// ---- Why march (45.7% of copy) lost to naive (54.6%), and what the new variants do ----
// (Reasoned from the code and the 512^3 numbers; to be confirmed by the lead's measurements.)
// * naive is L2-bandwidth bound, not DRAM bound: per point it pulls about 5 rows of u
//   through L2 (centre/x-neighbours 1, z-neighbours 2 whole other planes, y-neighbours up to
//   2 when the other warp's line is not in L1 yet), i.e. ~40 B + an 8 B store, +12.5% sector
//   waste because rows start 8 B off a sector (odd double offset; sy = nx+2 = 2 mod 4, so even
//   the ghost alternates between 0 and 16 B mod 32). 2.29 TB/s of useful 16 B/pt is ~7 TB/s
//   of L2->SM traffic, about H200's L2 limit. Reaching 90% of copy needs <~25 B/pt through L2.
// * march cuts that traffic but ptxas gives it 40 registers (8 blocks/SM), so march_planes
//   picks 2 z-chunks: 2048 blocks that each live for 256 planes. Over that time the blocks
//   drift apart in z (no coupling between blocks), so (a) the y-halo rows (2 of 8) and x-halo
//   sectors (2 of ~9 per row) of a tile, which neighbouring tiles loaded at a different time,
//   are L2 misses -> up to ~1.4x DRAM reads of u, and (b) the DRAM sees ~2000 independent
//   streams of 256 B pieces (8 rows x 4 planes per step, per block) at scattered addresses:
//   poor row-buffer locality. (c) The in-plane neighbours are plain loads that only hit L1
//   if the sibling warp that loads that row as its prefetched column is already past it; warps
//   are not synchronised, so many are L1 misses to an in-flight line, and each step then
//   waits a full memory latency; the one-step-ahead prefetch (G = 4 loads per thread, ~32 KB
//   per SM) is barely the bytes in flight HBM needs (~25 KB/SM) even before those stalls.
//   (d) A 256-point serial chain per thread leaves no slack to absorb any of it; the tail of
//   the last wave is another ~5%.
// * tile3d: one thread per kTileZ (4) points, all 22 loads issued before any compute (4
//   independent chains), blocks exit after one chunk, grid z slowest: the ~1000 blocks
//   resident at once cover ~one 4-plane slab, so planes and halos are shared in L2 and DRAM
//   reads stay ~1x; z-neighbour traffic drops from 2 to 0.5 rows per point.
// * smem (2.5D): a 34x10 shared tile per plane, one barrier per plane (two buffers), centre
//   column in registers, loads one group of 4 planes ahead, 64-plane chunks launched z-slow.
//   L2->SM traffic ~1.35 rows of u + the store, so it should no longer be L2 bound.
// * Vector kernels (wave, 73%): one row step per thread at a time (2 points, loads cannot be
//   hoisted above the previous step's stores since the arrays may alias), so each step costs
//   a full memory latency; flat/vec2 issue 16 independent 8-B (8 16-B) loads per thread
//   with no loop, and vec2 halves the instructions and sector waste per byte.

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

// The sweeps' output store: plain, or (kStream, HALO3D_CUDA_STORE=stream) st.global.cs,
// evict-first, so the written array does not push u's planes out of L2.
template <bool kStream>
__device__ __forceinline__ void store_out(double* p, double v) {
  if constexpr (kStream)
    __stcs(p, v);
  else
    *p = v;
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

// ---- Stencil sweeps ------------------------------------------------------------------
// op(w, fw, ow, cw, wsy, wsz) reads the stencil input w and (kReadsF) the right-hand side
// fw, writes the result to ow, all at index cw, and returns the term the sweep's reduction
// adds. The naive sweep passes the grids themselves (cw = c); the march sweep passes small
// register windows laid out so that the same offsets address them (cw = 3, wsy = 2,
// wsz = 3). Either way the arithmetic is the shared point update, so every variant gives
// bitwise the host's values.

struct ApplyOp {
  static constexpr bool kReadsF = false;
  const double* u;
  const double* f;  // unused
  double* out;
  Stencil s;
  __device__ double operator()(const double* w, const double*, double* ow, std::ptrdiff_t cw,
                               std::ptrdiff_t wsy, std::ptrdiff_t wsz) const {
    ow[cw] = ops::apply_point(w, cw, wsy, wsz, s);
    return ops::mul(w[cw], ow[cw]);
  }
};

struct ResidualOp {
  static constexpr bool kReadsF = true;
  const double* u;
  const double* f;
  double* out;
  Stencil s;
  __device__ double operator()(const double* w, const double* fw, double* ow, std::ptrdiff_t cw,
                               std::ptrdiff_t wsy, std::ptrdiff_t wsz) const {
    ow[cw] = fw[cw] - ops::apply_point(w, cw, wsy, wsz, s);
    return ops::mul(ow[cw], ow[cw]);
  }
};

struct JacobiOp {
  static constexpr bool kReadsF = true;
  const double* u;
  const double* f;
  double* out;
  Stencil s;
  double inv_diag;
  __device__ double operator()(const double* w, const double* fw, double* ow, std::ptrdiff_t cw,
                               std::ptrdiff_t wsy, std::ptrdiff_t wsz) const {
    const double r = ops::jacobi_point(fw, w, ow, cw, wsy, wsz, s, inv_diag);
    return ops::mul(r, r);
  }
};

struct HeatOp {
  static constexpr bool kReadsF = false;
  const double* u;
  const double* f;  // unused
  double* out;
  Stencil s;
  double alpha_dt;
  __device__ double operator()(const double* w, const double*, double* ow, std::ptrdiff_t cw,
                               std::ptrdiff_t wsy, std::ptrdiff_t wsz) const {
    ow[cw] = ops::heat_point(w, cw, wsy, wsz, s, alpha_dt);
    return 0.0;
  }
};

// Baseline: the region's points spread over a 3D grid, looping over y and z only when the
// grid was capped (reductions). Every neighbour load goes to the memory system.
template <class Op, bool kReduce, bool kStream = false>
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
        double v;
        if constexpr (kStream) {
          // The same point update on the grids, its output to a register, then stored
          // evict-first. (w, fw shifted so that index 3 is the point; both stay inside u/f.)
          double ow[4];
          v = op(op.u + (c - 3), (Op::kReadsF ? op.f : op.u) + (c - 3), ow, 3, sy, sz);
          store_out<true>(op.out + c, ow[3]);
        } else {
          v = op(op.u, op.f, op.out, c, sy, sz);
        }
        if constexpr (kReduce) acc = ops::dd_add(acc, v);
      }
    }
  }
  if constexpr (kReduce) store_block_partial(acc, partials);
}

// Each block owns a kMarchX x kMarchY tile of (i,j) and kz consecutive planes; each thread
// marches up its column, G = kMarchGroup planes per step. Per point it fetches one new u
// (8 B, plus f where the op reads it) and writes one value (8 B).
//
// The column is loaded one step ahead: while a step computes planes k..k+G-1, the loads of
// planes k+G+1..k+2G are in flight (G DRAM loads per thread, enough bytes outstanding to
// cover HBM latency at ~1000 resident threads per SM), and the in-plane neighbours of the
// step's points, which other threads of the tile loaded one step earlier, are L1 hits.
// Because the prefetched values are only used in the next iteration, the compiler cannot
// sink those loads to their use.
template <class Op, bool kReduce, bool kStream = false>
__global__ void __launch_bounds__(kBlockThreads, Op::kReadsF ? kMarchMinBlocksF : kMarchMinBlocks)
    march_sweep(Layout l, Region r, int kz, Op op, double2* partials) {
  constexpr int G = kMarchGroup;
  const int i = r.i0 + blockIdx.x * kMarchX + threadIdx.x;
  const int j = r.j0 + blockIdx.y * kMarchY + threadIdx.y;
  const int kb = r.k0 + blockIdx.z * kz;
  const int ke = min(kb + kz, r.k1);
  DD acc{};
  if (i < r.i1 && j < r.j1 && kb < ke) {
    const std::ptrdiff_t sy = l.sy(), sz = l.sz();
    // Advanced by one step per iteration; the 32-bit offsets from it keep the loop's
    // address registers few (the host checks that (2G+1) sz fits in an int).
    const double* __restrict__ u = op.u + l.at(i, j, kb);
    // Ops that read no f get u here, never read through f (so f += stays defined).
    const double* __restrict__ f = (Op::kReadsF ? op.f : op.u) + l.at(i, j, kb);
    double* __restrict__ out = op.out + l.at(i, j, kb);
    const int isy = int(sy), isz = int(sz);
    // ucol[p] = u at plane k-1+p, fcol[p] = f at plane k+p. Planes past ke are never
    // needed (and may not exist), so they read as 0.
    double ucol[2 * G + 2];
    double fcol[2 * G];
#pragma unroll
    for (int p = 0; p < G + 2; ++p) ucol[p] = kb - 1 + p <= ke ? __ldg(u + (p - 1) * isz) : 0.0;
    if constexpr (Op::kReadsF) {
#pragma unroll
      for (int p = 0; p < G; ++p) fcol[p] = kb + p < ke ? __ldg(f + p * isz) : 0.0;
    }
    for (int k = kb; k < ke; k += G, u += G * sz, f += G * sz, out += G * sz) {
#pragma unroll
      for (int p = G + 2; p < 2 * G + 2; ++p)
        ucol[p] = k - 1 + p <= ke ? __ldg(u + (p - 1) * isz) : 0.0;
      if constexpr (Op::kReadsF) {
#pragma unroll
        for (int p = G; p < 2 * G; ++p) fcol[p] = k + p < ke ? __ldg(f + p * isz) : 0.0;
      }
#pragma unroll
      for (int g = 0; g < G; ++g) {
        if (k + g >= ke) break;  // uniform across the block: the chunk's last, short step
        const double* ug = u + g * isz;
        const double w[7] = {ucol[g],       __ldg(ug - isy), __ldg(ug - 1), ucol[g + 1],
                             __ldg(ug + 1), __ldg(ug + isy), ucol[g + 2]};
        const double fw[4] = {0.0, 0.0, 0.0, Op::kReadsF ? fcol[g] : 0.0};
        double ow[4];
        const double v = op(w, fw, ow, 3, 2, 3);
        store_out<kStream>(out + g * isz, ow[3]);
        if constexpr (kReduce) acc = ops::dd_add(acc, v);
      }
#pragma unroll
      for (int p = 0; p < G + 2; ++p) ucol[p] = ucol[p + G];
      if constexpr (Op::kReadsF) {
#pragma unroll
        for (int p = 0; p < G; ++p) fcol[p] = fcol[p + G];
      }
    }
  }
  if constexpr (kReduce) store_block_partial(acc, partials);
}

// tile3d: 32x8 (i,j) tiles like march, but each thread does kTileZ consecutive planes and
// exits (or, in a capped reducing launch, strides on by gridDim.z chunks): all 6 column and
// 4*kTileZ in-plane loads are issued before any point is computed, giving kTileZ
// independent chains, and the grid's z is its slowest axis, so the blocks resident at once
// cover a few whole planes and share them (and every tile halo) in L2.
//
// Tuning: T = HALO3D_CUDA_TILE_Z (default kTileZ); the tile is the block's shape
// (HALO3D_CUDA_TILE, default 32x8, any whole number of warps <= kBlockThreads threads).
template <class Op, bool kReduce, int T = kTileZ, bool kStream = false>
__global__ void __launch_bounds__(kBlockThreads)
    tile3d_sweep(Layout l, Region r, Op op, double2* partials) {
  const int i = r.i0 + blockIdx.x * blockDim.x + threadIdx.x;
  const int j = r.j0 + blockIdx.y * blockDim.y + threadIdx.y;
  const int chunks = (r.k1 - r.k0 + T - 1) / T;
  DD acc{};
  if (i < r.i1 && j < r.j1) {
    const std::ptrdiff_t sy = l.sy(), sz = l.sz();
    for (int ch = blockIdx.z; ch < chunks; ch += gridDim.z) {
      const int k0 = r.k0 + ch * T;
      const int n = min(T, r.k1 - k0);  // planes k0 .. k0+n-1; plane k0+n <= nz exists
      const std::ptrdiff_t base = l.at(i, j, k0);
      const double* __restrict__ u = op.u + base;
      double col[T + 2], xm[T], xp[T], ym[T], yp[T], fv[T];
#pragma unroll
      for (int p = 0; p < T + 2; ++p) col[p] = p - 1 <= n ? __ldg(u + (p - 1) * sz) : 0.0;
#pragma unroll
      for (int g = 0; g < T; ++g) {
        const bool in = g < n;
        const double* ug = u + g * sz;
        xm[g] = in ? __ldg(ug - 1) : 0.0;
        xp[g] = in ? __ldg(ug + 1) : 0.0;
        ym[g] = in ? __ldg(ug - sy) : 0.0;
        yp[g] = in ? __ldg(ug + sy) : 0.0;
        fv[g] = Op::kReadsF && in ? __ldg(op.f + base + g * sz) : 0.0;
      }
#pragma unroll
      for (int g = 0; g < T; ++g) {
        if (g < n) {
          const double w[7] = {col[g], ym[g], xm[g], col[g + 1], xp[g], yp[g], col[g + 2]};
          const double fw[4] = {0.0, 0.0, 0.0, fv[g]};
          double ow[4];
          const double v = op(w, fw, ow, 3, 2, 3);
          store_out<kStream>(op.out + base + g * sz, ow[3]);
          if constexpr (kReduce) acc = ops::dd_add(acc, v);
        }
      }
    }
  }
  if constexpr (kReduce) store_block_partial_any(acc, partials);
}

// smem (2.5D): a block owns a 32x8 (i,j) tile and kz planes (short chunks: blocks are
// short-lived and launched z-slowest, so resident blocks stay at nearby z). Per plane each
// thread puts its own u into a (32+2)x(8+2) shared tile, the edge threads the tile's halo,
// and after one barrier computes its point from the tile (x,y neighbours) and registers
// (z neighbours). Global traffic per point: one u (+ 1/4 + 1/16 halo, mostly L2 hits), one
// store, f where read. Loads run one group of kSmemDepth planes ahead of the compute, as
// in march; the two tile buffers alternate by plane so one barrier per plane suffices.
//
// Tile cells: a thread with i <= r.i1 and j <= r.j1 loads its own cell (the region's high
// neighbours i = r.i1 / j = r.j1 may be cells of this tile); 80 threads load one halo cell
// each where a computed point reads it. Every cell a computed point reads is loaded
// (corners are never read).
//
// Tuning: the tile TX x TY (HALO3D_CUDA_TILE; default 32x8; needs 2(TX+TY) <= TX*TY halo
// threads) and kStream (HALO3D_CUDA_STORE). The register budget stays that of 32x8: as many
// resident threads per SM.
template <class Op, bool kReduce, int TX = kMarchX, int TY = kMarchY, bool kStream = false>
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
  // Threads t < 80 (t = tx + 32 ty) own one halo cell each: warps 0 and 1 the rows below
  // and above the tile, lanes 0-15 of warp 2 the columns left and right of it.
  const int t = tx + TX * ty, it = r.i0 + blockIdx.x * TX, jt = r.j0 + blockIdx.y * TY;
  int hi = 0, hj = 0, hrow = 0, hcol = 0;
  bool has_h = false;
  if (t < TX) {
    hi = it + t, hj = jt - 1, hrow = 0, hcol = t + 1;
    has_h = hi < r.i1;
  } else if (t < 2 * TX) {
    hi = it + t - TX, hj = jt + TY, hrow = TY + 1, hcol = t - TX + 1;
    has_h = hi < r.i1 && hj <= r.j1;
  } else if (t < 2 * TX + TY) {
    hi = it - 1, hj = jt + t - 2 * TX, hrow = hj - jt + 1, hcol = 0;
    has_h = hj < r.j1;
  } else if (t < 2 * TX + 2 * TY) {
    hi = it + TX, hj = jt + t - 2 * TX - TY, hrow = hj - jt + 1, hcol = TX + 1;
    has_h = hi <= r.i1 && hj < r.j1;
  }
  DD acc{};
  const std::ptrdiff_t sz = l.sz();
  // Pointers are only dereferenced under the flags above.
  const std::ptrdiff_t c = l.at(i, j, kb);
  const double* __restrict__ uc = op.u + c;
  const double* __restrict__ uh = op.u + l.at(hi, hj, kb);
  const double* __restrict__ fc = (Op::kReadsF ? op.f : op.u) + c;
  double* __restrict__ out = op.out + c;
  // ucol[p]: u at plane k-1+p; h[p], fcol[p]: at plane k+p. Planes past ke read 0.
  double ucol[2 * D + 2], h[2 * D], fcol[2 * D];
#pragma unroll
  for (int p = 0; p < D + 2; ++p)
    ucol[p] = has_c && kb - 1 + p <= ke ? __ldg(uc + (p - 1) * sz) : 0.0;
#pragma unroll
  for (int p = 0; p < D; ++p) {
    h[p] = has_h && kb + p < ke ? __ldg(uh + p * sz) : 0.0;
    fcol[p] = Op::kReadsF && active && kb + p < ke ? __ldg(fc + p * sz) : 0.0;
  }
  for (int k = kb; k < ke; k += D) {
    const std::ptrdiff_t o = std::ptrdiff_t(k - kb) * sz;
#pragma unroll
    for (int p = D + 2; p < 2 * D + 2; ++p)
      ucol[p] = has_c && k - 1 + p <= ke ? __ldg(uc + o + (p - 1) * sz) : 0.0;
#pragma unroll
    for (int p = D; p < 2 * D; ++p) {
      h[p] = has_h && k + p < ke ? __ldg(uh + o + p * sz) : 0.0;
      fcol[p] = Op::kReadsF && active && k + p < ke ? __ldg(fc + o + p * sz) : 0.0;
    }
#pragma unroll
    for (int g = 0; g < D; ++g) {
      if (k + g >= ke) break;  // uniform across the block
      double(*s)[TX + 2] = tile[g & 1];
      if (has_c) s[ty + 1][tx + 1] = ucol[g + 1];
      if (has_h) s[hrow][hcol] = h[g];
      __syncthreads();
      if (active) {
        const double w[7] = {ucol[g],           s[ty][tx + 1],     s[ty + 1][tx], ucol[g + 1],
                             s[ty + 1][tx + 2], s[ty + 2][tx + 1], ucol[g + 2]};
        const double fw[4] = {0.0, 0.0, 0.0, fcol[g]};
        double ow[4];
        const double v = op(w, fw, ow, 3, 2, 3);
        store_out<kStream>(out + o + g * sz, ow[3]);
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

// slab: tile3d's shape (a TX x TY tile, T planes per thread, z-slowest grid, short-lived
// blocks) with smem's reuse. Each thread issues the loads of its whole column (T+2 planes)
// and, for the 2(TX+TY) halo threads, of one halo cell's T planes, all before any compute;
// one barrier after the T planes are in a shared [T][TY+2][TX+2] tile, then each point reads
// its x and y neighbours from shared memory and its z ones from registers.
// Why: tile3d's in-plane loads (4 of its ~5.5 per point) are issued together with the
// centre loads they would hit in L1, so they mostly go to L2: ~38 B/point of L2->SM traffic
// for 16 B of DRAM traffic. Here that is ~(T+2)/T rows of u + 2/TY rows of y halo + the
// store, ~25 B/point at T = 4, 64x4, with as many loads in flight per thread as tile3d.
//
// Cells: as smem_sweep (a thread with i <= r.i1, j <= r.j1 loads its own cell; the halo
// threads the cells left/below of the tile and right/above it where a computed point reads
// them). In a capped reducing launch a block strides over chunks, with a barrier before the
// tile is reused.
template <class Op, bool kReduce, int T, int TX, int TY>
__global__ void __launch_bounds__(TX* TY) slab_sweep(Layout l, Region r, Op op, double2* partials) {
  static_assert(TX % 32 == 0 && TX * TY <= kBlockThreads && 2 * (TX + TY) <= TX * TY,
                "slab tile: whole warps, one halo cell per thread at most");
  __shared__ double tile[T][TY + 2][TX + 2];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int it = r.i0 + blockIdx.x * TX, jt = r.j0 + blockIdx.y * TY;
  const int i = it + tx, j = jt + ty;
  const bool active = i < r.i1 && j < r.j1;
  const bool has_c = i <= r.i1 && j <= r.j1;
  const int t = tx + TX * ty;
  int hi = 0, hj = 0, hrow = 0, hcol = 0;
  bool has_h = false;
  if (t < TX) {  // the row below the tile
    hi = it + t, hj = jt - 1, hrow = 0, hcol = t + 1;
    has_h = hi < r.i1;
  } else if (t < 2 * TX) {  // the row above
    hi = it + t - TX, hj = jt + TY, hrow = TY + 1, hcol = t - TX + 1;
    has_h = hi < r.i1 && hj <= r.j1;
  } else if (t < 2 * TX + TY) {  // the column left of it
    hi = it - 1, hj = jt + t - 2 * TX, hrow = hj - jt + 1, hcol = 0;
    has_h = hj < r.j1;
  } else if (t < 2 * TX + 2 * TY) {  // the column right of it
    hi = it + TX, hj = jt + t - 2 * TX - TY, hrow = hj - jt + 1, hcol = TX + 1;
    has_h = hi <= r.i1 && hj < r.j1;
  }
  const int chunks = (r.k1 - r.k0 + T - 1) / T;
  const std::ptrdiff_t sz = l.sz();
  DD acc{};
  for (int ch = blockIdx.z; ch < chunks; ch += gridDim.z) {
    const int k0 = r.k0 + ch * T;
    const int n = min(T, r.k1 - k0);  // planes k0 .. k0+n-1; plane k0+n <= nz exists
    // Pointers are only dereferenced under the flags above.
    const std::ptrdiff_t c = l.at(i, j, k0);
    const double* __restrict__ uc = op.u + c;
    const double* __restrict__ uh = op.u + l.at(hi, hj, k0);
    double col[T + 2], h[T], fv[T];
#pragma unroll
    for (int p = 0; p < T + 2; ++p) col[p] = has_c && p - 1 <= n ? __ldg(uc + (p - 1) * sz) : 0.0;
#pragma unroll
    for (int g = 0; g < T; ++g) {
      h[g] = has_h && g < n ? __ldg(uh + g * sz) : 0.0;
      fv[g] = Op::kReadsF && active && g < n ? __ldg(op.f + c + g * sz) : 0.0;
    }
    if (ch != int(blockIdx.z)) __syncthreads();  // the previous chunk is done with the tile
#pragma unroll
    for (int g = 0; g < T; ++g) {
      if (has_c) tile[g][ty + 1][tx + 1] = col[g + 1];
      if (has_h) tile[g][hrow][hcol] = h[g];
    }
    __syncthreads();
    if (active) {
#pragma unroll
      for (int g = 0; g < T; ++g) {
        if (g < n) {
          const double(*s)[TX + 2] = tile[g];
          const double w[7] = {col[g],     s[ty][tx + 1],     s[ty + 1][tx],
                               col[g + 1], s[ty + 1][tx + 2], s[ty + 2][tx + 1],
                               col[g + 2]};
          const double fw[4] = {0.0, 0.0, 0.0, fv[g]};
          double ow[4];
          const double v = op(w, fw, ow, 3, 2, 3);
          op.out[c + g * sz] = ow[3];
          if constexpr (kReduce) acc = ops::dd_add(acc, v);
        }
      }
    }
  }
  if constexpr (kReduce) {
    if constexpr (TX * TY == kBlockThreads)
      store_block_partial(acc, partials);
    else
      store_block_partial_any(acc, partials);
  }
}

// shfl: as tile3d (T planes per thread, all loads issued first, short-lived blocks, z-slowest
// grid), but each thread does YP consecutive rows, and the x-neighbours come from the
// adjacent lanes by warp shuffle (lanes 0 and 31 load the one value beyond the warp).
// Why: ncu on tile3d at 512^3 shows DRAM traffic at 16.1 B/point (ideal) but only 43.6% of
// warps active (64 registers) and 54 B/point through L1: every in-plane load holds an L1 line
// and registers while in flight, so fewer DRAM bytes are in flight than HBM needs. Loads per
// point drop from 5.5 (tile3d, T=4) to (YP+2)(T+2)-4 over YP*T: 3.5 (YP=1) or 2.5 (YP=2).
// Block: blockDim.x a multiple of 32 (a warp is 32 consecutive i of one row); its (i,j) tile
// is blockDim.x x blockDim.y*YP.
template <class Op, bool kReduce, int T, int YP>
__global__ void __launch_bounds__(kBlockThreads)
    shfl_sweep(Layout l, Region r, Op op, double2* partials) {
  const int lane = threadIdx.x % 32;
  const int i = r.i0 + blockIdx.x * blockDim.x + threadIdx.x;
  const int j0 = r.j0 + (blockIdx.y * blockDim.y + threadIdx.y) * YP;
  const int chunks = (r.k1 - r.k0 + T - 1) / T;
  const bool has_i = i <= r.i1;  // the region's high neighbour i = r.i1 is read by lane i-1
  const std::ptrdiff_t sy = l.sy(), sz = l.sz();
  DD acc{};
  for (int ch = blockIdx.z; ch < chunks; ch += gridDim.z) {  // uniform: shuffles are safe
    const int k0 = r.k0 + ch * T;
    const int n = min(T, r.k1 - k0);  // planes k0 .. k0+n-1; plane k0+n <= nz exists
    const std::ptrdiff_t base = l.at(i, j0, k0);
    const double* __restrict__ u = op.u + base;
    // v[q][p]: row j0-1+q, plane k0-1+p (corners unused); e: lane 0's x-1 / lane 31's x+1.
    double v[YP + 2][T + 2], e[YP][T], fv[YP][T];
#pragma unroll
    for (int q = 0; q < YP + 2; ++q) {
      const bool row = has_i && j0 - 1 + q <= r.j1;
#pragma unroll
      for (int p = 0; p < T + 2; ++p) {
        const bool corner = (q == 0 || q == YP + 1) && (p == 0 || p == T + 1);
        v[q][p] = !corner && row && p - 1 <= n ? __ldg(u + (q - 1) * sy + (p - 1) * sz) : 0.0;
      }
    }
    const int edge = lane == 0 ? -1 : lane == 31 ? 1 : 0;
#pragma unroll
    for (int q = 0; q < YP; ++q) {
      const bool act = i < r.i1 && j0 + q < r.j1;
#pragma unroll
      for (int g = 0; g < T; ++g) {
        const std::ptrdiff_t o = q * sy + g * sz;
        e[q][g] = edge && act && g < n ? __ldg(u + o + edge) : 0.0;
        fv[q][g] = Op::kReadsF && act && g < n ? __ldg(op.f + base + o) : 0.0;
      }
    }
#pragma unroll
    for (int q = 0; q < YP; ++q) {
      const bool act = i < r.i1 && j0 + q < r.j1;
#pragma unroll
      for (int g = 0; g < T; ++g) {
        const double c = v[q + 1][g + 1];
        const double lo = __shfl_up_sync(0xffffffffu, c, 1);
        const double hi = __shfl_down_sync(0xffffffffu, c, 1);
        if (act && g < n) {
          const double w[7] = {v[q + 1][g],
                               v[q][g + 1],
                               lane == 0 ? e[q][g] : lo,
                               c,
                               lane == 31 ? e[q][g] : hi,
                               v[q + 2][g + 1],
                               v[q + 1][g + 2]};
          const double fw[4] = {0.0, 0.0, 0.0, fv[q][g]};
          double ow[4];
          const double t = op(w, fw, ow, 3, 2, 3);
          op.out[base + q * sy + g * sz] = ow[3];
          if constexpr (kReduce) acc = ops::dd_add(acc, t);
        }
      }
    }
  }
  if constexpr (kReduce) store_block_partial_any(acc, partials);
}

// ---- Vector kernels over the interior ------------------------------------------------
// Aligned pair accesses for vec2 (the caller guarantees 16-byte alignment).
__device__ __forceinline__ double2 ld2(const double* p) {
  return *reinterpret_cast<const double2*>(p);
}
__device__ __forceinline__ double2 ldg2(const double* p) {
  return __ldg(reinterpret_cast<const double2*>(p));
}
__device__ __forceinline__ void st2(double* p, double a, double b) {
  *reinterpret_cast<double2*>(p) = make_double2(a, b);
}

// An op loads a point's inputs (load) and then stores and returns its reduction term
// (finish); the kernel loads kRowsUnroll points before finishing any, since stores to
// possibly aliasing arrays would otherwise serialise the loads.

struct AxpbyOp {
  static constexpr int kFlatRows = 2;  // flat/vec2 rows per thread: 16 loads (8 vec2) each
  double a, b;
  const double* x;
  double* y;
  struct In {
    double x, y;
  };
  __device__ In load(std::ptrdiff_t c) const { return {x[c], y[c]}; }
  __device__ double finish(std::ptrdiff_t c, const In& v) const {
    y[c] = ops::mul(a, v.x) + ops::mul(b, v.y);
    return 0.0;
  }
  // Points c, c+1 (c even: 16-byte aligned).
  __device__ void load2(std::ptrdiff_t c, In& v0, In& v1) const {
    const double2 xx = ld2(x + c), yy = ld2(y + c);
    v0 = {xx.x, yy.x};
    v1 = {xx.y, yy.y};
  }
  __device__ void finish2(std::ptrdiff_t c, const In& v0, const In& v1, double& t0,
                          double& t1) const {
    st2(y + c, ops::mul(a, v0.x) + ops::mul(b, v0.y), ops::mul(a, v1.x) + ops::mul(b, v1.y));
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

struct DotOp {
  static constexpr int kFlatRows = 2;
  const double* x;
  const double* y;
  struct In {
    double x, y;
  };
  __device__ In load(std::ptrdiff_t c) const { return {__ldg(x + c), __ldg(y + c)}; }
  __device__ double finish(std::ptrdiff_t, const In& v) const { return ops::mul(v.x, v.y); }
  __device__ void load2(std::ptrdiff_t c, In& v0, In& v1) const {
    const double2 xx = ldg2(x + c), yy = ldg2(y + c);
    v0 = {xx.x, yy.x};
    v1 = {xx.y, yy.y};
  }
  __device__ void finish2(std::ptrdiff_t, const In& v0, const In& v1, double& t0,
                          double& t1) const {
    t0 = ops::mul(v0.x, v0.y);
    t1 = ops::mul(v1.x, v1.y);
  }
};

// Blocks stride over rows (j,k); threadIdx.x strides along the row's nx points.
template <class Op, bool kReduce>
__global__ void __launch_bounds__(kBlockThreads) rows_kernel(Layout l, Op op, double2* partials) {
  constexpr int U = kRowsUnroll;
  const int rows = l.ny * l.nz;
  DD acc{};
  for (int row = blockIdx.x * blockDim.y + threadIdx.y; row < rows; row += gridDim.x * blockDim.y) {
    const std::ptrdiff_t c0 = l.at(0, row % l.ny, row / l.ny);
    for (int i0 = threadIdx.x; i0 < l.nx; i0 += U * blockDim.x) {
      typename Op::In v[U]{};
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (i0 + u * int(blockDim.x) < l.nx) v[u] = op.load(c0 + i0 + u * blockDim.x);
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (i0 + u * int(blockDim.x) < l.nx) {
          const double t = op.finish(c0 + i0 + u * blockDim.x, v[u]);
          if constexpr (kReduce) acc = ops::dd_add(acc, t);
        }
      }
    }
  }
  if constexpr (kReduce) store_block_partial(acc, partials);
}

// flat (kPairs false) / vec2 (kPairs true): see flat_launch. Each thread loads all of its
// UX x Op::kFlatRows units before it finishes (stores) any, and a block does one row group
// unless a reducing launch was capped. vec2 units are aligned pairs from the row's first
// even index; where the row starts at an odd index its first point is done, as a scalar, by
// the thread of unit 0; a pair of which only the first point is in the row, likewise.
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
      if constexpr (!kPairs) {
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
      } else {
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
    }
  }
  if constexpr (kReduce) store_block_partial(acc, partials);
}

// ---- Halo faces ----------------------------------------------------------------------

static __global__ void __launch_bounds__(kBlockThreads)
    pack_face(Layout l, Face f, int na, int nb, const double* __restrict__ u,
              double* __restrict__ buf) {
  const int a = blockIdx.x * blockDim.x + threadIdx.x;
  if (a >= na) return;
  for (int b = blockIdx.y * blockDim.y + threadIdx.y; b < nb; b += gridDim.y * blockDim.y)
    buf[a + std::ptrdiff_t(na) * b] = u[ops::face_point(l, f, a, b, false)];
}

static __global__ void __launch_bounds__(kBlockThreads)
    unpack_face(Layout l, Face f, int na, int nb, const double* __restrict__ buf,
                double* __restrict__ u) {
  const int a = blockIdx.x * blockDim.x + threadIdx.x;
  if (a >= na) return;
  for (int b = blockIdx.y * blockDim.y + threadIdx.y; b < nb; b += gridDim.y * blockDim.y)
    u[ops::face_point(l, f, a, b, true)] = buf[a + std::ptrdiff_t(na) * b];
}

}  // namespace halo3d::cuda
