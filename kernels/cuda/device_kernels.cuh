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
template <class Op, bool kReduce>
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
        out[g * isz] = ow[3];
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

// ---- Vector kernels over the interior ------------------------------------------------
// An op loads a point's inputs (load) and then stores and returns its reduction term
// (finish); the kernel loads kRowsUnroll points before finishing any, since stores to
// possibly aliasing arrays would otherwise serialise the loads.

struct AxpbyOp {
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
};

struct CgUpdateOp {
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
};

struct DotOp {
  const double* x;
  const double* y;
  struct In {
    double x, y;
  };
  __device__ In load(std::ptrdiff_t c) const { return {__ldg(x + c), __ldg(y + c)}; }
  __device__ double finish(std::ptrdiff_t, const In& v) const { return ops::mul(v.x, v.y); }
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
