// The host backend's variable-coefficient set-up kernels (Kernels::face_weights to
// max_diagonal): OpenMP loops around coefficient_ops.hpp's point updates, mixed into
// HostKernels (a file of its own for host_kernels.cpp's length).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

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
    const Layout& l = t.coarse;
    if (!t.od) {
      for (int a = 0; a < 3; ++a) galerkin_trilinear_axis(t, w, below, parts, a);
      return;
    }
#pragma omp parallel for collapse(2) schedule(static) if (big(l))
    for (int z = 0; z < l.nz; ++z)
      for (int y = 0; y < l.ny; ++y)
        for (int x = 0; x < l.nx; ++x) ops::galerkin_parts_point<true>(t, w, below, parts, x, y, z);
  }
  // The trilinear parts along a (ops::galerkin_parts_point<false>'s bits): per coarse J along
  // a, each fine a-line the transverse spans read is summed once (ops::galerkin_line) for the
  // 2-4 coarse points that read it, instead of once by each (the set-up 2.3x faster on a
  // core at 128^3).
  void galerkin_trilinear_axis(const Transfer& t, const double* w, const double* below,
                               double* parts, int a) {
    const Layout& l = t.coarse;
    const int b = (a + 1) % 3, c = (a + 2) % 3, nl[3] = {l.nx, l.ny, l.nz};
    if (l.interior_size() == 0) return;
    std::vector<ops::GalerkinSpan> sp[3];
    for (int e = 0; e < 3; ++e)
      for (int I = 0; I < nl[e]; ++I) sp[e].push_back(ops::galerkin_span(t, e, t.co[e] + I, true));
    // The fine lines the spans read: local transverse indices [lo, lo + width) along b and c.
    const auto lo = [&](int e) { return sp[e].front().first - t.fo[e]; };
    const auto width = [&](int e) {
      return sp[e].back().first + sp[e].back().count - sp[e].front().first;
    };
    const int lb = lo(b), lc = lo(c), wb = width(b), wc = width(c);
    const std::ptrdiff_t n = std::ptrdiff_t(l.padded_size());
#pragma omp parallel for schedule(static) if (big(l))
    for (int J = 0; J < nl[a]; ++J) {
      ops::GalerkinRange r[2];
      ops::galerkin_ranges(t, a, t.co[a] + J, sp[a][std::size_t(J)], r);
      std::vector<double> line(std::size_t(wb) * std::size_t(wc));
      for (int p = 0; p < 2; ++p) {
        const ops::GalerkinKappa k = ops::galerkin_kappa_of(t, a, r[p].J, r[p].i0, r[p].i1);
        for (int jc = 0; jc < wc; ++jc)
          for (int jb = 0; jb < wb; ++jb)
            line[std::size_t(jc * wb + jb)] =
                ops::galerkin_line(t, w, below, a, k, lb + jb, lc + jc);
        const auto at = [&](int ib, int ic) { return line[std::size_t((ic - lc) * wb + ib - lb)]; };
        for (int Ic = 0; Ic < nl[c]; ++Ic)
          for (int Ib = 0; Ib < nl[b]; ++Ib) {
            int idx[3];
            idx[a] = J, idx[b] = Ib, idx[c] = Ic;
            parts[(p == 0 ? a : 3 + a) * n + l.at(idx[0], idx[1], idx[2])] =
                ops::galerkin_spans_sum(t, sp[b][std::size_t(Ib)], sp[c][std::size_t(Ic)], a, at);
          }
      }
    }
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
