// Every kernel of every backend against plain reference loops, on random data.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "backends.hpp"
#include "host_copy.hpp"
#include "point_ops.hpp"
#include "smooth_from_start_check.hpp"

namespace halo3d {
namespace {

using test::make_backend;

struct Fixture {
  Layout l{13, 7, 5};  // odd sizes: no accidental alignment
  std::mt19937_64 rng{12345};
  std::vector<double> random_field() {
    std::uniform_real_distribution<double> d(-1, 1);
    std::vector<double> v(l.padded_size());
    for (auto& x : v) x = d(rng);  // ghosts random too: kernels must read them correctly
    return v;
  }
};

// A reference: (A u) straight from the definition, no shared code.
double ref_apply(const Layout& l, const Stencil& s, const std::vector<double>& u, int i, int j,
                 int k) {
  auto U = [&](int a, int b, int c) { return u[l.at(a, b, c)]; };
  return s.diag * U(i, j, k) - s.cx * (U(i - 1, j, k) + U(i + 1, j, k)) -
         s.cy * (U(i, j - 1, k) + U(i, j + 1, k)) - s.cz * (U(i, j, k - 1) + U(i, j, k + 1));
}

class KernelTest : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    k_ = make_backend(GetParam());
    if (!k_) GTEST_SKIP() << "backend " << GetParam() << " not available here";
  }
  Buffer up(const std::vector<double>& h) { return upload(*k_, h); }
  std::vector<double> down(const Buffer& b) { return download(*k_, b); }
  double sum_slot(int slot) {
    DD v[kReductionSlots];
    k_->read_slots(slot + 1, v);
    return v[slot].hi + v[slot].lo;
  }
  std::unique_ptr<Kernels> k_;
  Fixture f_;
  Stencil s_ = Stencil::laplacian(0.1, 0.07, 0.13);
};

void expect_close(double got, double want, double rel = 1e-13) {
  EXPECT_NEAR(got, want, rel * std::max(1.0, std::abs(want)));
}

TEST_P(KernelTest, ApplyOverRegionsMatchesReference) {
  const auto& l = f_.l;
  const auto u = f_.random_field();
  auto out_h = f_.random_field();  // poisoned output: points outside the region must stay
  Buffer u_d = up(u), out_d = up(out_h);
  const Region r{1, 12, 0, 7, 2, 4};
  k_->apply(l, s_, r, u_d.data(), out_d.data(), 0, Lane::boundary);
  const double dot = sum_slot(0);
  const auto out = down(out_d);
  double ref_dot = 0;
  for (int k = 0; k < l.nz; ++k)
    for (int j = 0; j < l.ny; ++j)
      for (int i = 0; i < l.nx; ++i) {
        const auto c = l.at(i, j, k);
        const bool in = i >= r.i0 && i < r.i1 && j >= r.j0 && j < r.j1 && k >= r.k0 && k < r.k1;
        if (in) {
          const double a = ref_apply(l, s_, u, i, j, k);
          expect_close(out[c], a);
          ref_dot += u[c] * a;
        } else {
          EXPECT_EQ(out[c], out_h[c])
              << "wrote outside the region at " << i << "," << j << "," << k;
        }
      }
  expect_close(dot, ref_dot, 1e-12);
}

// Regions big enough for the tiled CUDA sweeps (HALO3D_CUDA_APPLY picks which): partial
// tiles in x and y, odd offsets, the shell's thin slabs, with and without a reduction.
TEST_P(KernelTest, TiledSweepsOverRegions) {
  Fixture f;
  f.l = Layout{75, 37, 21};
  const auto& l = f.l;
  const auto u = f.random_field(), fsrc = f.random_field();
  const auto poison = f.random_field();
  Buffer u_d = up(u), f_d = up(fsrc);
  for (const Region r : {Region::whole(l), Region{1, 74, 1, 36, 1, 20}, Region{5, 75, 3, 37, 2, 21},
                         Region{0, 75, 0, 37, 0, 1}, Region{0, 75, 0, 2, 0, 21},
                         Region{0, 1, 0, 37, 0, 21}, Region{0, 75, 35, 37, 3, 18}}) {
    for (const int slot : {0, kNoReduction}) {
      Buffer out_d = up(poison), res_d = up(poison), jac_d = up(poison);
      k_->apply(l, s_, r, u_d.data(), out_d.data(), slot, Lane::interior);
      const double dot = slot == 0 ? sum_slot(0) : 0.0;
      k_->residual(l, s_, r, f_d.data(), u_d.data(), res_d.data(), slot, Lane::interior);
      const double rr = slot == 0 ? sum_slot(0) : 0.0;
      k_->jacobi(l, s_, r, f_d.data(), u_d.data(), jac_d.data(), slot, Lane::interior);
      const double jr = slot == 0 ? sum_slot(0) : 0.0;
      const auto out = down(out_d), res = down(res_d), jac = down(jac_d);
      double ref_dot = 0, ref_rr = 0;
      for (int k = 0; k < l.nz; ++k)
        for (int j = 0; j < l.ny; ++j)
          for (int i = 0; i < l.nx; ++i) {
            const auto c = l.at(i, j, k);
            if (i >= r.i0 && i < r.i1 && j >= r.j0 && j < r.j1 && k >= r.k0 && k < r.k1) {
              const double a = ref_apply(l, s_, u, i, j, k);
              expect_close(out[c], a);
              expect_close(res[c], fsrc[c] - a);
              expect_close(jac[c], u[c] + (fsrc[c] - a) / s_.diag);
              ref_dot += u[c] * a;
              ref_rr += (fsrc[c] - a) * (fsrc[c] - a);
            } else {
              EXPECT_EQ(out[c], poison[c])
                  << "wrote outside the region at " << i << "," << j << "," << k;
              EXPECT_EQ(res[c], poison[c]);
              EXPECT_EQ(jac[c], poison[c]);
            }
          }
      if (slot == 0) {
        expect_close(dot, ref_dot, 1e-12);
        expect_close(rr, ref_rr, 1e-12);
        expect_close(jr, ref_rr, 1e-12);
      }
      if (HasFailure()) {
        ADD_FAILURE() << "region " << r.i0 << ".." << r.i1 << " x " << r.j0 << ".." << r.j1 << " x "
                      << r.k0 << ".." << r.k1 << (slot == 0 ? " reducing" : "");
        return;
      }
    }
  }
}

