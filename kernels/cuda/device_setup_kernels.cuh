// The CUDA backend's variable-coefficient set-up kernels (Kernels::face_weights to
// max_diagonal): one thread per point around coefficient_ops.hpp's point updates, mixed into
// CudaKernels (a file of its own for cuda_kernels.cu's length). Set-up runs once per solve:
// plain launches over the padded box, no tuning.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "cuda_check.hpp"
#include "cuda_handles.hpp"
#include "device_kernels.cuh"
#include "kernels.hpp"
#include "launch_config.hpp"
#include "point_ops.hpp"

namespace halo3d::cuda {

// Threads of a set-up launch: 32 along x, 8 along y, one z plane per grid z. `lo` is the
// first index of each axis (-1: from the ghost layer), `n` the count along each.
struct SetupBox {
  int lo = 0, nx = 0, ny = 0, nz = 0;
  __device__ bool point(int& x, int& y, int& z) const {
    x = lo + int(blockIdx.x * blockDim.x + threadIdx.x);
    y = lo + int(blockIdx.y * blockDim.y + threadIdx.y);
    z = lo + int(blockIdx.z);
    return x < lo + nx && y < lo + ny;
  }
};

__global__ void __launch_bounds__(kBlockThreads)
    face_weights_box(SetupBox b, Layout l, Stencil s, NeumannPlanes np,
                     const double* __restrict__ k, double* w) {
  int x, y, z;
  if (b.point(x, y, z)) ops::face_weights_point(l, s, np, k, w, x, y, z);
}
__global__ void __launch_bounds__(kBlockThreads)
    volume_scale_box(SetupBox b, Layout l, NeumannPlanes np, bool divide, double* v) {
  int x, y, z;
  if (b.point(x, y, z)) ops::volume_scale_point(l, np, divide, v, x, y, z);
}
__global__ void __launch_bounds__(kBlockThreads)
    round_flat(std::size_t n, const double* __restrict__ in, float* __restrict__ out) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    out[i] = float(in[i]);  // round to nearest, as the host's conversion
}
template <int S>
__global__ void __launch_bounds__(kBlockThreads)
    coarsen_box(SetupBox b, Transfer t, const double* __restrict__ fine, double* coarse) {
  int x, y, z;
  if (!b.point(x, y, z)) return;
  const ops::RestrictRow<double, S> r = ops::restrict_row<S>(t, fine, y, z);
  coarse[t.coarse.at(x, y, z)] = ops::coarsen_point(t, r, x);
}
__global__ void __launch_bounds__(kBlockThreads)
    od_weights_box(SetupBox b, Transfer t, const double* __restrict__ w, float* od) {
  int x, y, z;
  if (b.point(x, y, z)) ops::od_weight_point(t, w, od, x, y, z);
}
template <bool Od>
__global__ void __launch_bounds__(kBlockThreads)
    galerkin_parts_box(SetupBox b, Transfer t, const double* __restrict__ w,
                       const double* __restrict__ below, double* parts) {
  int x, y, z;
  if (b.point(x, y, z)) ops::galerkin_parts_point<Od>(t, w, below, parts, x, y, z);
}
__global__ void __launch_bounds__(kBlockThreads)
    galerkin_faces_box(SetupBox b, Layout l, const double* __restrict__ parts, double* w) {
  int x, y, z;
  if (b.point(x, y, z)) ops::galerkin_faces_point(l, parts, w, x, y, z);
}
__global__ void __launch_bounds__(kBlockThreads)
    faces_below_box(SetupBox b, Layout l, const double* __restrict__ w, double* below) {
  int x, y, z;
  if (b.point(x, y, z)) ops::faces_below_point(l, w, below, x, y, z);
}
__global__ void __launch_bounds__(kBlockThreads)
    boundary_ghosts_box(SetupBox b, Layout l, int sides, double* k) {
  int x, y, z;
  if (b.point(x, y, z)) ops::boundary_ghost_point(l, sides, k, x, y, z);
}
__global__ void __launch_bounds__(kBlockThreads)
    inverse_diagonal_box(SetupBox b, Layout l, FaceWeights<double> f, double shift, double* out) {
  int x, y, z;
  if (b.point(x, y, z)) ops::inverse_diagonal_point(l, f, shift, out, x, y, z);
}
// The largest spectrum (diagonal) word of the box into *result, each thread over every
// gridDim.z-th plane (max_word_planes).
__global__ void __launch_bounds__(kBlockThreads)
    spectrum_box(SetupBox b, Layout l, FaceWeights<double> f, double shift, BoxPlace p,
                 unsigned long long* result) {
  int x, y, z;
  const bool in = b.point(x, y, z);
  max_word_over_planes(
      in, z, b.lo + b.nz, [&](int k) { return ops::spectrum_word(l, f, shift, p, x, y, k); },
      result);
}
__global__ void __launch_bounds__(kBlockThreads)
    diagonal_box(SetupBox b, Layout l, FaceWeights<double> f, double shift, NeumannPlanes np,
                 unsigned long long* result) {
  int x, y, z;
  const bool in = b.point(x, y, z);
  max_word_over_planes(
      in, z, b.lo + b.nz, [&](int k) { return ops::diagonal_word(l, f, shift, np, x, y, k); },
      result);
}

