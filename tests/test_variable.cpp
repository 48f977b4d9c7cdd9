// The variable-coefficient sweeps (Stencil::vd/vf, coefficients.hpp) of every backend
// against plain reference loops written from the definition, bitwise, on random data:
// random positive face weights (ghost slots too), random fields, ghosts included.
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <vector>

#include "backends.hpp"
#include "coefficients.hpp"
#include "host_copy.hpp"
#include "smooth_from_start_check.hpp"

namespace halo3d {
namespace {

using test::make_backend;

class VariableTest : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    k_ = make_backend(GetParam());
    if (!k_) GTEST_SKIP() << "backend " << GetParam() << " not available here";
    std::uniform_real_distribution<double> w(0.05, 20.0);
    wh_.resize(3 * l_.padded_size());
    for (auto& x : wh_) x = w(rng_);
    // D^{-1} as a level stores it (ghosts too: the neighbours'), any positive values here.
    ih_.resize(l_.padded_size());
    for (auto& x : ih_) x = 1.0 / w(rng_);
    s_ = Stencil::laplacian(0.1, 0.07, 0.13);  // cx..diag: the spacing only
    s_.shift = 0.7;
  }
  template <class T>
  std::vector<T> random_field() {
    std::uniform_real_distribution<double> d(-1, 1);
    std::vector<T> v(l_.padded_size());
    for (auto& x : v) x = T(d(rng_));
    return v;
  }
  template <class T>
  BasicBuffer<T> up(const std::vector<T>& h) {
    return upload(*k_, h);
  }
  template <class T>
  std::vector<T> down(const BasicBuffer<T>& b) {
    return download(*k_, b);
  }
  // The stencil with the weights and the inverse diagonal on the backend, in double and in
  // float (each rounded once), as LevelCoefficients lends them.
  Stencil stencil() {
    wd_ = up(wh_);
    wf_ = up(std::vector<float>(wh_.begin(), wh_.end()));
    id_ = up(ih_);
    idf_ = up(std::vector<float>(ih_.begin(), ih_.end()));
    Stencil s = s_;
    const std::size_t n = l_.padded_size();
    for (int a = 0; a < 3; ++a) {
      s.vd.w[a] = wd_.data() + a * n;
      s.vf.w[a] = wf_.data() + a * n;
    }
    s.vd.inv_diag = id_.data();
    s.vf.inv_diag = idf_.data();
    return s;
  }
  // x = cr D^{-1} f at every point of the padded box, as the first step from zero makes it.
  template <class T>
  std::vector<T> start(const std::vector<T>& f, double cr) const {
    std::vector<T> x(f.size());
    for (std::size_t c = 0; c < f.size(); ++c) x[c] = T(cr) * (T(ih_[c]) * f[c]);
    return x;
  }
  // d_c and (A u)_c from the definition: each face's weight w_f, the diagonal their sum plus
  // the shift, both in the order the docs give (x, y, z; low face first).
  template <class T>
  void reference(const std::vector<T>& u, std::ptrdiff_t c, T& d, T& au) const {
    const std::size_t n = l_.padded_size();
    const std::ptrdiff_t st[3] = {1, l_.sy(), l_.sz()};
    T lo[3], hi[3];
    for (int a = 0; a < 3; ++a) {
      lo[a] = T(wh_[a * n + std::size_t(c - st[a])]);
      hi[a] = T(wh_[a * n + std::size_t(c)]);
    }
    d = (((lo[0] + hi[0]) + (lo[1] + hi[1])) + (lo[2] + hi[2])) + T(s_.shift);
    au = d * u[c];
    for (int a = 0; a < 3; ++a) au = au - (lo[a] * u[c - st[a]] + hi[a] * u[c + st[a]]);
  }
  template <class T>
  void sweeps_bitwise();
  template <class T>
  void from_start_bitwise();

  std::unique_ptr<Kernels> k_;
  Layout l_{13, 7, 5};  // odd sizes
  std::mt19937_64 rng_{777};
  std::vector<double> wh_, ih_;
  Buffer wd_, id_;
  FloatBuffer wf_, idf_;
  Stencil s_;
};