// A reducing sweep over a plane of more tiles than one launch may have partials for, so
// each block strides over several z-chunks (as CG's at 512^3 does). GPU only: it is large.
TEST_P(KernelTest, CappedReducingSweepStridesOverChunks) {
  if (GetParam() != "cuda") GTEST_SKIP() << "the cap only shapes CUDA launches";
  Fixture f;
  f.l = Layout{1030, 515, 64};  // 17 x 129 tiles of 64x4 (33 x 65 of 32x8): capped
  const auto& l = f.l;
  const auto u = f.random_field();
  Buffer u_d = up(u), out_d(*k_, u.size());
  k_->apply(l, s_, Region::whole(l), u_d.data(), out_d.data(), 0, Lane::interior);
  const double dot = sum_slot(0);
  const auto out = down(out_d);
  double ref_dot = 0;
  long long bad = 0;
  for (int k = 0; k < l.nz; ++k)
    for (int j = 0; j < l.ny; ++j)
      for (int i = 0; i < l.nx; ++i) {
        const auto c = l.at(i, j, k);
        const double a = ref_apply(l, s_, u, i, j, k);
        bad += std::abs(out[c] - a) > 1e-13 * std::max(1.0, std::abs(a));
        ref_dot += u[c] * a;
      }
  EXPECT_EQ(bad, 0);
  expect_close(dot, ref_dot, 1e-11);
}

TEST_P(KernelTest, ResidualJacobiHeat) {
  const auto& l = f_.l;
  const auto u = f_.random_field(), fsrc = f_.random_field();
  Buffer u_d = up(u), f_d = up(fsrc), res_d(*k_, u.size()), un_d(*k_, u.size()), h_d(*k_, u.size());
  const Region all = Region::whole(l);
  k_->residual(l, s_, all, f_d.data(), u_d.data(), res_d.data(), 0, Lane::interior);
  const double rr = sum_slot(0);
  k_->jacobi(l, s_, all, f_d.data(), u_d.data(), un_d.data(), 1, Lane::interior);
  const double jr = sum_slot(1);
  k_->heat(l, s_, all, 1e-3, u_d.data(), h_d.data(), Lane::interior);
  const auto res = down(res_d), un = down(un_d), h = down(h_d);
  double ref_rr = 0;
  for (int k = 0; k < l.nz; ++k)
    for (int j = 0; j < l.ny; ++j)
      for (int i = 0; i < l.nx; ++i) {
        const auto c = l.at(i, j, k);
        const double a = ref_apply(l, s_, u, i, j, k);
        expect_close(res[c], fsrc[c] - a);
        expect_close(un[c], u[c] + (fsrc[c] - a) / s_.diag);
        expect_close(h[c], u[c] - 1e-3 * a);
        ref_rr += (fsrc[c] - a) * (fsrc[c] - a);
      }
  expect_close(rr, ref_rr, 1e-12);
  expect_close(jr, ref_rr, 1e-12);
}

TEST_P(KernelTest, VectorUpdatesAndDot) {
  const auto& l = f_.l;
  const auto x = f_.random_field(), y = f_.random_field(), p = f_.random_field(),
             ap = f_.random_field();
  Buffer x_d = up(x), y_d = up(y), p_d = up(p), ap_d = up(ap), r_d = up(y);
  k_->dot(l, x_d.data(), y_d.data(), 2);
  const double dot = sum_slot(2);
  k_->axpby(l, 0.3, x_d.data(), -1.7, y_d.data());
  k_->cg_update(l, 0.25, p_d.data(), ap_d.data(), x_d.data(), r_d.data(), 0, nullptr);
  const double rr = sum_slot(0);
  const auto y2 = down(y_d), x2 = down(x_d), r2 = down(r_d);
  double ref_dot = 0, ref_rr = 0;
  for (int k = -1; k <= l.nz; ++k)
    for (int j = -1; j <= l.ny; ++j)
      for (int i = -1; i <= l.nx; ++i) {
        const auto c = l.at(i, j, k);
        const bool interior = i >= 0 && i < l.nx && j >= 0 && j < l.ny && k >= 0 && k < l.nz;
        if (!interior) {  // ghosts are not the vector's: left alone
          EXPECT_EQ(y2[c], y[c]);
          EXPECT_EQ(x2[c], x[c]);
          continue;
        }
        ref_dot += x[c] * y[c];
        expect_close(y2[c], 0.3 * x[c] - 1.7 * y[c]);
        expect_close(x2[c], x[c] + 0.25 * p[c]);
        const double r = y[c] - 0.25 * ap[c];
        expect_close(r2[c], r);
        ref_rr += r * r;
      }
  expect_close(dot, ref_dot, 1e-12);
  expect_close(rr, ref_rr, 1e-12);
}