template <class Base>
class CudaSetupKernels : public Base {
 public:
  void face_weights(const Layout& l, const Stencil& spacing, const NeumannPlanes& np,
                    const double* k, double* w) override {
    const SetupBox b{-1, l.nx + 2, l.ny + 2, l.nz + 2};
    if (empty(b)) return;
    face_weights_box<<<grid(b), block(), 0, st()>>>(b, l, spacing, np, k, w);
    HALO3D_CUDA_CHECK_LAUNCH();
  }
  void volume_scale(const Layout& l, const NeumannPlanes& np, bool divide, double* v) override {
    const SetupBox b{0, l.nx, l.ny, l.nz};
    if (empty(b)) return;
    volume_scale_box<<<grid(b), block(), 0, st()>>>(b, l, np, divide, v);
    HALO3D_CUDA_CHECK_LAUNCH();
  }
  void round_to_float(std::size_t n, const double* in, float* out) override {
    if (n == 0) return;
    const std::size_t blocks =
        std::min<std::size_t>((n + kBlockThreads - 1) / kBlockThreads, 1 << 16);
    round_flat<<<unsigned(blocks), kBlockThreads, 0, st()>>>(n, in, out);
    HALO3D_CUDA_CHECK_LAUNCH();
  }
  void coarsen_mean(const Transfer& t, const double* fine, double* coarse) override {
    const SetupBox b{0, t.coarse.nx, t.coarse.ny, t.coarse.nz};
    if (empty(b)) return;
    if (t.span == 4)
      coarsen_box<4><<<grid(b), block(), 0, st()>>>(b, t, fine, coarse);
    else
      coarsen_box<3><<<grid(b), block(), 0, st()>>>(b, t, fine, coarse);
    HALO3D_CUDA_CHECK_LAUNCH();
  }
  void od_weights(const Transfer& t, const double* w, float* od) override {
    const SetupBox b{0, t.fine.nx, t.fine.ny, t.fine.nz};
    if (empty(b)) return;
    od_weights_box<<<grid(b), block(), 0, st()>>>(b, t, w, od);
    HALO3D_CUDA_CHECK_LAUNCH();
  }
  void galerkin_parts(const Transfer& t, const double* w, const double* below,
                      double* parts) override {
    const SetupBox b{0, t.coarse.nx, t.coarse.ny, t.coarse.nz};
    if (empty(b)) return;
    if (t.od)
      galerkin_parts_box<true><<<grid(b), block(), 0, st()>>>(b, t, w, below, parts);
    else
      galerkin_parts_box<false><<<grid(b), block(), 0, st()>>>(b, t, w, below, parts);
    HALO3D_CUDA_CHECK_LAUNCH();
  }
  void galerkin_faces(const Layout& l, const double* parts, double* w) override {
    const SetupBox b{-1, l.nx + 2, l.ny + 2, l.nz + 2};
    if (empty(b)) return;
    galerkin_faces_box<<<grid(b), block(), 0, st()>>>(b, l, parts, w);
    HALO3D_CUDA_CHECK_LAUNCH();
  }
  void faces_below(const Layout& l, const double* w, double* below) override {
    const SetupBox b{0, l.nx, l.ny, l.nz};
    if (empty(b)) return;
    faces_below_box<<<grid(b), block(), 0, st()>>>(b, l, w, below);
    HALO3D_CUDA_CHECK_LAUNCH();
  }
  void fill_boundary_ghosts(const Layout& l, int sides, double* k) override {
    if (l.interior_size() == 0) return;
    const SetupBox b{-1, l.nx + 2, l.ny + 2, l.nz + 2};
    boundary_ghosts_box<<<grid(b), block(), 0, st()>>>(b, l, sides, k);
    HALO3D_CUDA_CHECK_LAUNCH();
  }
  void inverse_diagonal(const Layout& l, const Stencil& s, double* out) override {
    const SetupBox b{-1, l.nx + 2, l.ny + 2, l.nz + 2};
    if (empty(b)) return;
    inverse_diagonal_box<<<grid(b), block(), 0, st()>>>(b, l, s.vd, s.shift, out);
    HALO3D_CUDA_CHECK_LAUNCH();
  }
  double spectrum_bound(const Layout& l, const Stencil& s, const BoxPlace& p) override {
    const SetupBox b{0, l.nx, l.ny, l.nz};
    return largest_word(ops::magnitude_bits(1.0), !empty(b), [&](unsigned long long* word) {
      spectrum_box<<<max_word_grid(b), block(), 0, st()>>>(b, l, s.vd, s.shift, p, word);
    });
  }
  double max_diagonal(const Layout& l, const Stencil& s, const NeumannPlanes& np) override {
    const SetupBox b{0, l.nx, l.ny, l.nz};
    return largest_word(0, !empty(b), [&](unsigned long long* word) {
      diagonal_box<<<max_word_grid(b), block(), 0, st()>>>(b, l, s.vd, s.shift, np, word);
    });
  }

