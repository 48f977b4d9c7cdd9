// Multigrid preconditioner: coarsening for every size, transfers (restriction is the scaled
// transpose of prolongation; prolongation against a plain reference), the Chebyshev
// smoother's polynomial, the V-cycle's symmetry and positivity on every process grid, and
// MG-PCG's bounded iteration counts, decomposition invariance and exact answers.
// Runs under mpirun with 1-4 ranks (HALO3D_TEST_BACKEND=cuda: on the GPU).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "backends.hpp"
#include "multigrid.hpp"
#include "point_ops.hpp"
#include "problem.hpp"
#include "reduction.hpp"
#include "solvers.hpp"
#include "test_support.hpp"

namespace halo3d {
namespace {

using test::backend_under_test;
using test::process_grids;

TEST(Multigrid, CoarseningHandlesEverySize) {
  for (int n = 1; n <= 2100; ++n) {
    const int c = mg_coarser(n);
    if (n == 1) {
      EXPECT_EQ(c, 1);
      continue;
    }
    ASSERT_GE(c, 1) << n;
    ASSERT_LT(c, n) << n;
    const double r = double(n + 1) / double(c + 1);
    // Nested (ratio exactly 2) or at most 1.5: what keeps transfers within one ghost layer.
    EXPECT_TRUE(n + 1 == 2 * (c + 1) || r <= 1.5) << n << " -> " << c;
    if (n >= 8) EXPECT_GE(r, 1.3) << n << " -> " << c << " coarsens too little";
  }
  // The hierarchy stops at its first level of at most kMgDensePoints points (solved exactly).
  const auto ends_dense = [](const std::vector<Int3>& levels) {
    const auto points = [](const Int3& g) { return double(g[0]) * g[1] * g[2]; };
    return levels.size() >= 2 && points(levels.back()) <= kMgDensePoints &&
           points(levels[levels.size() - 2]) > kMgDensePoints;
  };
  const auto levels = mg_level_grids({512, 63, 1}, 0);
  EXPECT_EQ(levels.back(), (Int3{7, 7, 1}));
  EXPECT_TRUE(ends_dense(levels));
  // The first step halves an even axis of 16 or more points (n + 1 intervals to n/2: coarse
  // J restricts fine [2J, 2J+3]); later even steps and shorter axes take a ratio <= 1.5.
  EXPECT_EQ(levels[1], (Int3{255, 63, 1}));  // y waits: its spacing is 8x x's
  EXPECT_EQ(mg_level_grids({130, 128, 129}, 0)[1], (Int3{64, 63, 64}));
  EXPECT_EQ(mg_level_grids({130, 128, 129}, 0)[2], (Int3{43, 31, 43}));
  // An axis that waits at the first step (semi-coarsening) coarsens later by the later rule.
  EXPECT_EQ(mg_level_grids({130, 14, 64}, 0)[1], (Int3{64, 14, 64}));
  EXPECT_EQ(mg_level_grids({130, 14, 64}, 0)[2], (Int3{43, 14, 43}));
  for (int n = 16; n <= 2100; n += 2) {
    EXPECT_EQ(mg_coarser(n, false, false, false, true), n / 2 - 1);
    EXPECT_EQ(mg_coarser(n, true, false, false, true), mg_coarser(n, true)) << n;
    EXPECT_EQ(mg_coarser(n, false, true, false, true), mg_coarser(n, false, true, false)) << n;
    int first, last;  // the span of every coarse point: [2J, 2J+3]
    for (int J = 0; J < n / 2 - 1; J += std::max(1, n / 16)) {
      ops::restrict_span(J, n, n + 1, n / 2, first, last);
      EXPECT_EQ(first, 2 * J) << n << " " << J;
      EXPECT_EQ(last, 2 * J + 3) << n << " " << J;
    }
  }
  EXPECT_EQ(mg_level_grids({64, 64, 64}, 3).size(), 3u);
  // --box 4,1,1 on 63^3: x's spacing is 4x the others', so x waits until they catch up
  // (the stencil's weights say so: the hierarchy is built from the operator).
  const Stencil box = Stencil::laplacian(4.0 / 64, 1.0 / 64, 1.0 / 64);
  const auto elongated = mg_level_grids({63, 63, 63}, stencil_spacing(box), 0);
  EXPECT_EQ(elongated[1], (Int3{63, 31, 31}));
  EXPECT_EQ(elongated[2], (Int3{63, 15, 15}));
  EXPECT_EQ(elongated[3], (Int3{31, 7, 7}));
  EXPECT_EQ(elongated.back(), (Int3{7, 1, 1}));
  EXPECT_TRUE(ends_dense(elongated));
  // The unit cube's spacings from its stencil give the same levels as from the grid alone.
  for (const Int3 g : {Int3{512, 63, 1}, Int3{45, 38, 52}, Int3{95, 47, 191}}) {
    const Stencil s = Stencil::laplacian(1.0 / (g[0] + 1), 1.0 / (g[1] + 1), 1.0 / (g[2] + 1));
    EXPECT_EQ(mg_level_grids(g, stencil_spacing(s), 0), mg_level_grids(g, 0)) << to_string(g);
  }
}

// The coarsest level's exact solve: its dense operator is the 7-point operator of random
// face weights (a plain loop over the padded box, a periodic axis wrapped), and its inverse
// solves it to rounding: A (M b) = b on random b. Singular (every axis periodic, no shift):
// for b orthogonal to the constants.
TEST(Multigrid, DenseCoarsestSolveIsExact) {
  const Layout l{4, 5, 3};
  const int n = int(l.interior_size());
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> w(0.5, 2.0), v(-1, 1);
  for (const bool all_periodic : {false, true}) {
    const Periodic p{true, all_periodic, all_periodic};
    std::vector<double> faces[3];
    Stencil s;
    for (int a = 0; a < 3; ++a) {
      faces[a].assign(l.padded_size(), 0.0);
      for (double& x : faces[a]) x = w(rng) * (a == 2 ? 100.0 : 1.0);  // anisotropic
      s.vd.w[a] = faces[a].data();
    }
    // The wrapped faces must be the same face from both sides: the low ghost's face is the
    // last point's (a periodic axis's weights are exchanged that way).
    for (int k = -1; k <= l.nz; ++k)
      for (int j = -1; j <= l.ny; ++j) faces[0][l.at(-1, j, k)] = faces[0][l.at(l.nx - 1, j, k)];
    if (all_periodic) {
      for (int k = -1; k <= l.nz; ++k)
        for (int i = -1; i <= l.nx; ++i) faces[1][l.at(i, -1, k)] = faces[1][l.at(i, l.ny - 1, k)];
      for (int j = -1; j <= l.ny; ++j)
        for (int i = -1; i <= l.nx; ++i) faces[2][l.at(i, j, -1)] = faces[2][l.at(i, j, l.nz - 1)];
    }
    const std::vector<double> a = mg_dense_operator(l, s, p);
    const std::vector<double> m = mg_dense_inverse(a, n, all_periodic);
    // The operator against the plain 7-point sum at every point.
    auto index = [&](int i, int j, int k) {
      const int N[3] = {l.nx, l.ny, l.nz};
      int q[3] = {i, j, k};
      for (int ax = 0; ax < 3; ++ax)
        if (q[ax] < 0 || q[ax] >= N[ax]) {
          if (!p[ax]) return -1;
          q[ax] = (q[ax] + N[ax]) % N[ax];
        }
      return q[0] + l.nx * (q[1] + l.ny * q[2]);
    };
    std::vector<double> u(n), b(n);
    for (double& x : u) x = v(rng);
    for (int k = 0; k < l.nz; ++k)
      for (int j = 0; j < l.ny; ++j)
        for (int i = 0; i < l.nx; ++i) {
          const auto c = l.at(i, j, k);
          const double wl[3] = {faces[0][c - 1], faces[1][c - l.sy()], faces[2][c - l.sz()]};
          const double wh[3] = {faces[0][c], faces[1][c], faces[2][c]};
          const int lo[3] = {index(i - 1, j, k), index(i, j - 1, k), index(i, j, k - 1)};
          const int hi[3] = {index(i + 1, j, k), index(i, j + 1, k), index(i, j, k + 1)};
          const int me = index(i, j, k);
          double want = 0;
          for (int ax = 0; ax < 3; ++ax) {
            want += wl[ax] * u[me] + wh[ax] * u[me];
            if (lo[ax] >= 0) want -= wl[ax] * u[lo[ax]];
            if (hi[ax] >= 0) want -= wh[ax] * u[hi[ax]];
          }
          double got = 0;
          for (int q = 0; q < n; ++q) got += a[std::size_t(me) * n + q] * u[q];
          EXPECT_NEAR(got, want, 1e-12 * 400) << i << " " << j << " " << k;
        }
    // The inverse: A (M b) = b, b random (less its mean where A is singular).
    for (double& x : b) x = v(rng);
    if (all_periodic) {
      double mean = 0;
      for (double x : b) mean += x / n;
      for (double& x : b) x -= mean;
    }
    std::vector<double> x(n, 0.0);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) x[i] += m[std::size_t(i) + std::size_t(j) * n] * b[j];
    for (int i = 0; i < n; ++i) {
      double ax = 0;
      for (int j = 0; j < n; ++j) ax += a[std::size_t(i) * n + j] * x[j];
      EXPECT_NEAR(ax, b[i], 1e-10) << i << (all_periodic ? " singular" : "");
    }
  }
}

// Plain reference of 1D linear interpolation from positions in double.
double reference_interp(const std::vector<double>& coarse, int i, int nf, int nc) {
  const double x = double(i + 1) / (nf + 1);
  for (int I = -1; I < nc; ++I) {
    const double x0 = double(I + 1) / (nc + 1), x1 = double(I + 2) / (nc + 1);
    if (x >= x0 - 1e-15 && x <= x1 + 1e-15) {
      const double v0 = I >= 0 ? coarse[I] : 0.0, v1 = I + 1 < nc ? coarse[I + 1] : 0.0;
      return v0 + (x - x0) / (x1 - x0) * (v1 - v0);
    }
  }
  return NAN;
}

// The first step's sizes (mg_coarser's from_fine: an even axis of 16 or more halved, 4 fine
// points per coarse point) or a later step's.
Int3 coarser_grid(const Int3& nf, bool from_fine) {
  Int3 nc;
  for (int a = 0; a < 3; ++a) nc[a] = mg_coarser(nf[a], false, false, false, from_fine);
  return nc;
}

// A transfer test's fine and coarse boxes on one rank alone: the whole grids, no neighbours.
std::pair<Decomposition, Decomposition> one_rank_boxes(const Int3& nf, const Int3& nc) {
  Decomposition f, c;
  f.grid = f.count = nf;
  c.grid = c.count = nc;
  for (auto* d : {&f, &c})
    for (auto& n : d->neighbor) n = {MPI_PROC_NULL, MPI_PROC_NULL};
  return {f, c};
}

TEST(Multigrid, RestrictionIsTheScaledTransposeOfProlongation_host) {
  auto k = make_host_kernels();
  for (const auto& [nf, from_fine] :
       {std::pair{Int3{9, 10, 7}, false}, std::pair{Int3{64, 5, 3}, false},
        std::pair{Int3{17, 32, 1}, false}, std::pair{Int3{8, 8, 8}, false},
        std::pair{Int3{64, 5, 18}, true}, std::pair{Int3{17, 32, 16}, true}}) {
    const Int3 nc = coarser_grid(nf, from_fine);
    const auto [f, c] = one_rank_boxes(nf, nc);
    const TransferOp op = make_transfer(*k, f, c);
    const Transfer& t = op.t;
    Buffer fine = upload(*k, random_box(f, 11)), coarse = upload(*k, random_box(c, 12));
    Buffer rf(*k, t.coarse.padded_size()), pe(*k, t.fine.padded_size());
    k->restrict_to(t, fine.data(), rf.data());
    k->prolong_add(t, coarse.data(), pe.data());
    const double lhs = global_dot(*k, t.coarse, rf.data(), coarse.data(), MPI_COMM_SELF);
    const double rhs = t.wd.scale * global_dot(*k, t.fine, fine.data(), pe.data(), MPI_COMM_SELF);
    EXPECT_NEAR(lhs, rhs, 1e-13 * std::abs(lhs)) << to_string(nf);
    EXPECT_NE(lhs, 0.0);

    // Prolongation of a coarse field that varies along one axis only, against the reference.
    for (int a = 0; a < 3; ++a) {
      std::vector<double> line(nc[a]);
      for (int I = 0; I < nc[a]; ++I) line[I] = random_value(a + 20, I);
      std::vector<double> h(t.coarse.padded_size(), 0.0);
      for (int kk = 0; kk < nc[2]; ++kk)
        for (int j = 0; j < nc[1]; ++j)
          for (int i = 0; i < nc[0]; ++i)
            h[t.coarse.at(i, j, kk)] = line[a == 0 ? i : a == 1 ? j : kk];
      Buffer e = upload(*k, h), out(*k, t.fine.padded_size());
      k->prolong_add(t, e.data(), out.data());
      const auto got = download(*k, out);
      for (int kk = 0; kk < nf[2]; ++kk)
        for (int j = 0; j < nf[1]; ++j)
          for (int i = 0; i < nf[0]; ++i) {
            // The other two axes interpolate a constant: their weights at the ends fall to 0.
            double other = 1;
            const int p[3] = {i, j, kk};
            for (int b = 0; b < 3; ++b)
              if (b != a) {
                const std::vector<double> ones(nc[b], 1.0);
                other *= reference_interp(ones, p[b], nf[b], nc[b]);
              }
            const double want = other * reference_interp(line, p[a], nf[a], nc[a]);
            ASSERT_NEAR(got[t.fine.at(i, j, kk)], want, 1e-14)
                << "axis " << a << " at " << i << "," << j << "," << kk;
          }
    }
  }
}

// Float transfers: the double weights rounded to float once, products in float; within
// float rounding of the double transfers.
TEST(Multigrid, FloatTransfersFollowTheDoubleOnes_host) {
  auto k = make_host_kernels();
  for (const auto& [nf, from_fine] :
       {std::pair{Int3{9, 10, 7}, false}, std::pair{Int3{64, 5, 3}, false},
        std::pair{Int3{8, 8, 8}, false}, std::pair{Int3{20, 16, 33}, true}}) {
    const Int3 nc = coarser_grid(nf, from_fine);
    const auto [f, c] = one_rank_boxes(nf, nc);
    const TransferOp op = make_transfer(*k, f, c);
    const Transfer& t = op.t;
    const auto fine_h = random_box(f, 11), coarse_h = random_box(c, 12);
    std::vector<float> fine_f(fine_h.begin(), fine_h.end()),
        coarse_f(coarse_h.begin(), coarse_h.end());
    Buffer fine = upload(*k, fine_h), coarse = upload(*k, coarse_h);
    Buffer rf(*k, t.coarse.padded_size()), pe(*k, t.fine.padded_size());
    FloatBuffer ffine(*k, fine_f.size()), fcoarse(*k, coarse_f.size());
    k->copy(ffine.data(), fine_f.data(), fine_f.size(), Lane::interior);
    k->copy(fcoarse.data(), coarse_f.data(), coarse_f.size(), Lane::interior);
    FloatBuffer frf(*k, t.coarse.padded_size()), fpe(*k, t.fine.padded_size());
    k->restrict_to(t, fine.data(), rf.data());
    k->prolong_add(t, coarse.data(), pe.data());
    k->restrict_to(t, ffine.data(), frf.data());
    k->prolong_add(t, fcoarse.data(), fpe.data());
    const auto r64 = download(*k, rf), p64 = download(*k, pe);
    std::vector<float> r32(frf.size()), p32(fpe.size());
    k->copy(r32.data(), frf.data(), r32.size(), Lane::interior);
    k->copy(p32.data(), fpe.data(), p32.size(), Lane::interior);
    double rmax = 0, pmax = 0, rerr = 0, perr = 0;
    for (std::size_t i = 0; i < r64.size(); ++i)
      rmax = std::max(rmax, std::abs(r64[i])), rerr = std::max(rerr, std::abs(r64[i] - r32[i]));
    for (std::size_t i = 0; i < p64.size(); ++i)
      pmax = std::max(pmax, std::abs(p64[i])), perr = std::max(perr, std::abs(p64[i] - p32[i]));
    EXPECT_GT(rmax, 0.1);
    EXPECT_GT(pmax, 0.1);
    EXPECT_LT(rerr, 1e-6 * rmax * 64) << to_string(nf);
    EXPECT_LT(perr, 1e-6 * pmax * 8) << to_string(nf);
    EXPECT_GT(rerr + perr, 0.0);  // really float
  }
}

// Plain reference of the restriction at coarse (I, J, K) from the host's tables: the x part of
// each fine row, then y within each fine plane, then z, each summed in index order with the
// terms past a count repeating the last point (weight 0); products rounded on their own.
template <class T>
T reference_restrict(const Transfer& t, const std::vector<T>& fine, int I, int J, int K) {
  const TransferWeights<T>& w = weights_of(t, T());
  const int S = t.span, idx[3] = {I, J, K};
  auto at = [&](int a, int e) {  // fine index of axis a's e-th term
    const int* r = t.ridx[a] + 2 * idx[a];
    return r[0] + std::min(e, r[1] - 1);
  };
  T v = 0;
  for (int c = 0; c < S; ++c) {
    T p = 0;
    for (int b = 0; b < S; ++b) {
      T q = 0;
      for (int a = 0; a < S; ++a)
        q += w.rw[0][4 * I + a] * fine[t.fine.at(at(0, a), at(1, b), at(2, c))];
      p += w.rw[1][4 * J + b] * q;
    }
    v += w.rw[2][4 * K + c] * p;
  }
  return w.scale * v;
}

// The backend's restriction (CUDA: each fine plane's part computed once for the coarse planes
// that read it) is bitwise the plain reference, in double and float, with spans of 3 and 4
// and more coarse planes than one CUDA thread marches through.
TEST(Multigrid, RestrictionBitwiseThePlainReference) {
  auto host = make_host_kernels();
  HALO3D_REQUIRE_BACKEND(k, to_string(backend_under_test()));
  for (const auto& [nf, from_fine] :
       {std::pair{Int3{64, 34, 70}, true}, std::pair{Int3{33, 17, 41}, false},
        std::pair{Int3{20, 9, 50}, false}, std::pair{Int3{18, 40, 2}, true}}) {
    const Int3 nc = coarser_grid(nf, from_fine);
    const auto [f, c] = one_rank_boxes(nf, nc);
    const TransferOp ref = make_transfer(*host, f, c), op = make_transfer(*k, f, c);
    const Transfer& t = ref.t;
    const std::vector<double> fine_d = random_box(f, 17);
    const std::vector<float> fine_f(fine_d.begin(), fine_d.end());
    Buffer fd = upload(*k, fine_d), rd(*k, t.coarse.padded_size());
    FloatBuffer ff(*k, fine_f.size()), rf(*k, t.coarse.padded_size());
    k->copy(ff.data(), fine_f.data(), fine_f.size(), Lane::interior);
    k->restrict_to(op.t, fd.data(), rd.data());
    k->restrict_to(op.t, ff.data(), rf.data());
    const std::vector<double> got_d = download(*k, rd);
    std::vector<float> got_f(rf.size());
    k->copy(got_f.data(), rf.data(), got_f.size(), Lane::interior);
    k->synchronize();
    long bad = 0;
    for (int K = 0; K < nc[2]; ++K)
      for (int J = 0; J < nc[1]; ++J)
        for (int I = 0; I < nc[0]; ++I) {
          const std::size_t at = t.coarse.at(I, J, K);
          bad += got_d[at] != reference_restrict(t, fine_d, I, J, K);
          bad += got_f[at] != reference_restrict(t, fine_f, I, J, K);
        }
    EXPECT_EQ(bad, 0) << to_string(nf) << " span " << t.span;
    EXPECT_EQ(t.span, from_fine ? 4 : 3);
  }
}

TEST(Multigrid, ChebyshevSmootherPolynomial) {
  // On one eigenvalue lambda of D^{-1}A (diag 6), the steps map the error e to q(lambda) e:
  // |q| <= 1 on (0, b] (so the V-cycle stays positive definite), small on [a, b], and the
  // same for a symmetric use before and after.
  const double diag = 6, b = 1.9, a = b / 6;
  for (int count : {1, 2, 3, 4}) {
    const auto steps = mg_chebyshev_steps(a, b, count, diag);
    ASSERT_EQ(int(steps.size()), count);
    double worst_in = 0;
    for (double lambda = 1e-3; lambda <= b; lambda += 1e-3) {
      double x = 0, d = 0;
      const double A = lambda * diag, f = A;  // solution 1
      for (const auto& st : steps) {
        d = st[0] * d + st[1] * (f - A * x);
        x += d;
      }
      const double q = 1 - x;
      EXPECT_LE(std::abs(q), 1 + 1e-12) << "count " << count << " lambda " << lambda;
      if (lambda >= a) worst_in = std::max(worst_in, std::abs(q));
    }
    // Chebyshev's bound 1/T_m((b+a)/(b-a)).
    const double bound = 1 / std::cosh(count * std::acosh((b + a) / (b - a)));
    EXPECT_LE(worst_in, bound * (1 + 1e-9)) << count;
    if (count == 1) EXPECT_LT(worst_in, 0.72);
  }
}

SolveOptions mg_options_for(const Int3& grid) {
  SolveOptions o;
  o.backend = backend_under_test();
  o.output = "none";
  o.grid = grid;
  o.rhs = "random";
  o.seed = 7;
  return o;
}

TEST(Multigrid, VcycleIsSymmetricPositiveDefinite) {
  for (const Int3& grid : {Int3{23, 16, 31}, Int3{32, 32, 32}}) {
    for (const Int3& procs : process_grids(test::world_size())) {
      SolveOptions o = mg_options_for(grid);
      o.procs = procs;
      auto rt = make_runtime(runtime_options(o, Problem(o).stencil()), MPI_COMM_WORLD);
      Multigrid mg(*rt, mg_options(o));
      Kernels& k = *rt->kernels;
      const Layout l = rt->decomp.layout();
      Buffer x = upload(k, random_box(rt->decomp, 1)), y = upload(k, random_box(rt->decomp, 2));
      Buffer mx(k, l.padded_size()), my(k, l.padded_size());
      mg.apply(x.data(), mx.data());
      mg.apply(y.data(), my.data());
      MPI_Comm c = rt->cart.get();
      const double mxy = global_dot(k, l, mx.data(), y.data(), c);
      const double xmy = global_dot(k, l, x.data(), my.data(), c);
      EXPECT_NEAR(mxy, xmy, 1e-12 * std::abs(mxy))
          << to_string(grid) << " procs " << to_string(procs);
      EXPECT_GT(global_dot(k, l, mx.data(), x.data(), c), 0.0);
      EXPECT_GT(global_dot(k, l, my.data(), y.data(), c), 0.0);
    }
  }
}

// MG-PCG on every process grid of this job: at most 12 iterations to 1e-8 on a random
// right-hand side, and the same iterations and bitwise the same answer as one rank alone.
// Returns the iteration counts of one rank alone, per grid.
std::vector<long> check_bounded_and_invariant(const std::string& precision) {
  std::vector<long> iterations;
  for (const Int3& grid : {Int3{31, 31, 31}, Int3{32, 32, 32}, Int3{33, 20, 47}, Int3{48, 9, 17}}) {
    SolveOptions o = mg_options_for(grid);
    o.precision = test::choice<Precision>(precision);
    auto alone = test::solve_in_process(o, MPI_COMM_SELF);
    const std::vector<double> ref = alone.solution();
    EXPECT_TRUE(alone.result.converged);
    EXPECT_LE(alone.result.iterations, 12) << to_string(grid) << " " << precision;
    iterations.push_back(alone.result.iterations);
    const Decomposition& whole = alone.rt->decomp;
    for (const Int3& procs : process_grids(test::world_size())) {
      if (procs[0] > grid[0] || procs[1] > grid[1] || procs[2] > grid[2]) continue;
      o.procs = procs;
      auto run = test::solve_in_process(o, MPI_COMM_WORLD);
      EXPECT_EQ(run.result.iterations, alone.result.iterations) << to_string(procs);
      EXPECT_EQ(run.result.history, alone.result.history) << to_string(procs);
      const Decomposition& d = run.rt->decomp;
      const auto u = run.solution();
      EXPECT_EQ(test::mismatches_with_whole(d, u, whole, ref), 0)
          << to_string(grid) << " procs " << to_string(procs) << " " << precision;
    }
  }
  return iterations;
}

TEST(Multigrid, IterationsBoundedAndDecompositionInvariant) {
  check_bounded_and_invariant("double");
}

// --precision mixed: the V-cycle in float, CG in double. The same bound and invariance,
// and (measured: docs/PERFORMANCE.md) the iteration counts of double, at most one more.
TEST(Multigrid, MixedPrecisionBoundedAndDecompositionInvariant) {
  const auto mixed = check_bounded_and_invariant("mixed");
  const auto dbl = check_bounded_and_invariant("double");
  for (std::size_t g = 0; g < mixed.size(); ++g) EXPECT_LE(mixed[g], dbl[g] + 1) << g;
}

// A float V-cycle is the same map on every backend: on CUDA (the gpu label) the mixed
// solve gives bitwise the host's answer and residual history.
TEST(Multigrid, MixedPrecisionHostAndBackendBitwise) {
  SolveOptions o = mg_options_for({33, 20, 47});
  o.precision = Precision::mixed;
  if (o.backend == Backend::host) GTEST_SKIP() << "compares the backend under test with host";
  auto dev = test::solve_in_process(o, MPI_COMM_WORLD);
  o.backend = Backend::host;
  auto host = test::solve_in_process(o, MPI_COMM_WORLD);
  EXPECT_EQ(dev.result.history, host.result.history);
  EXPECT_TRUE(dev.solution() == host.solution());
}

// The float V-cycle is symmetric up to float rounding, and positive.
// One V-cycle on a random vector, on every process grid of this job, is bitwise the
// V-cycle of one rank alone, in both precisions, on odd and even grids, with the coarse
// levels kept on the process grid for as long as every rank owns a point of them
// (gather_points 0; the default gathers them sooner), so the distributed transfers run on
// small levels too. With two or more split axes the trilinear transfers read edge and corner
// ghosts, which a face-only exchange left stale (the iterates then depended on the process grid).
TEST(Multigrid, VcycleBitwiseOnEveryProcessGrid) {
  for (const Int3& grid : {Int3{45, 38, 52}, Int3{23, 19, 30}})
    for (Precision precision : {Precision::double_, Precision::mixed}) {
      SolveOptions o = mg_options_for(grid);
      o.precision = precision;
      MgOptions mo = mg_options(o);
      mo.gather_points = 0;
      auto v_cycle = [&](MPI_Comm comm, const Int3& procs, Decomposition& d) {
        o.procs = procs;
        auto rt = make_runtime(runtime_options(o, Problem(o).stencil()), comm);
        Multigrid mg(*rt, mo);
        Kernels& k = *rt->kernels;
        d = rt->decomp;
        Buffer x = upload(k, random_box(d, 5)), z(k, d.layout().padded_size());
        mg.apply(x.data(), z.data());
        return download(k, z);
      };
      Decomposition whole;
      const std::vector<double> ref = v_cycle(MPI_COMM_SELF, {1, 1, 1}, whole);
      for (const Int3& procs : process_grids(test::world_size())) {
        if (procs[0] > grid[0] || procs[1] > grid[1] || procs[2] > grid[2]) continue;
        Decomposition d;
        const std::vector<double> z = v_cycle(MPI_COMM_WORLD, procs, d);
        EXPECT_EQ(test::mismatches_with_whole(d, z, whole, ref), 0)
            << to_string(grid) << " procs " << to_string(procs) << " " << to_string(precision);
      }
    }
}

TEST(Multigrid, MixedVcycleNearlySymmetricPositive) {
  SolveOptions o = mg_options_for({23, 16, 31});
  o.precision = Precision::mixed;
  for (const Int3& procs : process_grids(test::world_size())) {
    o.procs = procs;
    auto rt = make_runtime(runtime_options(o, Problem(o).stencil()), MPI_COMM_WORLD);
    Multigrid mg(*rt, mg_options(o));
    Kernels& k = *rt->kernels;
    const Layout l = rt->decomp.layout();
    Buffer x = upload(k, random_box(rt->decomp, 1)), y = upload(k, random_box(rt->decomp, 2));
    Buffer mx(k, l.padded_size()), my(k, l.padded_size());
    mg.apply(x.data(), mx.data(), 1);
    DD xmx[kReductionSlots];
    k.read_slots(2, xmx);
    mg.apply(y.data(), my.data());
    MPI_Comm c = rt->cart.get();
    const double mxy = global_dot(k, l, mx.data(), y.data(), c);
    const double xmy = global_dot(k, l, x.data(), my.data(), c);
    const double mxx = global_dot(k, l, mx.data(), x.data(), c);
    EXPECT_NEAR(mxy, xmy, 1e-5 * mxx) << to_string(procs);
    EXPECT_GT(mxx, 0.0);
    // apply's slot is x.(M x), summed in double from the double z.
    double slot = 0;
    global_sums(c, &xmx[1], 1, &slot);
    EXPECT_EQ(slot, mxx);
  }
}

TEST(Multigrid, ExactDiscreteSolutionForModes) {
  SolveOptions o = mg_options_for({29, 24, 35});
  o.rhs = "modes";
  o.modes = {{1, 2, 1}, {5, 3, 7}};
  o.tol = 1e-12;
  auto run = test::solve_in_process(o, MPI_COMM_WORLD);
  EXPECT_TRUE(run.result.converged);
  EXPECT_LE(run.result.iterations, 15);
  const Problem p(o);
  const Decomposition& d = run.rt->decomp;
  const auto u = run.solution();
  const Layout l = d.layout();
  double err = 0;
  for (int k = 0; k < l.nz; ++k)
    for (int j = 0; j < l.ny; ++j)
      for (int i = 0; i < l.nx; ++i)
        err = std::max(
            err, std::abs(u[l.at(i, j, k)] -
                          p.exact_discrete(d.offset[0] + i, d.offset[1] + j, d.offset[2] + k)));
  MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_LT(err, 1e-10);
}

// r = 0 from the start (b = 0, as a zero source or a zero initial state gives) is an exact
// answer, not a breakdown: r.z = 0 must not be taken for an indefinite preconditioner.
TEST(Multigrid, ZeroRightHandSideIsConvergedNotABreakdown) {
  SolveOptions o = mg_options_for({12, 9, 7});
  auto rt = make_runtime(runtime_options(o, Problem(o).stencil()), MPI_COMM_WORLD);
  Multigrid mg(*rt, mg_options(o));
  Buffer zero(*rt->kernels, rt->decomp.layout().padded_size());
  auto cg = make_cg(*rt->op, rt->cart.get(), rt->timers, zero, 1e-8, &mg);
  ASSERT_NO_THROW(cg->start());
  Method::Step s{};
  ASSERT_NO_THROW(s = cg->step());
  EXPECT_TRUE(s.converged);
  EXPECT_EQ(s.relative_residual, 0.0);
}

// CG from x = 0 takes b s, which scaling b left in a scratch vector, as its first residual
// instead of computing b s - A 0: the same bits as the computed one, so the iterates are those
// of a start from an x that the caller was handed (solution(): the residual computed), with
// and without the V-cycle, on every process grid.
TEST(Multigrid, CgStartFromZeroGivesTheIteratesOfTheComputedResidual) {
  for (const Int3& procs : process_grids(test::world_size())) {
    for (const bool precondition : {true, false}) {
      SolveOptions o = mg_options_for({21, 18, 25});
      o.procs = procs;
      auto rt = make_runtime(runtime_options(o, Problem(o).stencil()), MPI_COMM_WORLD);
      Multigrid mg(*rt, mg_options(o));
      Kernels& k = *rt->kernels;
      // Values near 3: b's scale is 1/2, so x's scale changes too.
      std::vector<double> bh = random_box(rt->decomp, 9);
      for (double& v : bh) v *= 3.0;
      const Buffer b = upload(k, bh);
      std::vector<double> x[2], rel[2];
      for (int handed = 0; handed < 2; ++handed) {
        auto cg =
            make_cg(*rt->op, rt->cart.get(), rt->timers, b, 1e-30, precondition ? &mg : nullptr);
        if (handed) cg->solution();  // x may have been written: the residual is computed
        cg->start();
        for (int it = 0; it < 4; ++it) rel[handed].push_back(cg->step().relative_residual);
        x[handed] = download(k, cg->solution());
      }
      EXPECT_EQ(rel[0], rel[1]) << "procs " << procs[0] << procs[1] << procs[2];
      ASSERT_EQ(x[0].size(), x[1].size());
      EXPECT_EQ(std::memcmp(x[0].data(), x[1].data(), x[0].size() * sizeof(double)), 0)
          << "procs " << procs[0] << procs[1] << procs[2] << (precondition ? " MG-PCG" : " CG");
      EXPECT_GT(rel[0].back(), 0.0);  // four steps short of the answer: x is not exact
    }
  }
}

// The V-cycle seen through apply() only, so that CG takes the double z path: widened z,
// r.z with the widening, p = z + beta p from the double z.
class DoubleZ final : public Preconditioner {
 public:
  explicit DoubleZ(Multigrid& mg) : mg_(mg) {}
  std::string name() const override { return "mg"; }
  void apply(double* in, double* out, int slot, double* scratch) override {
    mg_.apply(in, out, slot, scratch);
  }
  double bytes_per_apply() const override { return mg_.bytes_per_apply(); }