// The coarsest level's exact solve, x = M b: each interior point's row summed in order, as a
// plain loop does, in both scalar types; the ghosts are not written.
TEST_P(KernelTest, DenseSolveIsThePlainRowSum) {
  const Layout l{5, 4, 3};
  const int n = int(l.interior_size());
  Fixture f;
  f.l = l;
  std::vector<double> m(std::size_t(n) * n);
  std::uniform_real_distribution<double> d(-1, 1);
  for (double& v : m) v = d(f.rng);
  const auto b = f.random_field(), x0 = f.random_field();
  Buffer m_d = up(m), b_d = up(b), x_d = up(x0);
  k_->dense_solve(l, m_d.data(), b_d.data(), x_d.data());
  const std::vector<float> mf(m.begin(), m.end()), bf(b.begin(), b.end()),
      xf0(x0.begin(), x0.end());
  FloatBuffer mf_d = upload(*k_, mf), bf_d = upload(*k_, bf), xf_d = upload(*k_, xf0);
  k_->dense_solve(l, mf_d.data(), bf_d.data(), xf_d.data());
  const auto x = down(x_d);
  const auto xf = download(*k_, xf_d);
  std::vector<std::ptrdiff_t> at;  // interior points, x fastest
  for (int kk = 0; kk < l.nz; ++kk)
    for (int j = 0; j < l.ny; ++j)
      for (int i = 0; i < l.nx; ++i) at.push_back(l.at(i, j, kk));
  std::vector<bool> interior(l.padded_size(), false);
  for (int i = 0; i < n; ++i) {
    interior[at[i]] = true;
    double want = 0;
    float wantf = 0;
    for (int j = 0; j < n; ++j) {
      const double p = m[std::size_t(i) + std::size_t(j) * n] * b[at[j]];
      want += p;
      const float pf = mf[std::size_t(i) + std::size_t(j) * n] * bf[at[j]];
      wantf += pf;
    }
    EXPECT_EQ(x[at[i]], want) << i;
    EXPECT_EQ(xf[at[i]], wantf) << i;
  }
  for (std::size_t c = 0; c < l.padded_size(); ++c)
    if (!interior[c]) {
      EXPECT_EQ(x[c], x0[c]);
      EXPECT_EQ(xf[c], xf0[c]);
    }
}

// Kernels::record: a recording (CUDA) replays exactly the work it recorded, and work it cannot
// replay (a reduction, the boundary lane) is run as usual instead, unrecorded.
TEST_P(KernelTest, RecordReplaysTheSameWork) {
  if (GetParam() == "cuda") {  // with graphs, whatever the environment asks
    CudaVariants v = cuda_variants_from_env();
    v.graphs = true;
    k_ = make_cuda_kernels(0, v);
  }
  const auto& l = f_.l;
  const auto x = f_.random_field(), y = f_.random_field();
  Buffer xr = up(x), yr = up(y), zr = up(x), xe = up(x), ye = up(y), ze = up(x);
  auto step = [&](Buffer& xb, Buffer& yb, Buffer& zb, Lane lane) {
    k_->axpby(l, 0.5, xb.data(), 1.25, yb.data());
    k_->fence(Lane::interior, lane);
    k_->apply(l, s_, Region::whole(l), yb.data(), zb.data(), kNoReduction, lane);
    k_->fence(lane, Lane::interior);
    k_->axpby(l, -0.75, zb.data(), 0.5, xb.data());
  };
  auto rec = k_->record([&] { step(xr, yr, zr, Lane::interior); });
  EXPECT_EQ(rec != nullptr, GetParam() == "cuda");
  step(xe, ye, ze, Lane::interior);
  EXPECT_EQ(down(xr), down(xe));  // recording ran the work once
  EXPECT_EQ(down(zr), down(ze));
  if (rec) {
    rec->replay();
    rec->replay();
    step(xe, ye, ze, Lane::interior);
    step(xe, ye, ze, Lane::interior);
    EXPECT_EQ(down(xr), down(xe));
    EXPECT_EQ(down(yr), down(ye));
    EXPECT_EQ(down(zr), down(ze));
  }
  // Not replayable: run once as usual, nothing recorded.
  EXPECT_EQ(k_->record([&] { step(xr, yr, zr, Lane::boundary); }), nullptr);
  step(xe, ye, ze, Lane::boundary);
  EXPECT_EQ(down(xr), down(xe));
  EXPECT_EQ(k_->record([&] { k_->dot(l, xr.data(), zr.data(), 1); }), nullptr);
  k_->dot(l, xe.data(), ze.data(), 2);
  DD v[kReductionSlots];
  k_->read_slots(3, v);
  EXPECT_EQ(v[1].hi, v[2].hi);
  EXPECT_EQ(v[1].lo, v[2].lo);
  EXPECT_NE(v[1].hi, 0.0);
}