template <class T>
void VariableTest::sweeps_bitwise() {
  const Stencil s = stencil();
  const auto u = random_field<T>(), f = random_field<T>(), d = random_field<T>(),
             poison = random_field<T>();
  auto u_d = up(u), f_d = up(f), d_d = up(d), res_d = up(poison), dout_d = up(poison),
       un_d = up(poison), x_d = up(poison);
  const Region all = Region::whole(l_), part{2, 11, 1, 6, 0, 4};
  const double cd = 0.3, cr = 0.9;
  k_->residual(l_, s, all, f_d.data(), u_d.data(), res_d.data(), kNoReduction, Lane::interior);
  k_->smooth(l_, s, part, cd, cr, f_d.data(), u_d.data(), d_d.data(), dout_d.data(), un_d.data(),
             kNoReduction, Lane::interior);
  k_->smooth_start(l_, s, cr, f_d.data(), x_d.data());
  const auto res = down(res_d), dout = down(dout_d), un = down(un_d), x = down(x_d);
  const auto x_ref = start(f, cr);
  for (int k = 0; k < l_.nz; ++k)
    for (int j = 0; j < l_.ny; ++j)
      for (int i = 0; i < l_.nx; ++i) {
        const auto c = l_.at(i, j, k);
        T dc, au;
        reference(u, c, dc, au);
        ASSERT_EQ(res[c], f[c] - au) << i << "," << j << "," << k;
        ASSERT_EQ(x[c], x_ref[c]);
        const bool in = i >= part.i0 && i < part.i1 && j >= part.j0 && j < part.j1 &&
                        k >= part.k0 && k < part.k1;
        const T dn = T(cd) * d[c] + T(cr) * ((f[c] - au) / dc);
        ASSERT_EQ(dout[c], in ? dn : poison[c]);
        ASSERT_EQ(un[c], in ? u[c] + dn : poison[c]);
      }
}

TEST_P(VariableTest, DoubleSweepsBitwise) {
  sweeps_bitwise<double>();
  // The double-only sweeps: apply (with u.Au), Jacobi, heat.
  const Stencil s = stencil();
  const auto u = random_field<double>(), f = random_field<double>(),
             poison = random_field<double>();
  auto u_d = up(u), f_d = up(f), a_d = up(poison), j_d = up(poison), h_d = up(poison);
  const Region all = Region::whole(l_);
  k_->apply(l_, s, all, u_d.data(), a_d.data(), kNoReduction, Lane::interior);
  k_->jacobi(l_, s, all, f_d.data(), u_d.data(), j_d.data(), kNoReduction, Lane::interior);
  k_->heat(l_, s, all, 1e-3, u_d.data(), h_d.data(), Lane::interior);
  const auto a = down(a_d), jn = down(j_d), hn = down(h_d);
  for (int k = 0; k < l_.nz; ++k)
    for (int j = 0; j < l_.ny; ++j)
      for (int i = 0; i < l_.nx; ++i) {
        const auto c = l_.at(i, j, k);
        double dc, au;
        reference(u, c, dc, au);
        ASSERT_EQ(a[c], au) << i << "," << j << "," << k;
        ASSERT_EQ(jn[c], u[c] + (f[c] - au) / dc);
        ASSERT_EQ(hn[c], u[c] - 1e-3 * au);
      }
}

TEST_P(VariableTest, FloatSweepsBitwise) { sweeps_bitwise<float>(); }

// The first two smoothing steps from zero in one sweep (smooth_from_start) are the second
// step run on the first's x = cr0 D^{-1} f, stored at every point (its ghosts from f's and
// D^{-1}'s, as a neighbour's values would be), bitwise, with and without a reduction.
template <class T>
void VariableTest::from_start_bitwise() {
  const Stencil s = stencil();
  const auto f = random_field<T>(), poison = random_field<T>();
  const double cr0 = 0.37;
  test::expect_from_start_is_start_then_smooth(*k_, l_, s, f, start(f, cr0), poison, cr0);
  // Without the stored D^{-1} a start from zero is refused.
  Stencil bare = s;
  bare.vd.inv_diag = nullptr, bare.vf.inv_diag = nullptr;
  auto f_d = up(f), out = up(poison);
  EXPECT_THROW(k_->smooth_from_start(l_, bare, Region::whole(l_), cr0, 0.3, 0.9, f_d.data(),
                                     nullptr, out.data(), kNoReduction, Lane::interior),
               std::logic_error);
  EXPECT_THROW(k_->smooth_start(l_, bare, cr0, f_d.data(), out.data()), std::logic_error);
}

