// Neumann faces (issue 25, step 8: node-centred axes, dual-cell finite volumes divided by the
// full cell volume). A plain reference of the discrete operator and right-hand side, written
// here from the definition (a loop over the whole grid: the face weights' harmonic means,
// 0 beyond a Neumann face, the area fractions 1/2 and 1/4 of faces in Neumann planes, the
// shift times the control volume V_p; b = V_p f + the fluxes' area g/h + the lifted
// Dirichlet values), against halo3d's on every process grid of this job: the operator and
// the right-hand side to rounding, the answer to b = A u* to rounding with CG, MG-PCG (double,
// mixed, --fmg, distributed coarse levels), bitwise the same answer on every process grid as
// on one rank alone. Neumann on 1, 2 and 3 axes, mixed with Dirichlet and periodic ones,
// k = 1 and a variable k, no shift, a constant and a variable one (the singular all-Neumann
// case: the V-weighted zero-mean answer; no Dirichlet face with a variable shift: nonsingular,
// every axis periodic too). MG-PCG's iterations within one of all-Dirichlet's
// on the same grid, and the node-centred transfers' nesting.
// Runs under mpirun with 1-4 ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "coefficient.hpp"
#include "coefficients.hpp"
#include "host_copy.hpp"
#include "multigrid.hpp"
#include "problem.hpp"
#include "test_support.hpp"

namespace halo3d {
namespace {

using test::backend_under_test;
using test::process_grids;

struct Case {
  const char* bc;
  bool variable_k;
  const char* shift;  // a constant, or expr:
};

// The reference's k and sigma: the formulas the options give halo3d, in C++.
const char* kK = "expr:1+0.5*sin(3*x+1)*cos(2*y)*cos(z+0.5)";
double k_ref(double x, double y, double z) {
  return 1 + 0.5 * std::sin(3 * x + 1) * std::cos(2 * y) * std::cos(z + 0.5);
}
const char* kSigma = "expr:0.5+0.4*cos(x*y*z+1)";
double sigma_ref(double x, double y, double z) { return 0.5 + 0.4 * std::cos(x * y * z + 1); }
const char* kSource = "expr:sin(x+2*y)*cos(3*z)+x";
double f_ref(double x, double y, double z) { return std::sin(x + 2 * y) * std::cos(3 * z) + x; }
// --boundary per face: Dirichlet values or outward fluxes.
const char* kBoundary = "x0=0.3,x1=-0.7,y0=1.1,y1=0.2,z0=-0.4,z1=0.9";
const double kFaceValue[6] = {0.3, -0.7, 1.1, 0.2, -0.4, 0.9};

// The whole grid's discretisation, from the definition.
struct Reference {
  Int3 n;
  FaceKinds bc;
  bool variable_k;
  bool shift_field;
  double shift;
  double h[3];
  int first[3], m[3];

  Reference(const Int3& grid, const Case& c)
      : n(grid), bc(parse_bc(c.bc)), variable_k(c.variable_k) {
    const std::string s = c.shift;
    shift_field = s.rfind("expr:", 0) == 0;
    shift = shift_field ? 0.0 : std::stod(s);
    for (int a = 0; a < 3; ++a) {
      const bool per = kind(a, 0) == Bc::periodic, lo = kind(a, 0) == Bc::neumann,
                 hi = kind(a, 1) == Bc::neumann;
      first[a] = per || lo ? 0 : 1;
      m[a] = per ? n[a] : n[a] - 1 + (lo ? 0 : 1) + (hi ? 0 : 1);
      h[a] = 1.0 / m[a];
    }
  }
  Bc kind(int a, int side) const { return bc[std::size_t(2 * a + side)]; }
  // Position of global index g (ghosts too) on axis a: a ghost beyond a Neumann face sits on
  // its boundary node, a periodic one where it wraps to.
  double pos(int a, int g) const {
    if (kind(a, 0) == Bc::periodic) return ((g + n[a]) % n[a]) * h[a];
    if (g < 0 && kind(a, 0) == Bc::neumann) g = 0;
    if (g >= n[a] && kind(a, 1) == Bc::neumann) g = n[a] - 1;
    return (g + first[a]) * h[a];
  }
  bool in_plane(int a, int g) const {
    return (kind(a, 0) == Bc::neumann && g == 0) || (kind(a, 1) == Bc::neumann && g == n[a] - 1);
  }
  double k_at(const int g[3]) const {
    return variable_k ? k_ref(pos(0, g[0]), pos(1, g[1]), pos(2, g[2])) : 1.0;
  }
  double volume(const int g[3]) const {
    double v = 1;
    for (int a = 0; a < 3; ++a) v *= in_plane(a, g[a]) ? 0.5 : 1.0;
    return v;
  }
  double area(int a, const int g[3]) const {
    double v = 1;
    for (int b = 0; b < 3; ++b)
      if (b != a && in_plane(b, g[b])) v *= 0.5;
    return v;
  }
  long index(const int g[3]) const { return g[0] + long(n[0]) * (g[1] + long(n[1]) * g[2]); }
  double sigma_at(const int g[3]) const {
    const double s = shift_field ? sigma_ref(pos(0, g[0]), pos(1, g[1]), pos(2, g[2])) : shift;
    return s * volume(g);
  }