// Built-in fields from global indices: splitmix64 written out again here, and separable
// sums of products from plain loops; ghosts are left alone.
TEST_P(KernelTest, FillRandomAndSeparable) {
  const auto& l = f_.l;
  const auto before = f_.random_field();
  FieldGen g;
  g.kind = FieldGen::random;
  g.off[0] = 3, g.off[1] = 20, g.off[2] = 7;
  g.gnx = 40, g.gny = 31, g.seed = 99;
  Buffer out = up(before);
  k_->fill(l, g, out.data());
  auto got = down(out);
  auto splitmix = [](std::uint64_t seed, std::uint64_t index) {
    std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + index + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return double(z >> 11) / 4503599627370496.0 - 1.0;
  };
  // Two terms: per term c, then nx x-values, ny y-values, nz z-values.
  const auto t = f_.random_field();
  const std::size_t stride = 1 + l.nx + l.ny + l.nz;
  Buffer tables = up(std::vector<double>(t.begin(), t.begin() + 2 * stride));
  FieldGen sep;
  sep.kind = FieldGen::separable;
  sep.terms = 2;
  sep.tables = tables.data();
  Buffer out2 = up(before);
  k_->fill(l, sep, out2.data());
  const auto got2 = down(out2);
  for (int k = -1; k <= l.nz; ++k)
    for (int j = -1; j <= l.ny; ++j)
      for (int i = -1; i <= l.nx; ++i) {
        const auto c = l.at(i, j, k);
        if (i < 0 || i >= l.nx || j < 0 || j >= l.ny || k < 0 || k >= l.nz) {
          EXPECT_EQ(got[c], before[c]);
          EXPECT_EQ(got2[c], before[c]);
          continue;
        }
        const std::uint64_t gi = 3 + i, gj = 20 + j, gk = 7 + k;
        EXPECT_EQ(got[c], splitmix(99, gi + 40 * (gj + 31 * gk)));
        double v = 0;
        for (int m = 0; m < 2; ++m) {
          const double* tm = t.data() + m * stride;
          v += tm[0] * (tm[1 + i] * tm[1 + l.nx + j] * tm[1 + l.nx + l.ny + k]);
        }
        EXPECT_EQ(got2[c], v);
      }
}

// max_abs: the interior's largest magnitude, ghosts ignored, NaN and Inf reported as such.
TEST_P(KernelTest, MaxAbs) {
  const auto& l = f_.l;
  auto x = f_.random_field();
  double want = 0;
  for (int k = -1; k <= l.nz; ++k)
    for (int j = -1; j <= l.ny; ++j)
      for (int i = -1; i <= l.nx; ++i) {
        double& v = x[l.at(i, j, k)];
        if (i < 0 || i >= l.nx || j < 0 || j >= l.ny || k < 0 || k >= l.nz)
          v = -1e300;  // a ghost: must not count
        else
          want = std::max(want, std::abs(v));
      }
  x[l.at(5, 3, 2)] = -7.5;  // the largest magnitude, negative
  Buffer xd = up(x);
  EXPECT_EQ(k_->max_abs(l, xd.data()), 7.5);
  EXPECT_GT(7.5, want);
  x[l.at(12, 6, 4)] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(k_->max_abs(l, up(x).data()), std::numeric_limits<double>::infinity());
  x[l.at(0, 0, 0)] = std::nan("");
  EXPECT_TRUE(std::isnan(k_->max_abs(l, up(x).data())));
}

// max_abs on a box of more planes than its launch has (CUDA: max_word_planes, each thread
// over several planes): the largest magnitude wherever it lies, the last plane included.
TEST_P(KernelTest, MaxAbsOverMorePlanesThanTheLaunch) {
  Fixture f;
  f.l = Layout{257, 129, 83};  // CUDA: 9 x 17 blocks a plane, so 26 planes of 83 in a launch
  const Layout& l = f.l;
  auto x = f.random_field();
  for (int k = -1; k <= l.nz; ++k)  // ghosts must not count
    for (int j = -1; j <= l.ny; ++j)
      for (int i = -1; i <= l.nx; ++i)
        if (i < 0 || i >= l.nx || j < 0 || j >= l.ny || k < 0 || k >= l.nz)
          x[l.at(i, j, k)] = 1e300;
  for (const int z : {82, 27, 0, 57}) {
    x[l.at(256, 128, z)] = -2.0 - z;  // the largest so far, each on another plane
    EXPECT_EQ(k_->max_abs(l, up(x).data()), 2.0 + z) << "plane " << z;
    x[l.at(256, 128, z)] = 0.5;
  }
}