 private:
  Multigrid& mg_;
};

// Mixed PCG keeps z in float (the update rounds r into the V-cycle's input, the next
// direction widens z as it reads it): the iterates of the double z path, bit for bit, on
// every process grid; from x = 0 and after a restart of the recurrence.
TEST(Multigrid, MixedPcgWithZInFloatGivesTheIteratesOfTheDoubleZ) {
  for (const Int3& procs : process_grids(test::world_size())) {
    SolveOptions o = mg_options_for({23, 17, 20});
    o.procs = procs;
    o.precision = Precision::mixed;
    auto rt = make_runtime(runtime_options(o, Problem(o).stencil()), MPI_COMM_WORLD);
    Multigrid mg(*rt, mg_options(o));
    DoubleZ through_apply(mg);
    ASSERT_NE(mg.float_input(), nullptr);
    ASSERT_EQ(through_apply.float_input(), nullptr);
    Kernels& k = *rt->kernels;
    const Buffer b = upload(k, random_box(rt->decomp, 13));
    std::vector<double> x[2], rel[2];
    for (int path = 0; path < 2; ++path) {
      Preconditioner* pc = path ? static_cast<Preconditioner*>(&through_apply) : &mg;
      auto cg = make_cg(*rt->op, rt->cart.get(), rt->timers, b, 1e-30, pc);
      cg->start();
      for (int it = 0; it < 3; ++it) rel[path].push_back(cg->step().relative_residual);
      // The true residual ends the recurrence: the next step starts over from it (r
      // rounded to float by the start's own conversion, not the update's).
      rel[path].push_back(cg->true_relative_residual());
      for (int it = 0; it < 2; ++it) rel[path].push_back(cg->step().relative_residual);
      x[path] = download(k, cg->solution());
    }
    const std::string where =
        "procs " + std::to_string(procs[0]) + std::to_string(procs[1]) + std::to_string(procs[2]);
    EXPECT_EQ(rel[0], rel[1]) << where;
    ASSERT_EQ(x[0].size(), x[1].size());
    EXPECT_EQ(std::memcmp(x[0].data(), x[1].data(), x[0].size() * sizeof(double)), 0) << where;
    EXPECT_GT(rel[0].back(), 0.0);  // short of the answer: x is not exact
    EXPECT_LT(rel[0].back(), rel[0].front());
  }
}

TEST(Multigrid, OtherSmootherAndFewerLevelsStillConverge) {
  SolveOptions o = mg_options_for({40, 33, 27});
  o.mg_smoother = Smoother::jacobi;
  auto jac = test::solve_in_process(o, MPI_COMM_WORLD);
  EXPECT_TRUE(jac.result.converged);
  EXPECT_LE(jac.result.iterations, 20);
  o.mg_smoother = Smoother::chebyshev;
  o.mg_levels = 2;  // a 26x21x13 coarsest level, solved by its Chebyshev polynomial
  auto two = test::solve_in_process(o, MPI_COMM_WORLD);
  EXPECT_TRUE(two.result.converged);
  EXPECT_LE(two.result.iterations, 25);
  o.precond = Precond::none;
  auto plain = test::solve_in_process(o, MPI_COMM_WORLD);
  EXPECT_GT(plain.result.iterations, 3 * jac.result.iterations);  // what MG is for
}

}  // namespace
}  // namespace halo3d
