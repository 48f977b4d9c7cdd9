// Multigrid on periodic axes (issue 25, steps 3-5): the periodic coarsening rule, the
// transfers on periodic axes against a plain reference (prolongation wraps; restriction is
// the scaled transpose of prolongation; constants interpolate to constants), the V-cycle
// bitwise on every process grid (distributed and gathered coarse levels, double and float,
// constant and variable k), symmetric and positive, and MG-PCG's iteration counts with
// periodic axes within one of the all-Dirichlet count on the same grid.
// Runs under mpirun with 1-4 ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <vector>

#include "multigrid.hpp"
#include "point_ops.hpp"
#include "problem.hpp"
#include "solvers.hpp"
#include "test_support.hpp"

namespace halo3d {
namespace {

using test::backend_under_test;
using test::process_grids;

TEST(PeriodicMultigrid, CoarseningHandlesEverySize) {
  for (int n = 1; n <= 2100; ++n) {
    const int c = mg_coarser(n, true);
    if (n == 1) {
      EXPECT_EQ(c, 1);
      continue;
    }
    ASSERT_GE(c, 1) << n;
    ASSERT_LT(c, n) << n;
    if (n % 2 == 0) {
      EXPECT_EQ(2 * c, n) << n;  // nested: coarse I is fine 2I+1
    } else {
      EXPECT_EQ(c % 2, 0) << n << " -> " << c << ": the next step should nest";
      EXPECT_LE(double(n) / c, 1.5) << n << " -> " << c;
      if (n >= 8) EXPECT_GE(double(n) / c, 1.3) << n << " -> " << c << " coarsens too little";
    }
  }
  const auto levels = mg_level_grids({64, 63, 64}, 0, {true, false, true});
  EXPECT_EQ(levels[1], (Int3{32, 31, 32}));
  EXPECT_EQ(levels[2], (Int3{16, 15, 16}));
  EXPECT_EQ(levels.back(), (Int3{4, 3, 4}));  // at most kMgDensePoints: solved exactly
  const auto odd = mg_level_grids({9, 9, 9}, 0, {true, true, true});
  EXPECT_EQ(odd, (std::vector<Int3>{{9, 9, 9}, {6, 6, 6}, {3, 3, 3}}));
  // z's 18 points are 3.5 times x's spacing: z waits (semi-coarsening with h = L/N).
  EXPECT_EQ(mg_level_grids({64, 63, 18}, 0, {true, false, true})[1], (Int3{32, 31, 18}));
  // The spacing h = 1/N on a periodic axis: 64 periodic points have the spacing of 63
  // Dirichlet ones, so the two axes coarsen together.
  const Stencil s = Stencil::laplacian(1.0 / 64, 1.0 / 64, 1.0 / 64);
  EXPECT_EQ(mg_level_grids({64, 63, 63}, stencil_spacing(s), 0, {true, false, false}),
            mg_level_grids({64, 63, 63}, 0, {true, false, false}));
}

// A whole box's ghosts on its periodic axes set to the points they wrap to (edges and
// corners too: axis by axis over the other axes' ghosts); other ghosts 0.
void wrap_ghosts(const Layout& l, const Periodic& p, std::vector<double>& v) {
  const int n[3] = {l.nx, l.ny, l.nz};
  for (int a = 0; a < 3; ++a)
    for (int z = -1; z <= l.nz; ++z)
      for (int y = -1; y <= l.ny; ++y)
        for (int x = -1; x <= l.nx; ++x) {
          int idx[3] = {x, y, z};
          if (idx[a] >= 0 && idx[a] < n[a]) continue;
          if (!p[a]) {
            v[l.at(x, y, z)] = 0;
            continue;
          }
          idx[a] = (idx[a] + n[a]) % n[a];
          v[l.at(x, y, z)] = v[l.at(idx[0], idx[1], idx[2])];
        }
}

// Plain reference of 1D linear interpolation from positions in double: fine point i at
// (i+1)/mf, coarse I at (I+1)/mc; outside the coarse points, Dirichlet zeros, or the coarse
// points wrapped on a periodic axis.
double reference_interp(const std::vector<double>& coarse, int i, int nf, int nc, bool periodic) {
  const int mf = periodic ? nf : nf + 1, mc = periodic ? nc : nc + 1;
  const double x = double(i + 1) / mf;
  auto at = [&](int I) {
    if (periodic) return coarse[std::size_t((I + nc) % nc)];
    return I >= 0 && I < nc ? coarse[std::size_t(I)] : 0.0;
  };
  for (int I = -1; I < nc; ++I) {
    const double x0 = double(I + 1) / mc, x1 = double(I + 2) / mc;
    if (x >= x0 - 1e-15 && x <= x1 + 1e-15)
      return at(I) + (x - x0) / (x1 - x0) * (at(I + 1) - at(I));
  }
  return NAN;
}

double interior_dot(const Layout& l, const std::vector<double>& x, const std::vector<double>& y) {
  double s = 0;
  for (int k = 0; k < l.nz; ++k)
    for (int j = 0; j < l.ny; ++j)
      for (int i = 0; i < l.nx; ++i) s += x[l.at(i, j, k)] * y[l.at(i, j, k)];
  return s;
}

// Prolongation of a coarse field varying along axis a only, against the reference.
void check_prolongation_along(Kernels& k, const Transfer& t, const Periodic& per, int a) {
  const int nf[3] = {t.nf[0], t.nf[1], t.nf[2]}, nc[3] = {t.nc[0], t.nc[1], t.nc[2]};
  std::vector<double> line(std::size_t(nc[a]));
  for (int I = 0; I < nc[a]; ++I) line[std::size_t(I)] = random_value(a + 20, std::uint64_t(I));
  std::vector<double> h(t.coarse.padded_size(), 0.0);
  for (int kk = 0; kk < nc[2]; ++kk)
    for (int j = 0; j < nc[1]; ++j)
      for (int i = 0; i < nc[0]; ++i) h[t.coarse.at(i, j, kk)] = line[a == 0 ? i : a == 1 ? j : kk];
  wrap_ghosts(t.coarse, per, h);
  Buffer e = upload(k, h), out(k, t.fine.padded_size());
  k.prolong_add(t, e.data(), out.data());
  const auto got = download(k, out);
  for (int kk = 0; kk < nf[2]; ++kk)
    for (int j = 0; j < nf[1]; ++j)
      for (int i = 0; i < nf[0]; ++i) {
        double other = 1;  // the other axes interpolate a constant
        const int p[3] = {i, j, kk};
        for (int b = 0; b < 3; ++b)
          if (b != a)
            other *= reference_interp(std::vector<double>(std::size_t(nc[b]), 1.0), p[b], nf[b],
                                      nc[b], per[b]);
        const double want = other * reference_interp(line, p[a], nf[a], nc[a], per[a]);
        ASSERT_NEAR(got[t.fine.at(i, j, kk)], want, 1e-14)
            << "axis " << a << " at " << i << "," << j << "," << kk;
      }
}

TEST(PeriodicMultigrid, TransfersAgainstReference_host) {
  auto k = make_host_kernels();
  for (const Periodic& per :
       {Periodic{true, false, true}, Periodic{true, true, true}, Periodic{false, true, false}})
    for (const Int3& nf :
         {Int3{8, 9, 7}, Int3{12, 5, 16}, Int3{3, 2, 9}, Int3{2, 13, 6}, Int3{8, 6, 4}}) {
      const Int3 nc{mg_coarser(nf[0], per[0]), mg_coarser(nf[1], per[1]),
                    mg_coarser(nf[2], per[2])};
      const Decomposition f = Decomposition::whole(nf, per), c = Decomposition::whole(nc, per);
      const TransferOp op = make_transfer(*k, f, c);
      const Transfer& t = op.t;
      double scale = 1;
      for (int a = 0; a < 3; ++a)
        scale *= double(per[a] ? nc[a] : nc[a] + 1) / (per[a] ? nf[a] : nf[a] + 1);
      EXPECT_EQ(t.wd.scale, scale);
      // Restriction is scale times the transpose of prolongation, the wrap included.
      std::vector<double> fh = random_box(f, 11), ch = random_box(c, 12);
      wrap_ghosts(t.fine, per, fh);
      wrap_ghosts(t.coarse, per, ch);
      Buffer fine = upload(*k, fh), coarse = upload(*k, ch);
      Buffer rf(*k, t.coarse.padded_size()), pe(*k, t.fine.padded_size());
      k->restrict_to(t, fine.data(), rf.data());
      k->prolong_add(t, coarse.data(), pe.data());
      const double lhs = interior_dot(t.coarse, download(*k, rf), ch);
      const double rhs = t.wd.scale * interior_dot(t.fine, fh, download(*k, pe));
      EXPECT_NEAR(lhs, rhs, 1e-13 * std::abs(lhs)) << to_string(nf);
      for (int a = 0; a < 3; ++a) check_prolongation_along(*k, t, per, a);
      // Constants: P 1 = 1 on every periodic axis; R 1 = 1 where the axes nest (even sizes:
      // each coarse point's weights sum to 2 = mf/mc; non-nested ones only on average).
      std::vector<double> ones_f(t.fine.padded_size(), 1.0), ones_c(t.coarse.padded_size(), 1.0);
      wrap_ghosts(t.fine, per, ones_f);
      wrap_ghosts(t.coarse, per, ones_c);
      Buffer of = upload(*k, ones_f), oc = upload(*k, ones_c);
      Buffer ro(*k, t.coarse.padded_size()), po(*k, t.fine.padded_size());
      k->restrict_to(t, of.data(), ro.data());
      k->prolong_add(t, oc.data(), po.data());
      const auto r1 = download(*k, ro), p1 = download(*k, po);
      const bool all = per[0] && per[1] && per[2];
      if (all)
        for (int kk = 0; kk < nf[2]; ++kk)
          for (int j = 0; j < nf[1]; ++j)
            for (int i = 0; i < nf[0]; ++i)
              ASSERT_NEAR(p1[t.fine.at(i, j, kk)], 1.0, 1e-15) << to_string(nf);
      if (all && nf[0] % 2 == 0 && nf[1] % 2 == 0 && nf[2] % 2 == 0)
        for (int kk = 0; kk < nc[2]; ++kk)
          for (int j = 0; j < nc[1]; ++j)
            for (int i = 0; i < nc[0]; ++i)
              ASSERT_EQ(r1[t.coarse.at(i, j, kk)], 1.0) << to_string(nf);
    }
}

SolveOptions periodic_options(const Int3& grid, const Periodic& per) {
  SolveOptions o;
  o.backend = backend_under_test();
  o.output = "none";
  o.grid = grid;
  o.bc = periodic_bc(per);
  o.rhs = "random";
  o.seed = 7;
  return o;
}

// One V-cycle on a random vector on every process grid of this job: bitwise the V-cycle of
// one rank alone; coarse levels distributed as long as every rank owns a point
// (gather_points 0) or gathered early (the default), periodic axes of odd and even sizes,
// double and float, k = 1 and a variable k (whose coarse levels' ghosts wrap).
TEST(PeriodicMultigrid, VcycleBitwiseOnEveryProcessGrid) {
  const Periodic per{true, false, true};
  for (const Int3& grid : {Int3{24, 19, 27}, Int3{33, 20, 14}})
    for (const char* k : {"1", "expr:1+0.9*sin(2*_pi*x)*cos(3*_pi*y)*cos(2*_pi*z)"})
      for (Precision precision : {Precision::double_, Precision::mixed})
        for (long long gather : {0LL, 1000LL}) {
          SolveOptions o = periodic_options(grid, per);
          o.precision = precision;
          o.coefficient = k;
          MgOptions mo = mg_options(o);
          mo.gather_points = gather;
          auto v_cycle = [&](MPI_Comm comm, const Int3& procs, Decomposition& d) {
            o.procs = procs;
            auto run = std::make_unique<SolveSession>(make_plan(o).problem, make_plan(o).parallel,
                                                      make_plan(o).method, comm);
            Runtime& rt = run->runtime();
            Multigrid mg(rt, mo);
            d = rt.decomp;
            Buffer x = upload(*rt.kernels, random_box(d, 5)),
                   z(*rt.kernels, d.layout().padded_size());
            mg.apply(x.data(), z.data());
            return download(*rt.kernels, z);
          };
          Decomposition whole;
          const std::vector<double> ref = v_cycle(MPI_COMM_SELF, {1, 1, 1}, whole);
          for (const Int3& procs : process_grids(test::world_size())) {
            Decomposition d;
            const std::vector<double> z = v_cycle(MPI_COMM_WORLD, procs, d);
            EXPECT_EQ(test::mismatches_with_whole(d, z, whole, ref), 0)
                << to_string(grid) << " procs " << to_string(procs) << " k " << k << " "
                << to_string(precision) << " gather " << gather;
          }
        }
}

// Symmetric and positive on every process grid, k = 1 and a variable k: a face between
// points N-1 and 0 with different weights on its two sides (k's ghosts not wrapped, on the
// fine level or a coarse one) would make it unsymmetric.
TEST(PeriodicMultigrid, VcycleIsSymmetricPositiveDefinite) {
  for (const Periodic& per : {Periodic{true, false, false}, Periodic{false, true, true}})
    for (const char* kappa : {"1", "expr:exp(2*sin(2*_pi*x)*cos(4*_pi*z))*(1+y)"})
      for (const Int3& procs : process_grids(test::world_size())) {
        SolveOptions o = periodic_options({23, 16, 30}, per);
        o.procs = procs;
        o.coefficient = kappa;
        const RunPlan plan = make_plan(o);
        SolveSession run(plan.problem, plan.parallel, plan.method, MPI_COMM_WORLD);
        Runtime& rt = run.runtime();
        MgOptions mo = mg_options(o);
        mo.gather_points = 0;
        Multigrid mg(rt, mo);
        Kernels& k = *rt.kernels;
        const Layout l = rt.decomp.layout();
        Buffer x = upload(k, random_box(rt.decomp, 1)), y = upload(k, random_box(rt.decomp, 2));
        Buffer mx(k, l.padded_size()), my(k, l.padded_size());
        mg.apply(x.data(), mx.data());
        mg.apply(y.data(), my.data());
        MPI_Comm c = rt.cart.get();
        const double mxy = global_dot(k, l, mx.data(), y.data(), c);
        const double xmy = global_dot(k, l, x.data(), my.data(), c);
        EXPECT_NEAR(mxy, xmy, 1e-12 * std::abs(mxy)) << to_string(procs) << " k " << kappa;
        EXPECT_GT(global_dot(k, l, mx.data(), x.data(), c), 0.0);
      }
}

// Issue 25's target: periodic axes within one iteration of the all-Dirichlet count on the
// same grid (MG-PCG to 1e-8 on a random right-hand side), and the same iterations and
// history on every process grid as one rank alone; --fmg and mixed as well; every axis
// periodic with a shift, and without one (singular: b's mean removed, z projected to zero
// sum), compared with all-Dirichlet and the same shift.
TEST(PeriodicMultigrid, IterationsWithinOneOfDirichlet) {
  struct Case {
    Int3 grid;
    Periodic per;
    double shift;
  };
  for (const Case& c :
       {Case{{32, 32, 32}, {true, false, false}, 0}, Case{{31, 31, 31}, {true, true, false}, 0},
        Case{{33, 20, 47}, {false, true, true}, 0}, Case{{24, 24, 24}, {true, true, true}, 1},
        Case{{32, 32, 32}, {true, true, true}, 0}, Case{{33, 20, 47}, {true, true, true}, 0}})
    for (const char* variant : {"double", "mixed", "fmg"}) {
      SolveOptions o = periodic_options(c.grid, {});
      o.shift = c.shift;
      o.precision = test::choice<Precision>(variant == std::string("mixed") ? "mixed" : "double");
      o.fmg = variant == std::string("fmg");
      const auto dirichlet = test::solve_in_process(o, MPI_COMM_WORLD);
      o.bc = periodic_bc(c.per);
      const auto alone = test::solve_in_process(o, MPI_COMM_SELF);
      EXPECT_TRUE(alone.result.converged);
      EXPECT_LE(alone.result.iterations, dirichlet.result.iterations + 1)
          << to_string(c.grid) << " " << variant;
      if (test::world_rank() == 0)
        std::printf("iterations %s %s: periodic %s %ld, dirichlet %ld\n", to_string(c.grid).c_str(),
                    variant, bc_text(periodic_bc(c.per)).c_str(), alone.result.iterations,
                    dirichlet.result.iterations);
      for (const Int3& procs : process_grids(test::world_size())) {
        o.procs = procs;
        const auto run = test::solve_in_process(o, MPI_COMM_WORLD);
        EXPECT_EQ(run.result.history, alone.result.history) << to_string(procs) << " " << variant;
      }
    }
}

}  // namespace
}  // namespace halo3d