TEST_P(KernelTest, PackUnpackEveryFace) {
  const auto& l = f_.l;
  const auto u = f_.random_field();
  Buffer u_d = up(u);
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side) {
      const Face face{axis, side};
      int na, nb;
      ops::face_dims(l, face, na, nb);
      Buffer buf(*k_, std::size_t(na) * nb);
      k_->pack(l, face, u_d.data(), buf.data(), Lane::boundary);
      const auto packed = down(buf);
      const int n[3] = {l.nx, l.ny, l.nz};
      for (int b = 0; b < nb; ++b)
        for (int a = 0; a < na; ++a) {
          int idx[3];
          idx[axis] = side ? n[axis] - 1 : 0;
          idx[axis == 0 ? 1 : 0] = a - 1;  // faces span the ghost rim
          idx[axis == 2 ? 1 : 2] = b - 1;
          ASSERT_EQ(packed[a + std::size_t(na) * b], u[l.at(idx[0], idx[1], idx[2])]);
        }
      // Unpacking writes the ghost layer beyond the face, and nothing else.
      auto target = f_.random_field();
      Buffer t_d = up(target);
      k_->unpack(l, face, buf.data(), t_d.data(), Lane::boundary);
      const auto t = down(t_d);
      std::size_t changed = 0;
      for (std::size_t c = 0; c < t.size(); ++c) changed += t[c] != target[c];
      EXPECT_EQ(changed, std::size_t(na) * nb);
      for (int b = 0; b < nb; ++b)
        for (int a = 0; a < na; ++a) {
          int idx[3];
          idx[axis] = side ? n[axis] : -1;
          idx[axis == 0 ? 1 : 0] = a - 1;
          idx[axis == 2 ? 1 : 2] = b - 1;
          ASSERT_EQ(t[l.at(idx[0], idx[1], idx[2])], packed[a + std::size_t(na) * b]);
        }
    }
}

TEST_P(KernelTest, ReductionsAreOrderIndependent) {
  // The double-double sum of many terms of mixed sign and size does not depend on how
  // the points are split: summing two halves equals summing all.
  Layout l{64, 33, 17};
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<double> x(l.padded_size()), y(l.padded_size());
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = std::ldexp(d(rng), int(i % 40) - 20), y[i] = d(rng);
  Buffer x_d = up(x), y_d = up(y), out_d(*k_, x.size());
  k_->apply(l, s_, Region::whole(l), x_d.data(), out_d.data(), 0, Lane::interior);
  DD whole[1];
  k_->read_slots(1, whole);
  k_->apply(l, s_, Region{0, 64, 0, 33, 0, 9}, x_d.data(), out_d.data(), 0, Lane::interior);
  k_->apply(l, s_, Region{0, 64, 0, 33, 9, 17}, x_d.data(), out_d.data(), 0, Lane::boundary);
  DD halves[1];
  k_->read_slots(1, halves);
  EXPECT_EQ(whole[0].hi + whole[0].lo, halves[0].hi + halves[0].lo);
}

// ---- float: the operations of a float multigrid V-cycle ------------------------------
// The reference loops do the point updates' float arithmetic in the same order
// (coefficients rounded to float once, each product rounded on its own), so every backend
// must match them bitwise; reductions are double-double sums of the float terms.

std::vector<float> to_float(const std::vector<double>& v) {
  std::vector<float> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = float(v[i]);
  return out;
}

float ref_apply_f(const Layout& l, const Stencil& s, const std::vector<float>& u, int i, int j,
                  int k) {
  auto U = [&](int a, int b, int c) { return u[l.at(a, b, c)]; };
  const float d = float(s.diag), cx = float(s.cx), cy = float(s.cy), cz = float(s.cz);
  const float t0 = d * U(i, j, k), t1 = cx * (U(i - 1, j, k) + U(i + 1, j, k));
  const float t2 = cy * (U(i, j - 1, k) + U(i, j + 1, k));
  const float t3 = cz * (U(i, j, k - 1) + U(i, j, k + 1));
  return ((t0 - t1) - t2) - t3;
}

class FloatKernelTest : public KernelTest {
 protected:
  FloatBuffer upf(const std::vector<float>& h) {
    FloatBuffer b(*k_, h.size());
    k_->copy(b.data(), h.data(), h.size(), Lane::interior);
    k_->synchronize();
    return b;
  }
  std::vector<float> downf(const FloatBuffer& b) {
    std::vector<float> h(b.size());
    k_->synchronize();
    k_->copy(h.data(), b.data(), b.size(), Lane::interior);
    k_->synchronize();
    return h;
  }
  static bool interior(const Layout& l, int i, int j, int k) {
    return i >= 0 && i < l.nx && j >= 0 && j < l.ny && k >= 0 && k < l.nz;
  }
};

