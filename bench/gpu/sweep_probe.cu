// Why did halo3d's tile3d sweep reach ~84% of the copy ceiling when pattern_probe.cu's
// tile3d-shaped 7-point kernel (compile-time strides, no bounds masks) reached ~89%? This
// probe times, in one run, on the 512^3 interior with a cudaMemcpy of the padded field as
// the ceiling: t3x, the tile3d of versions 2-5 (one point per thread, per-plane masks for a
// short last chunk, a chunk loop; kSplit: whole chunks take an unmasked path; kMinBlocks:
// __launch_bounds__'s register cap), and halo3d's current tile3d_sweep (device_kernels.cuh:
// x-pairs, no masks, no loop; uncapped and capped registers), launched as the backend launches it.
// Every result is compared bitwise with the first. docs/performance-log.md, version 6, has
// the results.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 --fmad=false -Ikernels -Ikernels/cuda -Isrc/base \
//        -o sweep_probe bench/gpu/sweep_probe.cu
//   ./sweep_probe [reps]
#include "device_kernels.cuh"
#include "probe_common.cuh"

using namespace halo3d;
using namespace halo3d::cuda;

// One chunk of up to T planes of one column; kFull: all T planes exist (no masks).
template <class Op, bool kReduce, int T, bool kFull>
__device__ __forceinline__ void t3x_column(const Op& op, std::ptrdiff_t base, std::ptrdiff_t sy,
                                           std::ptrdiff_t sz, int n, DD& acc) {
  const double* __restrict__ u = op.u + base;
  double col[T + 2], xm[T], xp[T], ym[T], yp[T], fv[T];
#pragma unroll
  for (int p = 0; p < T + 2; ++p) col[p] = kFull || p - 1 <= n ? __ldg(u + (p - 1) * sz) : 0.0;
#pragma unroll
  for (int g = 0; g < T; ++g) {
    const bool in = kFull || g < n;
    const double* ug = u + g * sz;
    xm[g] = in ? __ldg(ug - 1) : 0.0;
    xp[g] = in ? __ldg(ug + 1) : 0.0;
    ym[g] = in ? __ldg(ug - sy) : 0.0;
    yp[g] = in ? __ldg(ug + sy) : 0.0;
    fv[g] = Op::kReadsF && in ? __ldg(op.f + base + g * sz) : 0.0;
  }
#pragma unroll
  for (int g = 0; g < T; ++g) {
    if (kFull || g < n) {
      const double w[7] = {col[g], ym[g], xm[g], col[g + 1], xp[g], yp[g], col[g + 2]};
      const double fw[4] = {0.0, 0.0, 0.0, fv[g]};
      double ow[4];
      const double v = op(w, fw, ow, 3, 2, 3);
      op.out[base + g * sz] = ow[3];
      if constexpr (kReduce) acc = ops::dd_add(acc, v);
    }
  }
}

template <class Op, bool kReduce, int T, int kMinBlocks, bool kSplit>
__global__ void __launch_bounds__(kBlockThreads, kMinBlocks)
    t3x(Layout l, Region r, Op op, double2* partials) {
  const int i = r.i0 + blockIdx.x * blockDim.x + threadIdx.x;
  const int j = r.j0 + blockIdx.y * blockDim.y + threadIdx.y;
  const int chunks = (r.k1 - r.k0 + T - 1) / T;
  DD acc{};
  if (i < r.i1 && j < r.j1) {
    const std::ptrdiff_t sy = l.sy(), sz = l.sz();
    for (int ch = blockIdx.z; ch < chunks; ch += gridDim.z) {
      const int k0 = r.k0 + ch * T;
      const int n = min(T, r.k1 - k0);
      const std::ptrdiff_t base = l.at(i, j, k0);
      if (kSplit && n == T)
        t3x_column<Op, kReduce, T, true>(op, base, sy, sz, n, acc);
      else
        t3x_column<Op, kReduce, T, false>(op, base, sy, sz, n, acc);
    }
  }
  if constexpr (kReduce) store_block_partial_any(acc, partials);
}

struct Probe {
  Layout l{512, 512, 512};
  Region r = Region::whole(l);
  Stencil s = Stencil::laplacian(1.0 / 513, 1.0 / 513, 1.0 / 513);
  double *u = nullptr, *out = nullptr, *ref = nullptr;
  double2* partials = nullptr;
  unsigned long long* bad = nullptr;
  Timer timer;

