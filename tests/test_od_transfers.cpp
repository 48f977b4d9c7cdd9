// Multigrid's operator-dependent interpolation (Transfer::od, transfer_ops.hpp) and the
// Galerkin coarse faces made with it (galerkin_ops.hpp), on every backend, against plain
// reference loops written from the definitions, on random lognormal face weights: the
// weights and both transfers bitwise, the coarse faces to rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backends.hpp"
#include "galerkin_reference.hpp"
#include "host_copy.hpp"
#include "multigrid.hpp"
#include "point_ops.hpp"

namespace halo3d {
namespace {

class OdTransferTest : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    k_ = test::make_backend(GetParam());
    if (!k_) GTEST_SKIP() << "backend " << GetParam() << " not available here";
  }
  // Face weights of a whole grid's layout as face_weights makes them (the box and, along a,
  // the face below it), random lognormal with a spread that makes jumps of 1e3 and more.
  std::vector<double> faces(const Layout& l) {
    std::lognormal_distribution<double> d(0.0, 2.0);
    const std::size_t n = l.padded_size();
    std::vector<double> v(3 * n, 0.0);
    for (int a = 0; a < 3; ++a)
      for (int z = a == 2 ? -1 : 0; z < l.nz; ++z)
        for (int y = a == 1 ? -1 : 0; y < l.ny; ++y)
          for (int x = a == 0 ? -1 : 0; x < l.nx; ++x)
            v[a * n + std::size_t(l.at(x, y, z))] = d(rng_);
    return v;
  }
  // od from the definition (one rank, Dirichlet axes: fine i at (i + 1) / (nf + 1)): t = g W+ /
  // (g W+ + (1 - g) W-) for a point between coarse points, g = rem / mf, rounded to float.
  static std::vector<float> reference_od(const Transfer& t, const std::vector<double>& w) {
    const Layout& l = t.fine;
    const std::size_t n = l.padded_size();
    const std::ptrdiff_t st[3] = {1, l.sy(), l.sz()};
    std::vector<float> od(3 * n, 0.0f);
    for (int z = 0; z < l.nz; ++z)
      for (int y = 0; y < l.ny; ++y)
        for (int x = 0; x < l.nx; ++x) {
          const int i[3] = {x, y, z};
          const auto c = std::size_t(l.at(x, y, z));
          for (int a = 0; a < 3; ++a) {
            const long long mf = t.mf[a], rem = (i[a] + 1LL) * t.mc[a] % mf;
            if (rem == 0) continue;
            const double up = double(rem) * w[a * n + c];
            const double den = up + double(mf - rem) * w[a * n + c - std::size_t(st[a])];
            od[a * n + c] = float(up / den);
          }
        }
    return od;
  }
  // The weight of coarse K (global, -1 and nc the boundary's) along a at fine point i (3-D;
  // i[a] may be a boundary position, -1 or nf): the hat's on or off the coarse positions,
  // else 1 - t or t for the coarse points either side, t at i with its other coordinates on
  // the grid (a boundary position's transverse weights are the grid's nearest point's).
  static double weight(const Transfer& t, const std::vector<float>& od, int a, int K,
                       const int i[3]) {
    int lo;
    double g;
    if (i[a] < 0 || i[a] >= t.nf[a]) return ops::interp_weight(i[a], K, t.mf[a], t.mc[a]);
    ops::interp_1d(i[a], t.mf[a], t.mc[a], lo, g);
    if (g == 0) return K == lo ? 1.0 : 0.0;
    int q[3];
    for (int e = 0; e < 3; ++e) q[e] = std::min(std::max(i[e], 0), t.nf[e] - 1);
    const double v =
        od[std::size_t(a) * t.fine.padded_size() + std::size_t(t.fine.at(q[0], q[1], q[2]))];
    return K == lo ? 1.0 - v : (K == lo + 1 ? v : 0.0);
  }
  template <class T>
  std::vector<T> down(const BasicBuffer<T>& b) {
    return download(*k_, b);
  }
  std::unique_ptr<Kernels> k_;
  std::mt19937_64 rng_{777};
};

// Grids with a nested step (odd), a 3/2 step (even, later) and an even first step (fine 2J to
// 2J + 3 for coarse J).
const std::pair<Int3, Int3> kGrids[] = {{{21, 14, 20}, {10, 9, 9}}, {{9, 16, 7}, {4, 7, 3}}};