TEST_P(VariableTest, SmoothFromStartIsStartThenSmoothBitwise) {
  from_start_bitwise<double>();
  from_start_bitwise<float>();
}

// inverse_diagonal: 1 / d_c from the definition at the box's points, 0 in the ghost layer.
TEST_P(VariableTest, InverseDiagonalFromTheDefinition) {
  const Stencil s = stencil();
  const auto u = random_field<double>();
  auto out_d = up(random_field<double>());
  k_->inverse_diagonal(l_, s, out_d.data());
  const auto out = down(out_d);
  for (int k = -1; k <= l_.nz; ++k)
    for (int j = -1; j <= l_.ny; ++j)
      for (int i = -1; i <= l_.nx; ++i) {
        const auto c = l_.at(i, j, k);
        const bool in = i >= 0 && i < l_.nx && j >= 0 && j < l_.ny && k >= 0 && k < l_.nz;
        double dc = 0, au;
        if (in) reference(u, c, dc, au);
        ASSERT_EQ(out[c], in ? 1.0 / dc : 0.0) << i << "," << j << "," << k;
      }
}

INSTANTIATE_TEST_SUITE_P(Backends, VariableTest, testing::Values("host", "cuda"),
                         [](const auto& info) { return info.param; });

// Explicit heat's limit: local_max_diagonal is the largest of the point diagonals written
// from the definition (harmonic face weights of k / h^2, ghosts' k on the box's faces, the
// shift; x, y, z, low face first), bitwise, on random lognormal k; weights that overflow
// make it infinite, not small.
TEST(MaxDiagonal, LargestPointDiagonalBitwise) {
  const Layout l{9, 6, 5};
  Stencil s = Stencil::laplacian(0.1, 0.07, 0.13);
  s.shift = 0.7;
  std::mt19937_64 rng(2525);
  std::lognormal_distribution<double> kd(0.0, 1.5);
  std::vector<double> k(l.padded_size());
  for (auto& v : k) v = kd(rng);
  const double inv_h2[3] = {s.cx, s.cy, s.cz};
  const std::ptrdiff_t st[3] = {1, l.sy(), l.sz()};
  const auto hm = [](double p, double q, double c) { return 2.0 * p * (q / (p + q)) * c; };
  double want = 0;
  int argmax = -1;
  for (int z = 0; z < l.nz; ++z)
    for (int y = 0; y < l.ny; ++y)
      for (int x = 0; x < l.nx; ++x) {
        const std::ptrdiff_t c = l.at(x, y, z);
        double w[3][2];
        for (int a = 0; a < 3; ++a) {
          w[a][0] = hm(k[std::size_t(c - st[a])], k[std::size_t(c)], inv_h2[a]);
          w[a][1] = hm(k[std::size_t(c)], k[std::size_t(c + st[a])], inv_h2[a]);
        }
        const double d =
            (((w[0][0] + w[0][1]) + (w[1][0] + w[1][1])) + (w[2][0] + w[2][1])) + s.shift;
        if (d > want) want = d, argmax = int(c);
      }
  ASSERT_GT(argmax, 0);
  EXPECT_EQ(local_max_diagonal(l, s, k), want);
  // A larger k on a ghost next to the box (the boundary layer) moves the maximum there.
  k[std::size_t(l.at(-1, 2, 3))] = 1e3, k[std::size_t(l.at(0, 2, 3))] = 1e3;
  EXPECT_GT(local_max_diagonal(l, s, k), 1e3 * s.cx);
  k[std::size_t(l.at(4, 4, 4))] = 1e308, k[std::size_t(l.at(5, 4, 4))] = 1e308;  // inf * 0
  EXPECT_EQ(local_max_diagonal(l, s, k), std::numeric_limits<double>::infinity());
}

}  // namespace
}  // namespace halo3d