  double memcpy_row() {
    const double bytes = 16.0 * l.padded_size();
    const double ms = timer.median_ms([&] {
      CK(cudaMemcpyAsync(out, u, l.padded_size() * sizeof(double), cudaMemcpyDeviceToDevice));
    });
    timer.report("cudaMemcpy (padded field)", ms, bytes, 0);
    return bytes / ms * 1e-6;
  }
  // Times kernel k over the whole box: halo3d's tile3d with its launch shape (px 2), the
  // old one-point-per-thread t3x with the old shape (px 1, ceil(nk / T) blocks in z).
  template <class K>
  void run(const char* name, K* k, int T, int px, bool reduce, TileShape tile = {},
           bool is_ref = false) {
    SweepLaunch g = sweep_launch(r, SweepVariant::tile3d, reduce, tile, T);
    if (px == 1)
      g.grid = {unsigned(ceil_div(l.nx, tile.x)), unsigned(ceil_div(l.ny, tile.y)),
                unsigned(ceil_div(l.nz, T))};
    cudaFuncAttributes fa{};
    CK(cudaFuncGetAttributes(&fa, k));
    CK(cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout,
                            int(cudaSharedmemCarveoutMaxL1)));
    const ApplyOp op{{u, nullptr, out, s}};
    const dim3 grid(g.grid.x, g.grid.y, g.grid.z), block(g.block.x, g.block.y, g.block.z);
    CK(cudaMemset(out, 0, l.padded_size() * sizeof(double)));
    const double ms = timer.median_ms([&] { k<<<grid, block>>>(l, r, op, partials); });
    if (is_ref) {
      CK(cudaMemcpy(ref, out, l.padded_size() * sizeof(double), cudaMemcpyDeviceToDevice));
    } else {
      report_mismatch(out, ref, long(l.padded_size()), bad, "the first");
    }
    char label[96];
    std::snprintf(label, sizeof label, "%s %dx%d%s", name, g.block.x, g.block.y,
                  reduce ? " +dot" : "");
    timer.report(label, ms, 16.0 * l.interior_size(), fa.numRegs);
  }
};

int main(int argc, char** argv) {
  Probe p;
  p.timer.reps = argc > 1 ? std::atoi(argv[1]) : 20;
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %d SMs; halo3d Layout 512^3 (sy %td), ApplyOp, median of %d\n", prop.name,
              prop.multiProcessorCount, p.l.sy(), p.timer.reps);
  const size_t bytes = p.l.padded_size() * sizeof(double);
  CK(cudaMalloc(&p.u, bytes));
  CK(cudaMalloc(&p.out, bytes));
  CK(cudaMalloc(&p.ref, bytes));
  CK(cudaMalloc(&p.partials, sizeof(double2) * kMaxReduceBlocksTile3d));
  CK(cudaMalloc(&p.bad, sizeof *p.bad));
  fill<<<1024, 256>>>(p.u, long(p.l.padded_size()));
  p.timer.copy_gbs = p.memcpy_row();

  p.run("t3x T4 masked (old tile3d)", t3x<ApplyOp, false, 4, 0, false>, 4, 1, false, {}, true);
  p.run("t3x T4 split", t3x<ApplyOp, false, 4, 0, true>, 4, 1, false);
  p.run("t3x T4 split, <= 56 regs", t3x<ApplyOp, false, 4, 4, true>, 4, 1, false);
  p.run("t3x T4 split, <= 32 regs", t3x<ApplyOp, false, 4, 8, true>, 4, 1, false);
  p.run("tile3d_sweep T8", tile3d_sweep<ApplyOp, false, 8>, 8, 2, false);
  p.run("tile3d_sweep T8 uncapped", tile3d_sweep<ApplyOp, false, 8, 0>, 8, 2, false);
  p.run("tile3d_sweep T8 <= 48 regs", tile3d_sweep<ApplyOp, false, 8, 5>, 8, 2, false);
  p.run("tile3d_sweep T4 uncapped", tile3d_sweep<ApplyOp, false, 4, 0>, 4, 2, false);
  p.run("tile3d_sweep T4", tile3d_sweep<ApplyOp, false, 4>, 4, 2, false);
  p.run("tile3d_sweep T2", tile3d_sweep<ApplyOp, false, 2>, 2, 2, false);
  p.run("tile3d_sweep T8", tile3d_sweep<ApplyOp, false, 8>, 8, 2, false, {32, 8});
  p.run("tile3d_sweep T8", tile3d_sweep<ApplyOp, false, 8>, 8, 2, false, {32, 4});
  p.run("tile3d_sweep T8 uncapped", tile3d_sweep<ApplyOp, false, 8, 0>, 8, 2, false, {32, 4});
  p.run("tile3d_sweep T8", tile3d_sweep<ApplyOp, false, 8>, 8, 2, false, {128, 2});
  p.run("tile3d_sweep T8", tile3d_sweep<ApplyOp, false, 8>, 8, 2, false, {64, 2});
  // Reducing sweeps (CG's apply + dot): one partial per block.
  p.run("tile3d_sweep T8", tile3d_sweep<ApplyOp, true, 8>, 8, 2, true);
  p.run("tile3d_sweep T8 <= 48 regs", tile3d_sweep<ApplyOp, true, 8, 5>, 8, 2, true);
  p.run("tile3d_sweep T4", tile3d_sweep<ApplyOp, true, 4>, 4, 2, true);
  p.memcpy_row();
  return 0;
}