TEST_P(OdTransferTest, WeightsBitwiseTheDefinition) {
  for (const auto& [nf, nc] : kGrids) {
    const Decomposition F = Decomposition::whole(nf), C = Decomposition::whole(nc);
    const TransferOp t = make_transfer(*k_, F, C);
    const Layout fl = F.layout();
    const auto w = faces(fl);
    const Buffer wd = upload(*k_, w);
    FloatBuffer od(*k_, 3 * fl.padded_size());
    k_->od_weights(t.t, wd.data(), od.data());
    const auto got = down(od), want = reference_od(t.t, w);
    int between = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(got[i], want[i]) << to_string(nf) << " slot " << i;
      between += want[i] > 0.01f && want[i] < 0.99f;
    }
    EXPECT_GT(between, 100);  // not all 0 (on coarse points) or saturated
  }
}

// Restriction (double and float) bitwise the plain sum over each coarse point's spans, z, y,
// x, of wz wy wx f; prolongation bitwise the plain sum over the eight coarse points around
// each fine one; and R = s P^T: (R f) . e = s f . (P e).
TEST_P(OdTransferTest, TransfersBitwiseThePlainReference) {
  for (const auto& [nf, nc] : kGrids) {
    const Decomposition F = Decomposition::whole(nf), C = Decomposition::whole(nc);
    TransferOp op = make_transfer(*k_, F, C);
    Transfer& t = op.t;
    const Layout fl = F.layout(), cl = C.layout();
    const Buffer wd = upload(*k_, faces(fl));
    FloatBuffer od(*k_, 3 * fl.padded_size());
    k_->od_weights(t, wd.data(), od.data());
    t.od = od.data();
    const auto odh = down(od);
    std::normal_distribution<double> nd;
    std::vector<double> f(fl.padded_size(), 0.0), e(cl.padded_size(), 0.0);
    for (int z = 0; z < nf[2]; ++z)
      for (int y = 0; y < nf[1]; ++y)
        for (int x = 0; x < nf[0]; ++x) f[std::size_t(fl.at(x, y, z))] = nd(rng_);
    for (int z = 0; z < nc[2]; ++z)
      for (int y = 0; y < nc[1]; ++y)
        for (int x = 0; x < nc[0]; ++x) e[std::size_t(cl.at(x, y, z))] = nd(rng_);
    const std::vector<float> ff(f.begin(), f.end()), ef(e.begin(), e.end());
    Buffer fd = upload(*k_, f), ed = upload(*k_, e), rd(*k_, cl.padded_size()),
           pd(*k_, fl.padded_size());
    FloatBuffer fs(*k_, ff.size()), es(*k_, ef.size()), rs(*k_, cl.padded_size()),
        ps(*k_, fl.padded_size());
    k_->copy(fs.data(), ff.data(), ff.size(), Lane::interior);
    k_->copy(es.data(), ef.data(), ef.size(), Lane::interior);
    k_->restrict_to(t, fd.data(), rd.data());
    k_->restrict_to(t, fs.data(), rs.data());
    k_->prolong_add(t, ed.data(), pd.data());
    k_->prolong_add(t, es.data(), ps.data());
    const auto rgot = down(rd), pgot = down(pd);
    const auto rgotf = down(rs), pgotf = down(ps);
    double rdot = 0, pdot = 0;
    const bool host = std::string(GetParam()) == "host";
    int J[3];
    for (J[2] = 0; J[2] < nc[2]; ++J[2])
      for (J[1] = 0; J[1] < nc[1]; ++J[1])
        for (J[0] = 0; J[0] < nc[0]; ++J[0]) {
          int first[3], last[3];
          for (int a = 0; a < 3; ++a)
            ops::restrict_span(J[a], nf[a], t.mf[a], t.mc[a], first[a], last[a]);
          // Summed along each fine row, the rows of each plane, then the planes.
          double v = 0;
          float vf = 0;
          int i[3];
          for (i[2] = first[2]; i[2] <= last[2]; ++i[2]) {
            double plane = 0;
            float planef = 0;
            for (i[1] = first[1]; i[1] <= last[1]; ++i[1]) {
              double line = 0;
              float linef = 0;
              for (i[0] = first[0]; i[0] <= last[0]; ++i[0]) {
                const double wx = weight(t, odh, 0, J[0], i), wy = weight(t, odh, 1, J[1], i),
                             wz = weight(t, odh, 2, J[2], i);
                const auto c = std::size_t(fl.at(i[0], i[1], i[2]));
                line += ((wz * wy) * wx) * f[c];
                linef += ((float(wz) * float(wy)) * float(wx)) * ff[c];
              }
              plane += line, planef += linef;
            }
            v += plane, vf += planef;
          }
          const auto c = std::size_t(cl.at(J[0], J[1], J[2]));
          ASSERT_EQ(rgot[c], t.wd.scale * v) << to_string(nf);
          ASSERT_EQ(rgotf[c], t.wf.scale * vf) << to_string(nf);
          if (host) {  // the host's rows against the point update CUDA runs (host memory here)
            const auto point = [&](auto in) {
              return t.span == 4 ? ops::restrict_od<4>(t, in, J[0], J[1], J[2])
                                 : ops::restrict_od<3>(t, in, J[0], J[1], J[2]);
            };
            ASSERT_EQ(rgot[c], point(static_cast<const double*>(fd.data()))) << to_string(nf);
            ASSERT_EQ(rgotf[c], point(static_cast<const float*>(fs.data()))) << to_string(nf);
          }
          rdot += rgot[c] * e[c];
        }
    int i[3];
    for (i[2] = 0; i[2] < nf[2]; ++i[2])
      for (i[1] = 0; i[1] < nf[1]; ++i[1])
        for (i[0] = 0; i[0] < nf[0]; ++i[0]) {
          int lo[3];
          for (int a = 0; a < 3; ++a) {
            double g;
            ops::interp_1d(i[a], t.mf[a], t.mc[a], lo[a], g);
          }
          double v = 0;
          float vf = 0;
          for (int c = 0; c < 2; ++c)
            for (int b = 0; b < 2; ++b)
              for (int a = 0; a < 2; ++a) {
                const double wz = weight(t, odh, 2, lo[2] + c, i),
                             wy = weight(t, odh, 1, lo[1] + b, i),
                             wx = weight(t, odh, 0, lo[0] + a, i);
                const auto q = std::size_t(cl.at(lo[0] + a, lo[1] + b, lo[2] + c));
                v += ((wz * wy) * wx) * e[q];
                vf += ((float(wz) * float(wy)) * float(wx)) * ef[q];
              }
          const auto c = std::size_t(fl.at(i[0], i[1], i[2]));
          ASSERT_EQ(pgot[c], v) << to_string(nf);
          ASSERT_EQ(pgotf[c], vf) << to_string(nf);
          pdot += f[c] * pgot[c];
        }
    EXPECT_NEAR(rdot, t.wd.scale * pdot, 1e-12 * std::abs(rdot));
  }
}

