// The variable-coefficient set-up kernels (Kernels::face_weights to max_diagonal,
// coefficient_ops.hpp) of every backend against plain reference loops written from the
// definitions (coefficients.hpp), bitwise, on random lognormal k and sigma, ghosts included.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "backends.hpp"
#include "coefficients.hpp"
#include "galerkin_reference.hpp"
#include "host_copy.hpp"
#include "multigrid.hpp"
#include "multigrid_level.hpp"
#include "point_ops.hpp"

namespace halo3d {
namespace {

using test::make_backend;

// 2 k_lo k_hi / (k_lo + k_hi) / h^2, written as the docs give it.
double harmonic(double lo, double hi, double inv_h2) {
  return 2.0 * lo * (hi / (lo + hi)) * inv_h2;
}

class SetupKernelsTest : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    k_ = make_backend(GetParam());
    if (!k_) GTEST_SKIP() << "backend " << GetParam() << " not available here";
    s_ = Stencil::laplacian(0.1, 0.07, 0.13);
    s_.shift = 0.7;
  }
  std::vector<double> lognormal(const Layout& l, double spread) {
    std::lognormal_distribution<double> d(0.0, spread);
    std::vector<double> v(l.padded_size());
    for (auto& x : v) x = d(rng_);
    return v;
  }
  Buffer up(const std::vector<double>& h) { return upload(*k_, h); }
  template <class T>
  std::vector<T> down(const BasicBuffer<T>& b) {
    return download(*k_, b);
  }
  // The face weights of k from the definition: array a at point c the face to c + e_a, for
  // every point of the padded box but the ghost layer above along a (slot 0 there).
  std::vector<double> reference_weights(const Layout& l, const std::vector<double>& k) const {
    const std::size_t n = l.padded_size();
    const double inv_h2[3] = {s_.cx, s_.cy, s_.cz};
    const std::ptrdiff_t st[3] = {1, l.sy(), l.sz()};
    std::vector<double> w(3 * n, 0.0);
    for (int a = 0; a < 3; ++a)
      for (int z = -1; z < l.nz + (a != 2); ++z)
        for (int y = -1; y < l.ny + (a != 1); ++y)
          for (int x = -1; x < l.nx + (a != 0); ++x) {
            const auto c = std::size_t(l.at(x, y, z));
            w[a * n + c] = harmonic(k[c], k[c + std::size_t(st[a])], inv_h2[a]);
          }
    return w;
  }

  std::unique_ptr<Kernels> k_;
  Layout l_{13, 7, 5};  // odd sizes
  std::mt19937_64 rng_{4242};
  Stencil s_;
};

TEST_P(SetupKernelsTest, FaceWeightsAndFloatCopyBitwise) {
  const auto k = lognormal(l_, 2.0);
  const auto want = reference_weights(l_, k);
  const Buffer kd = up(k);
  Buffer w(*k_, want.size());
  k_->face_weights(l_, s_, NeumannPlanes{}, kd.data(), w.data());
  FloatBuffer f(*k_, want.size());
  k_->round_to_float(want.size(), w.data(), f.data());
  const auto got = down(w);
  const auto gotf = down(f);
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i], want[i]) << i;
    ASSERT_EQ(gotf[i], float(want[i])) << i;
  }
}

