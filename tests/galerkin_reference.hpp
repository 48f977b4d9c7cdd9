// The Galerkin coarse faces written out, for the kernels' tests (test_coefficient_kernels.cpp
// with trilinear weights, test_od_transfers.cpp with operator-dependent ones): for each axis
// a, the fine operator's a-part applied to every coarse point's interpolation (the boundary's
// -1 and nc along a included, as the coupling to the boundary), restricted with R = s P^T,
// summed over the transverse coarse points (lumped), couplings two apart put on the two faces
// between them as 2v each, each coupling from an unknown's row (the lower point's where it
// is one). One rank, Dirichlet axes.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <vector>

#include "decomposition.hpp"  // Int3
#include "host_copy.hpp"
#include "point_ops.hpp"

namespace halo3d::test {

// The faces (3 padded arrays of cl) from the fine faces w (3 padded arrays of fl, as
// face_weights lays them out) on grids nf and nc; weight(e, K, i) is the interpolation weight
// of coarse K along axis e at fine point i (3-D; i[e] may be a boundary position, -1 or nf).
inline std::vector<double> galerkin_reference(
    const Int3& nf, const Int3& nc, const Layout& fl, const Layout& cl,
    const std::vector<double>& w, const std::function<double(int, int, const int*)>& weight) {
  const std::size_t fn = fl.padded_size(), cn = cl.padded_size();
  double s = 1;
  for (int a = 0; a < 3; ++a) s *= double(nc[a] + 1) / double(nf[a] + 1);
  std::vector<double> want(3 * cn, 0.0);
  for (int a = 0; a < 3; ++a) {
    const int b = (a + 1) % 3, c = (a + 2) % 3;
    // v[I][d]: coupling of coarse I (unknown) to I + d e_a, d in [-2, 2], lumped.
    std::vector<double> v(std::size_t(nc[0]) * nc[1] * nc[2] * 5, 0.0);
    const auto at = [&](const int I[3]) {
      return (std::size_t(I[2]) * nc[1] + std::size_t(I[1])) * nc[0] + std::size_t(I[0]);
    };
    int J[3];
    for (J[a] = -1; J[a] <= nc[a]; ++J[a])
      for (J[b] = 0; J[b] < nc[b]; ++J[b])
        for (J[c] = 0; J[c] < nc[c]; ++J[c]) {
          // y = A_a phi_J at the fine unknowns (phi: 1 at the fine boundary for J_a's
          // boundary hats), then R y accumulated into the rows it reaches.
          const auto phi = [&](const int i[3]) {
            return weight(0, J[0], i) * weight(1, J[1], i) * weight(2, J[2], i);
          };
          int i[3];
          for (i[2] = 0; i[2] < nf[2]; ++i[2])
            for (i[1] = 0; i[1] < nf[1]; ++i[1])
              for (i[0] = 0; i[0] < nf[0]; ++i[0]) {
                const double p0 = phi(i);
                int lo[3] = {i[0], i[1], i[2]}, hi[3] = {i[0], i[1], i[2]};
                --lo[a], ++hi[a];
                const double wl = w[a * fn + std::size_t(fl.at(lo[0], lo[1], lo[2]))];
                const double wh = w[a * fn + std::size_t(fl.at(i[0], i[1], i[2]))];
                const double y = wl * (p0 - phi(lo)) + wh * (p0 - phi(hi));
                if (y == 0) continue;
                int first[3];  // the coarse points whose hats reach i: first and first + 1
                for (int e = 0; e < 3; ++e) {
                  double frac;
                  ops::interp_1d(i[e], nf[e] + 1, nc[e] + 1, first[e], frac);
                }
                int I[3];
                for (I[2] = first[2]; I[2] <= first[2] + 1; ++I[2])
                  for (I[1] = first[1]; I[1] <= first[1] + 1; ++I[1])
                    for (I[0] = first[0]; I[0] <= first[0] + 1; ++I[0]) {
                      bool unknown = true;
                      for (int e = 0; e < 3; ++e) unknown = unknown && I[e] >= 0 && I[e] < nc[e];
                      const int d = J[a] - I[a];
                      if (!unknown || d < -2 || d > 2) continue;
                      const double r = weight(0, I[0], i) * weight(1, I[1], i) * weight(2, I[2], i);
                      v[at(I) * 5 + std::size_t(d + 2)] += s * r * y;
                    }
              }
        }
    // Coupling between coarse P < Q along a (as a conductance, -entry), from an unknown's row.
    const auto cond = [&](int P, int Q, int yb, int zc) -> double {
      if (P < -1 || Q > nc[a] || (P < 0 && Q >= nc[a]) || Q - P > 2) return 0.0;
      int I[3];
      I[b] = yb, I[c] = zc;
      if (P >= 0 && P < nc[a]) {
        I[a] = P;
        return -v[at(I) * 5 + std::size_t(Q - P + 2)];
      }
      I[a] = Q;
      return -v[at(I) * 5 + std::size_t(P - Q + 2)];
    };
    for (int yb = 0; yb < nc[b]; ++yb)
      for (int zc = 0; zc < nc[c]; ++zc)
        for (int P = -1; P < nc[a]; ++P) {
          int I[3];
          I[a] = P, I[b] = yb, I[c] = zc;
          const double face =
              cond(P, P + 1, yb, zc) + 2 * cond(P - 1, P + 1, yb, zc) + 2 * cond(P, P + 2, yb, zc);
          want[a * cn + std::size_t(cl.at(I[0], I[1], I[2]))] = face;
        }
  }
  return want;
}

// The backend's coarse faces (Kernels::faces_below, galerkin_parts, galerkin_faces) from the
// fine faces wd (on the backend) and t, against want (galerkin_reference) to 1e-12 of its
// largest face.
inline void expect_galerkin_faces(Kernels& k, const Transfer& t, const Layout& fl, const Layout& cl,
                                  const Buffer& wd, const std::vector<double>& want) {
  const std::size_t fn = fl.padded_size(), cn = cl.padded_size();
  Buffer below(k, 3 * fn), parts(k, 6 * cn), got_d(k, 3 * cn);
  k.faces_below(fl, wd.data(), below.data());
  k.galerkin_parts(t, wd.data(), below.data(), parts.data());
  k.galerkin_faces(cl, parts.data(), got_d.data());
  const std::vector<double> got = download(k, got_d);
  double top = 0;
  for (double x : want) top = std::max(top, std::abs(x));
  ASSERT_GT(top, 0.0);
  for (std::size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-12 * top) << "slot " << i;
}

}  // namespace halo3d::test