TEST_P(FloatKernelTest, ResidualAndSmoothBitwise) {
  const auto& l = f_.l;
  const auto u = to_float(f_.random_field()), fs = to_float(f_.random_field()),
             d = to_float(f_.random_field()), poison = to_float(f_.random_field());
  FloatBuffer u_d = upf(u), f_d = upf(fs), d_d = upf(d), res_d = upf(poison), dout_d = upf(poison),
              un_d = upf(poison), un2_d = upf(poison);
  const Region all = Region::whole(l), part{2, 11, 1, 6, 0, 4};
  const double cd = 0.3, cr = 0.013;
  k_->residual(l, s_, all, f_d.data(), u_d.data(), res_d.data(), 0, Lane::interior);
  const double rr = sum_slot(0);
  k_->smooth(l, s_, all, cd, cr, f_d.data(), u_d.data(), d_d.data(), dout_d.data(), un_d.data(), 1,
             Lane::interior);
  const double fu = sum_slot(1);
  k_->smooth(l, s_, part, 0.0, cr, f_d.data(), u_d.data(), nullptr, nullptr, un2_d.data(),
             kNoReduction, Lane::boundary);
  const auto res = downf(res_d), dout = downf(dout_d), un = downf(un_d), un2 = downf(un2_d);
  double ref_rr = 0, ref_fu = 0;
  const float fcd = float(cd), fcr = float(cr);
  for (int k = -1; k <= l.nz; ++k)
    for (int j = -1; j <= l.ny; ++j)
      for (int i = -1; i <= l.nx; ++i) {
        const auto c = l.at(i, j, k);
        if (!interior(l, i, j, k)) {  // ghosts are left alone
          ASSERT_EQ(res[c], poison[c]);
          ASSERT_EQ(un[c], poison[c]);
          ASSERT_EQ(un2[c], poison[c]);
          continue;
        }
        const float a = ref_apply_f(l, s_, u, i, j, k);
        const float r = fs[c] - a;
        ASSERT_EQ(res[c], r) << i << "," << j << "," << k;
        ref_rr += double(r * r);
        const float rc = fcr * r;
        const float dn = fcd * d[c] + rc;
        ASSERT_EQ(dout[c], dn);
        ASSERT_EQ(un[c], u[c] + dn);
        ref_fu += double(fs[c] * (u[c] + dn));
        const bool in = i >= part.i0 && i < part.i1 && j >= part.j0 && j < part.j1 &&
                        k >= part.k0 && k < part.k1;
        ASSERT_EQ(un2[c], in ? u[c] + rc : poison[c]);
      }
  expect_close(rr, ref_rr, 1e-12);
  expect_close(fu, ref_fu, 1e-12);
}

// smooth_from_start is smooth_start then smooth with d_in = u = x, bitwise: x's ghosts are
// cr0 times f's (random here, as a neighbour's values would be). T: double or float.
template <class T>
void check_smooth_from_start(Kernels& k, Fixture& fx, const Stencil& s) {
  const Layout& l = fx.l;
  std::vector<T> f(l.padded_size()), poison(l.padded_size()), x(l.padded_size());
  const std::vector<double> fd = fx.random_field(), pd = fx.random_field();
  for (std::size_t c = 0; c < f.size(); ++c) f[c] = T(fd[c]), poison[c] = T(pd[c]);
  const double cr0 = 0.37;
  for (std::size_t c = 0; c < f.size(); ++c) x[c] = T(cr0) * f[c];
  test::expect_from_start_is_start_then_smooth(k, l, s, f, x, poison, cr0);
}

TEST_P(FloatKernelTest, SmoothFromStartIsStartThenSmoothBitwise) {
  check_smooth_from_start<double>(*k_, f_, s_);
  check_smooth_from_start<float>(*k_, f_, s_);
}

TEST_P(FloatKernelTest, AxpbyDotConvertBitwise) {
  const auto& l = f_.l;
  const auto xd = f_.random_field(), yd = f_.random_field();
  const auto x = to_float(xd), y = to_float(yd);
  FloatBuffer x_d = upf(x), y_d = upf(y), xf_d = upf(y);
  k_->dot(l, x_d.data(), y_d.data(), 3);
  const double dot = sum_slot(3);
  k_->axpby(l, 0.3, x_d.data(), -1.7, y_d.data());
  // double -> float rounds to nearest; float -> double is exact.
  Buffer src = up(xd), back = up(yd);
  k_->convert(l, src.data(), xf_d.data());
  k_->convert(l, x_d.data(), back.data(), nullptr, kNoReduction);
  Buffer back2 = up(yd), with = up(xd);
  k_->convert(l, x_d.data(), back2.data(), with.data(), 2);
  const double widened_dot = sum_slot(2);
  const auto y2 = downf(y_d), xf = downf(xf_d);
  const auto b2 = down(back), b3 = down(back2);
  double ref_dot = 0, ref_wdot = 0;
  for (int k = -1; k <= l.nz; ++k)
    for (int j = -1; j <= l.ny; ++j)
      for (int i = -1; i <= l.nx; ++i) {
        const auto c = l.at(i, j, k);
        if (!interior(l, i, j, k)) {
          ASSERT_EQ(y2[c], y[c]);
          ASSERT_EQ(xf[c], y[c]);
          ASSERT_EQ(b2[c], yd[c]);
          ASSERT_EQ(b3[c], yd[c]);
          continue;
        }
        ref_dot += double(x[c] * y[c]);
        ASSERT_EQ(y2[c], 0.3f * x[c] + -1.7f * y[c]);
        ASSERT_EQ(xf[c], float(xd[c]));
        ASSERT_EQ(b2[c], double(x[c]));
        ASSERT_EQ(b3[c], double(x[c]));
        ref_wdot += xd[c] * double(x[c]);
      }
  expect_close(dot, ref_dot, 1e-12);
  expect_close(widened_dot, ref_wdot, 1e-12);
}