// With Neumann planes (issue 25, step 8): the box [0,13)x[2,9)x[0,5) of a 13 x 9 x 7 grid
// whose x0, x1, y1 and z0 faces are Neumann: x's both planes, y's high one and z's low one
// cross the box, y's low and z's high do not (the box's side there is inside the grid). From
// the definition: 0 for a face between a boundary node and the ghost beyond its Neumann
// face, else the weight times 1/2 per other axis on whose Neumann plane the face lies.
TEST_P(SetupKernelsTest, FaceWeightsWithNeumannPlanesBitwise) {
  NeumannPlanes np;
  const int off[3] = {0, 2, 0}, grid[3] = {13, 9, 7};
  for (int a = 0; a < 3; ++a) np.place.offset[a] = off[a], np.place.grid[a] = grid[a];
  np.faces = 1 << 0 | 1 << 1 | 1 << 3 | 1 << 4;
  const auto plane = [&](int a, int g) {
    return ((np.faces >> (2 * a) & 1) && g == 0) ||
           ((np.faces >> (2 * a + 1) & 1) && g == grid[a] - 1);
  };
  const auto k = lognormal(l_, 2.0);
  auto want = reference_weights(l_, k);
  const std::size_t n = l_.padded_size();
  for (int a = 0; a < 3; ++a)
    for (int z = -1; z < l_.nz + (a != 2); ++z)
      for (int y = -1; y < l_.ny + (a != 1); ++y)
        for (int x = -1; x < l_.nx + (a != 0); ++x) {
          const int g[3] = {off[0] + x, off[1] + y, off[2] + z};
          double& w = want[a * n + std::size_t(l_.at(x, y, z))];
          if (((np.faces >> (2 * a) & 1) && g[a] == -1) ||
              ((np.faces >> (2 * a + 1) & 1) && g[a] == grid[a] - 1)) {
            w = 0.0;
            continue;
          }
          for (int b = 0; b < 3; ++b)
            if (b != a && plane(b, g[b])) w *= 0.5;
        }
  const Buffer kd = up(k);
  Buffer w(*k_, want.size());
  k_->face_weights(l_, s_, np, kd.data(), w.data());
  const auto got = down(w);
  for (std::size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << i;
}

// Coarse k: at each coarse point the restriction's weights (products of the 1-D
// interpolation weights, z-y-x) over the fine points it gathers, normalised. Grids with
// both ratios (n odd: 2, nested; n even: 3/2).
TEST_P(SetupKernelsTest, CoarsenMeanBitwise) {
  const Int3 nf{21, 14, 9}, nc{10, 9, 4};
  const Decomposition F = Decomposition::whole(nf), C = Decomposition::whole(nc);
  const TransferOp t = make_transfer(*k_, F, C, TransferUse::restriction);
  const Layout fl = F.layout(), cl = C.layout();
  const auto k = lognormal(fl, 1.5);
  const Buffer kd = up(k);
  Buffer out(*k_, cl.padded_size());
  k_->coarsen_mean(t.t, kd.data(), out.data());
  const auto got = down(out);
  for (int K = 0; K < nc[2]; ++K)
    for (int J = 0; J < nc[1]; ++J)
      for (int I = 0; I < nc[0]; ++I) {
        const int idx[3] = {I, J, K};
        int first[3], last[3];
        for (int a = 0; a < 3; ++a)  // Dirichlet axes: n + 1 intervals
          ops::restrict_span(idx[a], nf[a], nf[a] + 1, nc[a] + 1, first[a], last[a]);
        double num = 0, den = 0;
        for (int z = first[2]; z <= last[2]; ++z)
          for (int y = first[1]; y <= last[1]; ++y)
            for (int x = first[0]; x <= last[0]; ++x) {
              const double wt = ops::interp_weight(z, K, nf[2] + 1, nc[2] + 1) *
                                ops::interp_weight(y, J, nf[1] + 1, nc[1] + 1) *
                                ops::interp_weight(x, I, nf[0] + 1, nc[0] + 1);
              num += wt * k[std::size_t(fl.at(x, y, z))];
              den += wt;
            }
        ASSERT_EQ(got[std::size_t(cl.at(I, J, K))], num / den) << I << "," << J << "," << K;
      }
}

// Galerkin coarse faces (galerkin_ops.hpp) with trilinear interpolation against R A_a P
// written out: for each axis a, the
// fine operator's a-part applied to every coarse hat (the boundary's hats -1 and nc along a
// included, as the coupling to the boundary), restricted with R = s P^T, summed over the
// transverse coarse points (lumped), and couplings two apart put on the two faces between
// them as 2v each. Random lognormal fine faces; a nested grid, a 3/2 one and an even first
// step (fine 2J..2J+3). Agreement to rounding: the sums run in another order.
TEST_P(SetupKernelsTest, GalerkinFacesMatchLumpedRap) {
  const Int3 nf{21, 14, 20}, nc{10, 9, 9};
  const Decomposition F = Decomposition::whole(nf), C = Decomposition::whole(nc);
  const TransferOp t = make_transfer(*k_, F, C, TransferUse::restriction);
  const Layout fl = F.layout(), cl = C.layout();
  const std::size_t fn = fl.padded_size();
  const auto w = [&] {
    std::vector<double> v(3 * fn, 0.0);
    const auto r = lognormal(fl, 1.5);
    for (int a = 0; a < 3; ++a)  // the faces face_weights makes: the box and, along a, below
      for (int z = a == 2 ? -1 : 0; z < fl.nz; ++z)
        for (int y = a == 1 ? -1 : 0; y < fl.ny; ++y)
          for (int x = a == 0 ? -1 : 0; x < fl.nx; ++x) {
            const auto c = std::size_t(fl.at(x, y, z));
            v[a * fn + c] = r[c] * (1.0 + a);
          }
    return v;
  }();
  // The hats: coarse K's trilinear weight along e at fine i[e] (K in [-1, nc]: -1 and nc the
  // boundary's).
  const auto hat = [&](int e, int K, const int* i) {
    return ops::interp_weight(i[e], K, nf[e] + 1, nc[e] + 1);
  };
  const std::vector<double> want = test::galerkin_reference(nf, nc, fl, cl, w, hat);
  const Buffer wd = up(w);
  test::expect_galerkin_faces(*k_, t.t, fl, cl, wd, want);
}

// The trilinear Galerkin parts as a backend makes them (the host sums each fine line once for
// every coarse point that reads it) bitwise ops::galerkin_parts_point<false>, the point
// update CUDA runs: random faces and faces below (every slot), whole grids (nested, 3/2, an
// even first step, a periodic axis) and a rank's boxes inside them (its coarse points from
// mg_coarser_box, so spans reach into the ghost layer and the faces below it).
TEST_P(SetupKernelsTest, GalerkinTrilinearPartsBitwiseThePointUpdate) {
  if (GetParam() != "host") GTEST_SKIP() << "CUDA runs the point update itself";
  struct Case {
    Int3 nf, nc;
    Periodic periodic;
    Int3 offset, count;  // the fine box; count 0: the whole grid
  };
  const Case cases[] = {{{21, 14, 20}, {10, 9, 9}, {}, {}, {}},
                        {{33, 31, 16}, {16, 15, 8}, {false, false, true}, {}, {}},
                        {{33, 31, 16}, {16, 15, 8}, {false, false, true}, {9, 0, 5}, {13, 17, 7}},
                        {{21, 14, 20}, {10, 9, 9}, {}, {1, 5, 11}, {12, 9, 9}}};
  std::mt19937_64 rng(4242);
  std::lognormal_distribution<double> d(0.0, 1.5);
  for (const Case& cs : cases) {
    Decomposition F = Decomposition::whole(cs.nf, cs.periodic);
    if (cs.count[0] > 0) F.offset = cs.offset, F.count = cs.count;
    const Decomposition C =
        cs.count[0] > 0 ? mg_coarser_box(F, cs.nc) : Decomposition::whole(cs.nc, cs.periodic);
    const TransferOp t = make_transfer(*k_, F, C, TransferUse::restriction);
    const Layout fl = F.layout(), cl = C.layout();
    ASSERT_GT(cl.interior_size(), 0u);
    std::vector<double> w(3 * fl.padded_size()), below(w.size());
    for (auto* v : {&w, &below})
      for (auto& x : *v) x = d(rng);
    const std::size_t cn = cl.padded_size();
    std::vector<double> want(6 * cn, -1.0);
    for (int z = 0; z < cl.nz; ++z)
      for (int y = 0; y < cl.ny; ++y)
        for (int x = 0; x < cl.nx; ++x)
          ops::galerkin_parts_point<false>(t.t, w.data(), below.data(), want.data(), x, y, z);
    const Buffer wd = up(w), bd = up(below);
    Buffer parts = up(std::vector<double>(6 * cn, -1.0));
    k_->galerkin_parts(t.t, wd.data(), bd.data(), parts.data());
    EXPECT_EQ(down(parts), want) << "fine " << cs.nf[0] << "," << cs.nf[1] << "," << cs.nf[2]
                                 << " box at " << cs.offset[0] << "," << cs.offset[1] << ","
                                 << cs.offset[2];
  }
}

// The ghosts beyond the sides on the domain's boundary take the box's nearest point; the
// others (a neighbour's) and the box keep theirs.
TEST_P(SetupKernelsTest, BoundaryGhostsBitwise) {
  for (int sides : {0, 1, 0x3F, 0x2D, 0x12}) {
    const auto k = lognormal(l_, 1.0);
    auto want = k;
    const int n[3] = {l_.nx, l_.ny, l_.nz};
    for (int z = -1; z <= l_.nz; ++z)
      for (int y = -1; y <= l_.ny; ++y)
        for (int x = -1; x <= l_.nx; ++x) {
          int idx[3] = {x, y, z};
          for (int a = 0; a < 3; ++a) {
            if (idx[a] < 0 && (sides >> (2 * a) & 1)) idx[a] = 0;
            if (idx[a] == n[a] && (sides >> (2 * a + 1) & 1)) idx[a] = n[a] - 1;
          }
          want[std::size_t(l_.at(x, y, z))] = k[std::size_t(l_.at(idx[0], idx[1], idx[2]))];
        }
    Buffer kd = up(k);
    k_->fill_boundary_ghosts(l_, sides, kd.data());
    EXPECT_EQ(down(kd), want) << "sides " << sides;
  }
}

// Gershgorin's bound (1 + off-diagonal / diagonal, neighbours beyond the global grid not
// counted; at least 1) and the largest diagonal, with the shift or a variable sigma, on a
// box with global boundaries on some sides only.
TEST_P(SetupKernelsTest, SpectrumBoundAndMaxDiagonalBitwise) {
  const auto k = lognormal(l_, 2.0);
  const auto w = reference_weights(l_, k);
  const auto sigma = lognormal(l_, 1.0);
  const std::size_t n = l_.padded_size();
  const BoxPlace p{{0, 3, 2}, {13, 12, 7}};  // low x, high z on the boundary
  const std::ptrdiff_t st[3] = {1, l_.sy(), l_.sz()};
  for (const bool variable : {false, true}) {
    std::vector<double> wh = w;
    if (variable) wh.insert(wh.end(), sigma.begin(), sigma.end());
    const Buffer wd = up(wh);
    Stencil s = s_;
    for (int a = 0; a < 3; ++a) s.vd.w[a] = wd.data() + a * n;
    if (variable) s.vd.sigma = wd.data() + 3 * n;
    double bound = 1.0, diag_max = 0;
    for (int z = 0; z < l_.nz; ++z)
      for (int y = 0; y < l_.ny; ++y)
        for (int x = 0; x < l_.nx; ++x) {
          const int idx[3] = {x, y, z};
          const auto c = std::size_t(l_.at(x, y, z));
          double diag = variable ? sigma[c] : s_.shift, off = 0;
          for (int a = 0; a < 3; ++a) {
            const double lo = w[a * n + c - std::size_t(st[a])], hi = w[a * n + c];
            diag += lo + hi;
            if (p.offset[a] + idx[a] > 0) off += lo;
            if (p.offset[a] + idx[a] + 1 < p.grid[a]) off += hi;
          }
          bound = std::max(bound, 1.0 + off / diag);
          const double lo[3] = {w[c - 1], w[n + c - std::size_t(st[1])],
                                w[2 * n + c - std::size_t(st[2])]};
          const double d = (((lo[0] + w[c]) + (lo[1] + w[n + c])) + (lo[2] + w[2 * n + c])) +
                           (variable ? sigma[c] : s_.shift);
          diag_max = std::max(diag_max, d);
        }
    EXPECT_GT(bound, 1.0);
    EXPECT_EQ(k_->spectrum_bound(l_, s, p), bound) << variable;
    EXPECT_EQ(k_->max_diagonal(l_, s, NeumannPlanes{}), diag_max) << variable;
    // The host's own (--dry-run's) from k gives the same bits.
    EXPECT_EQ(local_max_diagonal(l_, s_, k, variable ? &sigma : nullptr), diag_max);
  }
}

// Weights that overflow (inf times 0 in a diagonal: NaN) make the largest diagonal
// infinite, not small; the spectrum bound skips such a point and stays finite.
TEST_P(SetupKernelsTest, OverflowingWeights) {
  auto k = lognormal(l_, 1.0);
  k[std::size_t(l_.at(4, 4, 2))] = 1e308, k[std::size_t(l_.at(5, 4, 2))] = 1e308;
  const Buffer kd = up(k);
  Buffer w(*k_, 3 * l_.padded_size());
  k_->face_weights(l_, s_, NeumannPlanes{}, kd.data(), w.data());
  Stencil s = s_;
  for (int a = 0; a < 3; ++a) s.vd.w[a] = w.data() + a * l_.padded_size();
  EXPECT_EQ(k_->max_diagonal(l_, s, NeumannPlanes{}), std::numeric_limits<double>::infinity());
  const BoxPlace p{{0, 0, 0}, {l_.nx, l_.ny, l_.nz}};
  EXPECT_TRUE(std::isfinite(k_->spectrum_bound(l_, s, p)));
}

INSTANTIATE_TEST_SUITE_P(Backends, SetupKernelsTest, testing::Values("host", "cuda"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace halo3d