  // Calls fn(a, side, q, neighbour kind) for each face of point g: q the neighbour's global
  // index (wrapped on a periodic axis, outside the grid beyond a Dirichlet or Neumann face).
  template <class Fn>
  void faces(const int g[3], Fn fn) const {
    for (int a = 0; a < 3; ++a)
      for (int side = 0; side < 2; ++side) {
        int q[3] = {g[0], g[1], g[2]};
        q[a] += side ? 1 : -1;
        const bool outside = q[a] < 0 || q[a] >= n[a];
        if (outside && kind(a, side) == Bc::periodic) q[a] = (q[a] + n[a]) % n[a];
        fn(a, side, q, outside ? kind(a, side) : Bc::periodic);
      }
  }
  double weight(int a, const int g[3], const int q[3]) const {
    const double kp = k_at(g), kq = k_at(q);
    return 2 * kp * kq / (kp + kq) / (h[a] * h[a]) * area(a, g);
  }

  // (A u) over the grid (u: n0 n1 n2 values, x fastest; Dirichlet ghosts 0).
  std::vector<double> apply(const std::vector<double>& u) const {
    std::vector<double> out(u.size());
    for_points([&](const int g[3]) {
      const double up = u[std::size_t(index(g))];
      double v = sigma_at(g) * up;
      faces(g, [&](int a, int, const int q[3], Bc beyond) {
        if (beyond == Bc::neumann) return;
        const double uq = beyond == Bc::dirichlet ? 0.0 : u[std::size_t(index(q))];
        v += weight(a, g, q) * (up - uq);
      });
      out[std::size_t(index(g))] = v;
    });
    return out;
  }
  // b = V f + the Neumann fluxes' area g / h + the Dirichlet values' w area g.
  std::vector<double> rhs() const {
    std::vector<double> b(std::size_t(n[0]) * n[1] * n[2]);
    for_points([&](const int g[3]) {
      double v = volume(g) * f_ref(pos(0, g[0]), pos(1, g[1]), pos(2, g[2]));
      faces(g, [&](int a, int side, const int q[3], Bc beyond) {
        const double value = kFaceValue[2 * a + side];
        if (beyond == Bc::neumann) v += area(a, g) * value / h[a];
        if (beyond == Bc::dirichlet) v += weight(a, g, q) * value;
      });
      b[std::size_t(index(g))] = v;
    });
    return b;
  }
  template <class Fn>
  void for_points(Fn fn) const {
    for (int z = 0; z < n[2]; ++z)
      for (int y = 0; y < n[1]; ++y)
        for (int x = 0; x < n[0]; ++x) {
          const int g[3] = {x, y, z};
          fn(g);
        }
  }
};

// How the answer is solved: CG alone, or MG-PCG (double, mixed, --fmg, coarse levels kept
// distributed).
enum class Variant { cg, mg, mixed, fmg, distributed };
const Variant kVariants[] = {Variant::cg, Variant::mg, Variant::mixed, Variant::fmg,
                             Variant::distributed};
const char* name(Variant v) {
  const char* n[] = {"cg", "mg", "mixed", "fmg", "distributed"};
  return n[int(v)];
}

SolveOptions neumann_options(const Int3& grid, const Case& c, const Int3& procs,
                             Variant v = Variant::cg) {
  SolveOptions o;
  o.backend = backend_under_test();
  o.output = "none";
  o.grid = grid;
  o.procs = procs;
  o.bc = parse_bc(c.bc);
  o.coefficient = c.variable_k ? kK : "1";
  set_shift(o, c.shift);
  o.solver = SolverKind::cg;
  o.precond = v == Variant::cg ? Precond::none : Precond::mg;
  if (v == Variant::mixed) o.precision = Precision::mixed;
  o.fmg = v == Variant::fmg;
  if (v == Variant::distributed) o.mg_gather = 0;
  o.rhs = kSource;
  o.boundary = kBoundary;
  o.tol = 1e-13;
  o.max_iters = 2000;
  return o;
}

std::unique_ptr<SolveSession> session_of(const SolveOptions& o, MPI_Comm comm) {
  const RunPlan plan = make_plan(o);
  return std::make_unique<SolveSession>(plan.problem, plan.parallel, plan.method, comm);
}

// The grid's values at this rank's box (x fastest over the whole grid) as a padded array.
std::vector<double> local_of(const Decomposition& d, const std::vector<double>& global) {
  const Layout l = d.layout();
  std::vector<double> out(l.padded_size(), 0.0);
  for (int z = 0; z < l.nz; ++z)
    for (int y = 0; y < l.ny; ++y)
      for (int x = 0; x < l.nx; ++x)
        out[std::size_t(l.at(x, y, z))] = global[std::size_t(
            d.offset[0] + x +
            long(d.grid[0]) * (d.offset[1] + y + long(d.grid[1]) * (d.offset[2] + z)))];
  return out;
}

// The largest |a - b| at this rank's points relative to the largest |b| over the grid.
double relative_difference(const Decomposition& d, const std::vector<double>& a,
                           const std::vector<double>& b) {
  const Layout l = d.layout();
  double diff = 0, scale = 0;
  for (int z = 0; z < l.nz; ++z)
    for (int y = 0; y < l.ny; ++y)
      for (int x = 0; x < l.nx; ++x) {
        const std::size_t i = std::size_t(l.at(x, y, z));
        diff = std::max(diff, std::abs(a[i] - b[i]));
        scale = std::max(scale, std::abs(b[i]));
      }
  double v[2] = {diff, scale};
  MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return v[0] / v[1];
}

const Case kCases[] = {
    {"x0=neumann", true, "0.7"},
    {"x=neumann,y1=neumann", false, kSigma},
    {"x=neumann,y=neumann,z=neumann", true, "0"},
    {"x=neumann,y=periodic,z0=neumann", true, "1.3"},
    {"x=periodic,y0=neumann,z1=neumann", false, "0"},
    {"x=periodic,y=periodic,z=neumann", true, "0"},
    // No Dirichlet face with a variable shift: nonsingular (sigma > 0), not the singular case.
    {"x=neumann,y=neumann,z=neumann", true, kSigma},
    {"x=periodic,y=neumann,z=periodic", false, kSigma},
    {"x=periodic,y=periodic,z=periodic", true, kSigma},
};
const Int3 kGrid{9, 7, 8};

std::vector<double> random_global(const Int3& n, std::uint64_t seed) {
  std::vector<double> u(std::size_t(n[0]) * n[1] * n[2]);
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = random_value(seed, i);
  return u;
}

TEST(Neumann, OperatorAndRightHandSideMatchTheReference) {
  for (const Case& c : kCases) {
    const Reference ref(kGrid, c);
    const std::vector<double> u = random_global(kGrid, 11), au = ref.apply(u), b = ref.rhs();
    for (const Int3& procs : process_grids(test::world_size())) {
      auto s = session_of(neumann_options(kGrid, c, procs), MPI_COMM_WORLD);
      const Decomposition& d = s->decomp();
      Kernels& k = s->kernels();
      Buffer ud = upload(k, local_of(d, u)), out(k, d.layout().padded_size());
      s->runtime().op->apply(ud.data(), out.data());
      EXPECT_LT(relative_difference(d, download(k, out), local_of(d, au)), 1e-13)
          << c.bc << " procs " << to_string(procs);
      s->fill_source();
      EXPECT_LT(relative_difference(d, download(k, s->source()), local_of(d, b)), 1e-13)
          << c.bc << " procs " << to_string(procs);
    }
  }
}

TEST(Neumann, SolvesTheReferenceProblemBitwiseOnEveryProcessGrid) {
  for (const Variant v : kVariants)
    for (const Case& c : kCases) {
      const Reference ref(kGrid, c);
      std::vector<double> u = random_global(kGrid, 23);
      const std::vector<double> b = ref.apply(u);
      // The singular case's answer: the one of zero V-weighted mean.
      if (no_dirichlet_face(neumann_options(kGrid, c, {1, 1, 1})) && ref.shift == 0 &&
          !ref.shift_field) {
        double vu = 0, vol = 0;
        ref.for_points([&](const int g[3]) {
          vu += ref.volume(g) * u[std::size_t(ref.index(g))];
          vol += ref.volume(g);
        });
        for (double& x : u) x -= vu / vol;
      }
      const auto solve = [&](MPI_Comm comm, const Int3& procs, Decomposition& d) {
        auto s = session_of(neumann_options(kGrid, c, procs, v), comm);
        d = s->decomp();
        s->set_source(upload(s->kernels(), local_of(d, b)));
        s->build_method();
        s->method().start();
        DriveOptions dro;
        dro.max_iters = 2000;
        const DriveResult r = s->drive(dro);
        EXPECT_TRUE(r.converged) << c.bc << " " << name(v);
        return s->solution();
      };
      Decomposition whole;
      const std::vector<double> alone = solve(MPI_COMM_SELF, {1, 1, 1}, whole);
      for (const Int3& procs : process_grids(test::world_size())) {
        Decomposition d;
        const std::vector<double> x = solve(MPI_COMM_WORLD, procs, d);
        EXPECT_LT(relative_difference(d, x, local_of(d, u)), 1e-9)
            << c.bc << " " << name(v) << " " << to_string(procs);
        EXPECT_EQ(test::mismatches_with_whole(d, x, whole, alone), 0)
            << c.bc << " " << name(v) << " procs " << to_string(procs);
      }
    }
}

// The node-centred coarsening: between two Neumann faces an even number of intervals halves
// with the boundary nodes kept (coarse I at fine 2I), an odd one takes a ratio <= 1.5 to an
// even count; one interval stops. Interpolation is exact at the nested points and keeps
// constants (P 1 = 1), and each coarse point's restriction span stays within 3 fine points.
TEST(Neumann, NodeCentredCoarsening) {
  EXPECT_EQ(mg_coarser(65, false, true, true), 33);
  EXPECT_EQ(mg_coarser(64, false, true, false), 32);  // N intervals: 64 -> 32
  EXPECT_EQ(mg_coarser(64, false, false, true), 32);
  EXPECT_EQ(mg_coarser(2, false, true, true), 2);  // one interval: no coarser grid
  for (int n = 2; n <= 300; ++n)
    for (int kinds = 1; kinds <= 3; ++kinds) {
      const bool lo = kinds & 1, hi = kinds & 2;
      const int c = mg_coarser(n, false, lo, hi);
      const int mf = ops::axis_intervals(n, false, lo, hi),
                mc = ops::axis_intervals(c, false, lo, hi);
      if (mf <= 1) {
        EXPECT_EQ(c, n);
        continue;
      }
      ASSERT_LT(mc, mf) << n;
      if (mf % 2 == 0)
        EXPECT_EQ(2 * mc, mf) << n;
      else
        EXPECT_LE(double(mf) / mc, 1.5) << n;
      const int at0 = lo ? 0 : 1;
      for (int i = 0; i < n; ++i) {
        double sum = 0;
        for (int I = 0; I < c; ++I) sum += ops::interp_weight(i, I, mf, mc, at0);
        // P 1 = 1 (t exact), but next to a Dirichlet end, whose zero takes the rest.
        if (kinds == 3) ASSERT_EQ(sum, 1.0) << n << " fine " << i;
        ASSERT_LE(sum, 1.0) << n << " " << kinds << " fine " << i;
        if (2 * mc == mf && (i + at0) % 2 == 0)
          ASSERT_EQ(ops::interp_weight(i, (i + at0) / 2 - at0, mf, mc, at0), 1.0);
      }
      for (int I = 0; I < c; ++I) {
        int first, last;
        ops::restrict_span(I, n, mf, mc, first, last, at0, true);
        ASSERT_GE(first, 0);
        ASSERT_LE(last, n - 1);
        ASSERT_LE(last - first, 2) << n << " coarse " << I;
        for (int i = 0; i < n; ++i)  // the span holds every fine point that uses I
          if (ops::interp_weight(i, I, mf, mc, at0) != 0) ASSERT_TRUE(i >= first && i <= last);
      }
    }
}

// MG-PCG iterations to 1e-8 on a random right-hand side within one of all-Dirichlet's on the
// same grid (k = 1), Neumann on 1-3 axes with periodic and Dirichlet ones, odd and even N, on
// this job's ranks; the same count on every process grid.
TEST(Neumann, IterationsWithinOneOfDirichlet) {
  for (const char* bc : {"x=neumann", "x0=neumann,y1=neumann", "x=neumann,y=neumann,z=neumann",
                         "x=periodic,y=neumann,z0=neumann"})
    for (const Int3& grid : {Int3{33, 33, 33}, Int3{32, 31, 34}})
      for (const bool mixed : {false, true}) {
        SolveOptions o;
        o.backend = backend_under_test();
        o.output = "none";
        o.grid = grid;
        o.rhs = "random";
        o.tol = 1e-8;
        if (mixed) o.precision = Precision::mixed;
        const auto dirichlet = test::solve_in_process(o, MPI_COMM_WORLD);
        o.bc = parse_bc(bc);
        const auto neumann = test::solve_in_process(o, MPI_COMM_WORLD);
        EXPECT_TRUE(neumann.result.converged) << bc;
        EXPECT_LE(neumann.result.iterations, dirichlet.result.iterations + 1)
            << bc << " " << to_string(grid) << (mixed ? " mixed" : "");
        if (test::world_rank() == 0)
          std::printf("%-32s %-9s %s: %ld iterations (all-Dirichlet %ld)\n", bc,
                      to_string(grid).c_str(), mixed ? "mixed " : "double",
                      long(neumann.result.iterations), long(dirichlet.result.iterations));
      }
}

// Explicit heat's limit with Neumann faces: max_p d_p / V_p (the diagonal of M^{-1} A, M =
// diag V_p: Gershgorin), on random lognormal k and a random point shift, Neumann on 1-3 axes,
// against the reference's rows written from the definition (relative 1e-14: the sums' order
// differs), by the backend from the level's weights and by --dry-run's host path from k, the
// same bits on every process grid. A block of k = 1e3 against the x0 face puts the maximum on
// a boundary node, where d_p alone would be below an interior point's: V_p is not ignored.
TEST(Neumann, ExplicitHeatLimitIsTheLargestDiagonalOverTheVolume) {
  for (const char* bc : {"x0=neumann", "x=neumann,y1=neumann", "x=neumann,y=periodic,z0=neumann",
                         "x=neumann,y=neumann,z=neumann"}) {
    const Reference ref(kGrid, {bc, false, "0"});
    // k and sigma at global index g (ghosts -1 and n too; a periodic axis's wrapped).
    const auto at = [&](std::uint64_t seed, int gx, int gy, int gz) {
      int g[3] = {gx, gy, gz};
      for (int a = 0; a < 3; ++a)
        if (ref.kind(a, 0) == Bc::periodic) g[a] = (g[a] + ref.n[a]) % ref.n[a];
      const bool block = g[0] >= 0 && g[0] <= 1 && g[1] >= 1 && g[1] <= 3 && g[2] >= 2 && g[2] <= 4;
      const double v =
          random_value(seed, std::uint64_t((g[0] + 1) + 16 * ((g[1] + 1) + 16 * (g[2] + 1))));
      return seed == 5 ? (block ? 1e3 : std::exp(1.5 * v)) : 0.5 + 0.5 * v;  // k, sigma >= 0
    };
    double want = 0;
    int arg[3] = {-1, -1, -1};
    ref.for_points([&](const int g[3]) {
      double d = at(6, g[0], g[1], g[2]) * ref.volume(g);
      ref.faces(g, [&](int a, int, const int q[3], Bc beyond) {
        if (beyond == Bc::neumann) return;
        const double kp = at(5, g[0], g[1], g[2]), kq = at(5, q[0], q[1], q[2]);
        d += 2 * kp * kq / (kp + kq) / (ref.h[a] * ref.h[a]) * ref.area(a, g);
      });
      if (d / ref.volume(g) > want) want = d / ref.volume(g), std::copy(g, g + 3, arg);
    });
    EXPECT_EQ(arg[0], 0) << bc << ": the maximum sits in the x0 Neumann plane";
    double bits = 0;
    for (const Int3& procs : process_grids(test::world_size())) {
      auto s = session_of(neumann_options(kGrid, {bc, false, "0"}, procs), MPI_COMM_WORLD);
      const Decomposition& d = s->decomp();
      const Layout l = d.layout();
      std::vector<double> kappa(l.padded_size()), sigma(l.padded_size());
      for (int z = -1; z <= l.nz; ++z)
        for (int y = -1; y <= l.ny; ++y)
          for (int x = -1; x <= l.nx; ++x) {
            const int g[3] = {d.offset[0] + x, d.offset[1] + y, d.offset[2] + z};
            kappa[std::size_t(l.at(x, y, z))] = at(5, g[0], g[1], g[2]);
            sigma[std::size_t(l.at(x, y, z))] = at(6, g[0], g[1], g[2]);
          }
      const Stencil sp = operator_stencil({ref.h[0], ref.h[1], ref.h[2]}, 0.0);
      const LevelCoefficients c(s->kernels(), l, sp, kappa, sigma, neumann_planes(d));
      const double backend = max_diagonal(s->kernels(), c, MPI_COMM_WORLD);
      EXPECT_LT(std::abs(backend - want), 1e-14 * want) << bc << " procs " << to_string(procs);
      EXPECT_EQ(max_diagonal(sp, d, kappa, &sigma, MPI_COMM_WORLD), backend) << bc;
      if (bits == 0) bits = backend;
      EXPECT_EQ(backend, bits) << bc << " procs " << to_string(procs);
    }
  }
}

// Heat with Neumann faces (the mass V_p) bitwise the same on every process grid as on one
// rank alone, every time scheme (explicit with a variable k or shift too: its step from the
// largest d_p / V_p), with the fluxes' source.
TEST(Neumann, HeatBitwiseOnEveryProcessGrid) {
  for (const char* scheme : {"explicit", "implicit", "crank-nicolson"})
    for (const Case& c : kCases) {
      const auto run = [&](MPI_Comm comm, const Int3& procs, Decomposition& d) {
        SolveOptions o = neumann_options(kGrid, c, procs, Variant::mg);
        o.problem = ProblemKind::heat;
        o.time_scheme = test::choice<TimeScheme>(scheme);
        o.initial = kSource;
        o.steps = 5;
        auto s = test::solve_in_process(o, comm);
        d = s.session->decomp();
        return s.solution();
      };
      Decomposition whole;
      const std::vector<double> alone = run(MPI_COMM_SELF, {1, 1, 1}, whole);
      for (const Int3& procs : process_grids(test::world_size())) {
        Decomposition d;
        const std::vector<double> x = run(MPI_COMM_WORLD, procs, d);
        EXPECT_EQ(test::mismatches_with_whole(d, x, whole, alone), 0)
            << c.bc << " " << scheme << " procs " << to_string(procs);
      }
    }
}

}  // namespace
}  // namespace halo3d