 private:
  cudaStream_t st() const { return static_cast<cudaStream_t>(this->native_stream(Lane::interior)); }
  static bool empty(const SetupBox& b) { return b.nx <= 0 || b.ny <= 0 || b.nz <= 0; }
  static dim3 block() { return dim3(32, kBlockThreads / 32); }
  static dim3 grid(const SetupBox& b) {
    return dim3(unsigned(b.nx + 31) / 32,
                unsigned(b.ny + kBlockThreads / 32 - 1) / (kBlockThreads / 32), unsigned(b.nz));
  }
  static dim3 max_word_grid(const SetupBox& b) {
    dim3 g = grid(b);
    g.z = max_word_planes((long long)g.x * g.y, b.nz);
    return g;
  }

 protected:
  // The largest of `first` and the words launch(word) gives (where `launches`: the box is
  // not empty), after the work before it (either lane: fenced), copied back at once: the
  // set-up's bounds and max_abs. word_: one word of device memory, which the backend makes
  // once, where its device is current (not a cudaMalloc and cudaFree per call).
  template <class Launch>
  double largest_word(unsigned long long first, bool launches, const Launch& launch) {
    this->fence(Lane::boundary, Lane::interior);
    auto* w = static_cast<unsigned long long*>(word_.get());
    HALO3D_CUDA_CHECK(cudaMemcpyAsync(w, &first, sizeof first, cudaMemcpyHostToDevice, st()));
    if (launches) {
      launch(w);
      HALO3D_CUDA_CHECK_LAUNCH();
    }
    unsigned long long host = 0;
    HALO3D_CUDA_CHECK(cudaMemcpyAsync(&host, w, sizeof host, cudaMemcpyDeviceToHost, st()));
    HALO3D_CUDA_CHECK(cudaStreamSynchronize(st()));
    return ops::from_magnitude_bits(host);
  }
  DeviceMemory word_;
};

}  // namespace halo3d::cuda