// Mixed PCG's fused kernels (z stays in float): the update that also rounds r to float, r.z
// and the next direction from the float z give the bits of the double sequence they replace
// (update, convert r to float; widen z with r.z; p = z + beta p); ghosts are left alone.
TEST_P(FloatKernelTest, MixedPcgKernelsAreTheDoubleSequenceBitwise) {
  const auto& l = f_.l;
  const auto p = f_.random_field(), ap = f_.random_field(), x = f_.random_field(),
             r = f_.random_field(), pd = f_.random_field();
  const auto z = to_float(f_.random_field()), poison = to_float(f_.random_field());
  // The update with r rounded to float, and without, then the rounding on its own.
  Buffer p_d = up(p), ap_d = up(ap), x1 = up(x), r1 = up(r), x2 = up(x), r2 = up(r);
  FloatBuffer rf1 = upf(poison), rf2 = upf(poison);
  k_->cg_update(l, 0.37, p_d.data(), ap_d.data(), x1.data(), r1.data(), 1, rf1.data());
  const double rr1 = sum_slot(1);
  k_->cg_update(l, 0.37, p_d.data(), ap_d.data(), x2.data(), r2.data(), 1, nullptr);
  const double rr2 = sum_slot(1);
  k_->convert(l, r2.data(), rf2.data());
  EXPECT_EQ(rr1, rr2);
  EXPECT_EQ(down(x1), down(x2));
  EXPECT_EQ(down(r1), down(r2));
  EXPECT_EQ(downf(rf1), downf(rf2));  // ghosts: the poison in both
  // r.z with z widened, against the widening conversion's r.z.
  FloatBuffer z_d = upf(z);
  Buffer zw = up(pd);
  k_->dot(l, r1.data(), z_d.data(), 2);
  const double rz1 = sum_slot(2);
  k_->convert(l, z_d.data(), zw.data(), r1.data(), 2);
  const double rz2 = sum_slot(2);
  EXPECT_EQ(rz1, rz2);
  // p = z + beta p from the float z and from its widened copy.
  Buffer p1 = up(pd), p2 = up(pd);
  k_->axpby(l, 1.0, z_d.data(), -0.61, p1.data());
  k_->axpby(l, 1.0, zw.data(), -0.61, p2.data());
  EXPECT_EQ(down(p1), down(p2));
  // And against plain loops, so that both sides cannot be wrong together.
  const auto rn = down(r1), ph = down(p1);
  const auto rfh = downf(rf1);
  double ref_rz = 0;
  for (int k = -1; k <= l.nz; ++k)
    for (int j = -1; j <= l.ny; ++j)
      for (int i = -1; i <= l.nx; ++i) {
        const auto c = l.at(i, j, k);
        if (!interior(l, i, j, k)) {
          ASSERT_EQ(rfh[c], poison[c]);
          ASSERT_EQ(ph[c], pd[c]);
          continue;
        }
        ASSERT_EQ(rn[c], r[c] - 0.37 * ap[c]);
        ASSERT_EQ(rfh[c], float(rn[c]));
        ASSERT_EQ(ph[c], double(z[c]) + -0.61 * pd[c]);
        ref_rz += rn[c] * double(z[c]);
      }
  expect_close(rz1, ref_rz, 1e-12);
}

TEST_P(FloatKernelTest, PackUnpackEveryFace) {
  const auto& l = f_.l;
  const auto u = to_float(f_.random_field());
  FloatBuffer u_d = upf(u);
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side) {
      const Face face{axis, side};
      int na, nb;
      ops::face_dims(l, face, na, nb);
      FloatBuffer buf(*k_, std::size_t(na) * nb);
      k_->pack(l, face, u_d.data(), buf.data(), Lane::boundary);
      const auto packed = downf(buf);
      const auto target = to_float(f_.random_field());
      FloatBuffer t_d = upf(target);
      k_->unpack(l, face, buf.data(), t_d.data(), Lane::boundary);
      const auto t = downf(t_d);
      std::size_t changed = 0;
      for (std::size_t c = 0; c < t.size(); ++c) changed += t[c] != target[c];
      EXPECT_EQ(changed, std::size_t(na) * nb);
      const int n[3] = {l.nx, l.ny, l.nz};
      for (int b = 0; b < nb; ++b)
        for (int a = 0; a < na; ++a) {
          int idx[3], gh[3];
          idx[axis] = side ? n[axis] - 1 : 0;
          gh[axis] = side ? n[axis] : -1;
          idx[axis == 0 ? 1 : 0] = gh[axis == 0 ? 1 : 0] = a - 1;  // the ghost rim too
          idx[axis == 2 ? 1 : 2] = gh[axis == 2 ? 1 : 2] = b - 1;
          ASSERT_EQ(packed[a + std::size_t(na) * b], u[l.at(idx[0], idx[1], idx[2])]);
          ASSERT_EQ(t[l.at(gh[0], gh[1], gh[2])], packed[a + std::size_t(na) * b]);
        }
    }
}

