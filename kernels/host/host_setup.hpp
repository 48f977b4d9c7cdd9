// The host backend's variable-coefficient set-up kernels (Kernels::face_weights to
// max_diagonal): OpenMP loops around coefficient_ops.hpp's point updates, mixed into
// HostKernels (a file of its own for host_kernels.cpp's length).
#pragma once
#include <algorithm>
#include <cstdint>

#include "kernels.hpp"
#include "point_ops.hpp"

namespace halo3d {

template <class Base>
class HostSetupKernels : public Base {
 public:
  void face_weights(const Layout& l, const Stencil& spacing, const NeumannPlanes& np,
                    const double* k, double* w) override {
    // The whole padded box (face_weights_point skips the ghost layer above along a).
#pragma omp parallel for collapse(2) schedule(static) if (big(l))
    for (int z = -1; z <= l.nz; ++z)
      for (int y = -1; y <= l.ny; ++y)
        for (int x = -1; x <= l.nx; ++x) ops::face_weights_point(l, spacing, np, k, w, x, y, z);
  }
  void volume_scale(const Layout& l, const NeumannPlanes& np, bool divide, double* v) override {
#pragma omp parallel for collapse(2) schedule(static) if (big(l))
    for (int z = 0; z < l.nz; ++z)
      for (int y = 0; y < l.ny; ++y)
        for (int x = 0; x < l.nx; ++x) ops::volume_scale_point(l, np, divide, v, x, y, z);
  }
  void round_to_float(std::size_t n, const double* in, float* out) override {
#pragma omp parallel for schedule(static) if (n > kSerialPoints)
    for (std::size_t i = 0; i < n; ++i) out[i] = float(in[i]);
  }
  void coarsen_mean(const Transfer& t, const double* fine, double* coarse) override {
    if (t.span == 4)
      coarsen_s<4>(t, fine, coarse);
    else
      coarsen_s<3>(t, fine, coarse);
  }
  template <int S>
  void coarsen_s(const Transfer& t, const double* fine, double* coarse) {
    const Layout& l = t.coarse;
#pragma omp parallel for collapse(2) schedule(static) if (big(t.fine))
    for (int K = 0; K < l.nz; ++K)
      for (int J = 0; J < l.ny; ++J) {
        const ops::RestrictRow<double, S> r = ops::restrict_row<S>(t, fine, J, K);
        double* out = coarse + l.at(0, J, K);
        for (int I = 0; I < l.nx; ++I) out[I] = ops::coarsen_point(t, r, I);
      }
  }
  void od_weights(const Transfer& t, const double* w, float* od) override {
    const Layout& l = t.fine;
#pragma omp parallel for collapse(2) schedule(static) if (big(l))
    for (int z = 0; z < l.nz; ++z)
      for (int y = 0; y < l.ny; ++y)
        for (int x = 0; x < l.nx; ++x) ops::od_weight_point(t, w, od, x, y, z);
  }
  void galerkin_parts(const Transfer& t, const double* w, const double* below,
                      double* parts) override {
    if (t.od)
      galerkin_parts_t<true>(t, w, below, parts);
    else
      galerkin_parts_t<false>(t, w, below, parts);
  }
  template <bool Od>
  void galerkin_parts_t(const Transfer& t, const double* w, const double* below, double* parts) {
    const Layout& l = t.coarse;
#pragma omp parallel for collapse(2) schedule(static) if (big(l))
    for (int z = 0; z < l.nz; ++z)
      for (int y = 0; y < l.ny; ++y)
        for (int x = 0; x < l.nx; ++x) ops::galerkin_parts_point<Od>(t, w, below, parts, x, y, z);
  }
  void galerkin_faces(const Layout& l, const double* parts, double* w) override {
#pragma omp parallel for collapse(2) schedule(static) if (big(l))
    for (int z = -1; z <= l.nz; ++z)
      for (int y = -1; y <= l.ny; ++y)
        for (int x = -1; x <= l.nx; ++x) ops::galerkin_faces_point(l, parts, w, x, y, z);
  }
  void faces_below(const Layout& l, const double* w, double* below) override {
#pragma omp parallel for collapse(2) schedule(static) if (big(l))
    for (int z = 0; z < l.nz; ++z)
      for (int y = 0; y < l.ny; ++y)
        for (int x = 0; x < l.nx; ++x) ops::faces_below_point(l, w, below, x, y, z);
  }
  void fill_boundary_ghosts(const Layout& l, int sides, double* k) override {
    if (l.interior_size() == 0) return;
      // Rows inside the box in y and z have ghosts at their two ends only.
#pragma omp parallel for collapse(2) schedule(static) if (big(l))
    for (int z = -1; z <= l.nz; ++z)
      for (int y = -1; y <= l.ny; ++y) {
        const bool shell = z < 0 || z == l.nz || y < 0 || y == l.ny;
        for (int x = -1; x <= l.nx; x += shell || x == l.nx ? 1 : l.nx + 1)
          ops::boundary_ghost_point(l, sides, k, x, y, z);
      }
  }
  void inverse_diagonal(const Layout& l, const Stencil& s, double* out) override {
#pragma omp parallel for collapse(2) schedule(static) if (big(l))
    for (int z = -1; z <= l.nz; ++z)
      for (int y = -1; y <= l.ny; ++y)
        for (int x = -1; x <= l.nx; ++x)
          ops::inverse_diagonal_point(l, s.vd, s.shift, out, x, y, z);
  }
  double spectrum_bound(const Layout& l, const Stencil& s, const BoxPlace& p) override {
    std::uint64_t m = ops::magnitude_bits(1.0);
    const FaceWeights<double> f = s.vd;
#pragma omp parallel for collapse(2) schedule(static) reduction(max : m) if (big(l))
    for (int z = 0; z < l.nz; ++z)
      for (int y = 0; y < l.ny; ++y)
        for (int x = 0; x < l.nx; ++x)
          m = std::max(m, ops::spectrum_word(l, f, s.shift, p, x, y, z));
    return ops::from_magnitude_bits(m);
  }
  double max_diagonal(const Layout& l, const Stencil& s, const NeumannPlanes& np) override {
    std::uint64_t m = 0;
    const FaceWeights<double> f = s.vd;
#pragma omp parallel for collapse(2) schedule(static) reduction(max : m) if (big(l))
    for (int z = 0; z < l.nz; ++z)
      for (int y = 0; y < l.ny; ++y)
        for (int x = 0; x < l.nx; ++x)
          m = std::max(m, ops::diagonal_word(l, f, s.shift, np, x, y, z));
    return ops::from_magnitude_bits(m);
  }

 private:
  // Below this many points a loop runs on the calling thread (coarse levels: a fork/join
  // would cost more than the work).
  static constexpr std::size_t kSerialPoints = 1 << 15;
  static bool big(const Layout& l) { return l.padded_size() > kSerialPoints; }
};

}  // namespace halo3d