// Galerkin coarse faces (galerkin_ops.hpp) against R A_a P written out, P the
// operator-dependent interpolation (weights from od_weights, checked above): for each axis
// a, the fine operator's a-part applied to every coarse point's interpolation (the boundary's hats
// -1 and nc along a included, as the coupling to the boundary), restricted with R = s P^T, summed
// over the transverse coarse points (lumped), and couplings two apart put on the two faces between
// them as 2v each; each coupling from its lower point's row (the upper's where the lower is
// the boundary). Random lognormal fine faces; a nested grid, a 3/2 one and an even first
// step (fine 2J..2J+3). Agreement to rounding: the sums run in another order.
TEST_P(OdTransferTest, GalerkinFacesMatchLumpedRap) {
  const Int3 nf{21, 14, 20}, nc{10, 9, 9};
  const Decomposition F = Decomposition::whole(nf), C = Decomposition::whole(nc);
  TransferOp t = make_transfer(*k_, F, C, TransferUse::restriction);
  const Layout fl = F.layout(), cl = C.layout();
  const std::size_t fn = fl.padded_size();
  const auto w = faces(fl);
  const Buffer wd = upload(*k_, w);
  FloatBuffer od(*k_, 3 * fn);
  k_->od_weights(t.t, wd.data(), od.data());
  t.t.od = od.data();
  const auto odh = down(od);
  const auto weight = [&](int e, int K, const int* i) { return this->weight(t.t, odh, e, K, i); };
  const std::vector<double> want = test::galerkin_reference(nf, nc, fl, cl, w, weight);
  test::expect_galerkin_faces(*k_, t.t, fl, cl, wd, want);
}

INSTANTIATE_TEST_SUITE_P(Backends, OdTransferTest, testing::Values("host", "cuda"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace halo3d