// The one-round exchange's boxes of a box n: per offset in {-1,0,1}^3 but 0, the boundary
// layer sent (ghost = false) or the ghost sub-box filled (true), written out here per axis.
BoxList exchange_boxes(const Layout& l, bool ghost) {
  const int n[3] = {l.nx, l.ny, l.nz};
  BoxList b;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        if (!dx && !dy && !dz) continue;
        const int off[3] = {dx, dy, dz};
        int lo[3], hi[3];
        for (int a = 0; a < 3; ++a) {
          lo[a] = off[a] == 0 ? 0 : off[a] < 0 ? (ghost ? -1 : 0) : (ghost ? n[a] : n[a] - 1);
          hi[a] = off[a] == 0 ? n[a] : lo[a] + 1;
        }
        b.add({lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]});
      }
  return b;
}

// pack_boxes against a plain walk of the boxes (each x fastest, one after another), and
// unpack_boxes writing exactly the (disjoint) ghost boxes' points and nothing else.
template <class T>
void check_boxes(Kernels& k, const Layout& l, const std::vector<T>& u,
                 const std::vector<T>& target) {
  const BoxList send = exchange_boxes(l, false), ghosts = exchange_boxes(l, true);
  ASSERT_EQ(send.count, 26);
  ASSERT_EQ(send.points(), ghosts.points());
  std::vector<T> want;
  for (int n = 0; n < send.count; ++n) {
    const Region& r = send.box[n];
    for (int kk = r.k0; kk < r.k1; ++kk)
      for (int j = r.j0; j < r.j1; ++j)
        for (int i = r.i0; i < r.i1; ++i) want.push_back(u[l.at(i, j, kk)]);
  }
  auto up = [&](const std::vector<T>& h) {
    BasicBuffer<T> b(k, h.size());
    k.copy(b.data(), h.data(), h.size(), Lane::interior);
    return b;
  };
  auto down = [&](const BasicBuffer<T>& b) {
    std::vector<T> h(b.size());
    k.synchronize();
    k.copy(h.data(), b.data(), h.size(), Lane::interior);
    k.synchronize();
    return h;
  };
  BasicBuffer<T> u_d = up(u), t_d = up(target), buf(k, want.size());
  k.pack_boxes(l, send, u_d.data(), buf.data(), Lane::boundary);
  k.unpack_boxes(l, ghosts, buf.data(), t_d.data(), Lane::boundary);
  const auto packed = down(buf), t = down(t_d);
  EXPECT_TRUE(packed == want);
  std::size_t changed = 0, p = 0;
  for (std::size_t c = 0; c < t.size(); ++c) changed += t[c] != target[c];
  EXPECT_EQ(changed, want.size());
  for (int n = 0; n < ghosts.count; ++n) {
    const Region& r = ghosts.box[n];
    for (int kk = r.k0; kk < r.k1; ++kk)
      for (int j = r.j0; j < r.j1; ++j)
        for (int i = r.i0; i < r.i1; ++i) ASSERT_EQ(t[l.at(i, j, kk)], want[p++]);
  }
}

TEST_P(FloatKernelTest, PackUnpackBoxesBothTypes) {
  for (const Layout& l : {f_.l, Layout{1, 2, 3}}) {
    f_.l = l;
    const auto u = f_.random_field(), target = f_.random_field();
    check_boxes<double>(*k_, l, u, target);
    check_boxes<float>(*k_, l, to_float(u), to_float(target));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, FloatKernelTest, testing::Values("host", "cuda"),
                         [](const auto& info) { return info.param; });

TEST(HostVsCuda, BitwiseIdenticalSweeps) {
  auto h = make_backend("host");
  auto c = make_backend("cuda");
  if (!c) GTEST_SKIP() << "cuda backend not available here";
  Fixture f;
  f.l = Layout{67, 35, 19};
  const auto u = f.random_field();
  const Stencil s = Stencil::laplacian(0.01, 0.02, 0.03);
  std::vector<double> outs[2];
  double dots[2];
  int n = 0;
  for (Kernels* k : {h.get(), c.get()}) {
    Buffer ud(*k, u.size()), od(*k, u.size());
    k->copy(ud.data(), u.data(), u.size(), Lane::interior);
    k->apply(f.l, s, Region::whole(f.l), ud.data(), od.data(), 0, Lane::interior);
    DD v[1];
    k->read_slots(1, v);
    dots[n] = v[0].hi + v[0].lo;
    outs[n].resize(u.size());
    k->copy(outs[n].data(), od.data(), u.size(), Lane::interior);
    k->synchronize();
    ++n;
  }
  EXPECT_EQ(outs[0], outs[1]);
  EXPECT_EQ(dots[0], dots[1]);
}

INSTANTIATE_TEST_SUITE_P(Backends, KernelTest, testing::Values("host", "cuda"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace halo3d
