// Multi-rank tests (run under mpirun with 1-4 ranks): halo exchange, decomposition
// invariance, exact discrete solutions, second-order convergence, HDF5 round trip.
#include <dirent.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "app.hpp"
#include "dry_run.hpp"
#include "errors.hpp"
#include "hdf5_io.hpp"
#include "mpi_env.hpp"
#include "problem.hpp"
#include "reduction.hpp"
#include "runtime.hpp"
#include "solvers.hpp"
#include "test_support.hpp"

namespace halo3d {
namespace {

using test::backend_under_test;
using test::process_grids;
using test::world_rank;
using test::world_size;

// Gathers a distributed field into a global [NZ][NY][NX] array on every rank.
std::vector<double> gather(const Decomposition& d, const std::vector<double>& padded,
                           MPI_Comm comm) {
  const Layout l = d.layout();
  std::vector<double> g(std::size_t(d.global_points()), 0.0);
  for (int k = 0; k < l.nz; ++k)
    for (int j = 0; j < l.ny; ++j)
      for (int i = 0; i < l.nx; ++i)
        g[(d.offset[0] + i) +
          std::size_t(d.grid[0]) *
              ((d.offset[1] + j) + std::size_t(d.grid[1]) * (d.offset[2] + k))] =
            padded[l.at(i, j, k)];
  MPI_Allreduce(MPI_IN_PLACE, g.data(), int(g.size()), MPI_DOUBLE, MPI_SUM, comm);
  return g;
}

struct SolveOutcome {
  std::vector<double> u;  // global
  DriveResult result;
  Int3 procs;
};

SolveOutcome solve(const SolveOptions& o, MPI_Comm comm) {
  test::InProcessSolve run = test::solve_in_process(o, comm);
  SolveOutcome out;
  out.result = run.result;
  out.u = gather(run.rt->decomp, run.solution(), run.rt->cart.get());
  out.procs = run.rt->decomp.procs;
  return out;
}

SolveOptions base_options() {
  SolveOptions o;
  o.backend = backend_under_test();
  o.output = "none";
  return o;
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}
double max_abs(const std::vector<double>& a) {
  double m = 0;
  for (double v : a) m = std::max(m, std::abs(v));
  return m;
}

std::vector<double> exact_discrete(const SolveOptions& o) {
  const Problem p(o);
  std::vector<double> e;
  for (int k = 0; k < o.grid[2]; ++k)
    for (int j = 0; j < o.grid[1]; ++j)
      for (int i = 0; i < o.grid[0]; ++i) e.push_back(p.exact_discrete(i, j, k));
  return e;
}

TEST(Halo, GhostsHoldTheNeighboursValues) {
  for (const Int3& procs : process_grids(world_size())) {
    const Int3 grid{11, 6, 9};
    if (procs[0] > grid[0] || procs[1] > grid[1] || procs[2] > grid[2]) continue;
    auto rt = make_runtime(test::laplacian_runtime(grid, procs), MPI_COMM_WORLD);
    const Decomposition& d = rt->decomp;
    const Layout l = d.layout();
    auto value = [&](int gi, int gj, int gk) {
      const bool inside =
          gi >= 0 && gi < grid[0] && gj >= 0 && gj < grid[1] && gk >= 0 && gk < grid[2];
      return inside ? random_value(3, std::uint64_t(gi) + 100 * (gj + 100 * std::uint64_t(gk)))
                    : 0.0;
    };
    std::vector<double> h(l.padded_size(), 0.0);
    for (int k = 0; k < l.nz; ++k)
      for (int j = 0; j < l.ny; ++j)
        for (int i = 0; i < l.nx; ++i)
          h[l.at(i, j, k)] = value(d.offset[0] + i, d.offset[1] + j, d.offset[2] + k);
    Buffer u = upload(*rt->kernels, h);
    auto transport = make_mpi_transport(*rt->kernels, HaloPlan::build(d), rt->cart.get());
    transport->start(u.data());
    transport->finish(u.data());
    const auto got = download(*rt->kernels, u);
    // Every face ghost (not edges/corners, which a 7-point stencil never reads).
    for (int k = -1; k <= l.nz; ++k)
      for (int j = -1; j <= l.ny; ++j)
        for (int i = -1; i <= l.nx; ++i) {
          const int outside = (i < 0 || i >= l.nx) + (j < 0 || j >= l.ny) + (k < 0 || k >= l.nz);
          if (outside != 1) continue;
          ASSERT_EQ(got[l.at(i, j, k)], value(d.offset[0] + i, d.offset[1] + j, d.offset[2] + k))
              << "procs " << to_string(procs) << " ghost " << i << "," << j << "," << k;
        }
  }
}

// DistributedOperator::exchange (what the multigrid transfers call) fills every ghost:
// faces, edges and corners, on every process grid.
TEST(Halo, ExchangeFillsEdgesAndCorners) {
  const Int3 grid{11, 7, 9};
  auto value = [&](int gi, int gj, int gk) {
    const bool inside =
        gi >= 0 && gi < grid[0] && gj >= 0 && gj < grid[1] && gk >= 0 && gk < grid[2];
    return inside ? random_value(4, std::uint64_t(gi) + 100 * (gj + 100 * std::uint64_t(gk))) : 0.0;
  };
  for (const Int3& procs : process_grids(world_size())) {
    if (procs[0] > grid[0] || procs[1] > grid[1] || procs[2] > grid[2]) continue;
    auto rt = make_runtime(test::laplacian_runtime(grid, procs), MPI_COMM_WORLD);
    const Decomposition& d = rt->decomp;
    const Layout l = d.layout();
    std::vector<double> h(l.padded_size(), -1.0);  // stale ghosts
    for (int k = 0; k < l.nz; ++k)
      for (int j = 0; j < l.ny; ++j)
        for (int i = 0; i < l.nx; ++i)
          h[l.at(i, j, k)] = value(d.offset[0] + i, d.offset[1] + j, d.offset[2] + k);
    Buffer u = upload(*rt->kernels, h);
    rt->op->exchange(u.data());
    const auto got = download(*rt->kernels, u);
    long wrong = 0;
    for (int k = -1; k <= l.nz; ++k)
      for (int j = -1; j <= l.ny; ++j)
        for (int i = -1; i <= l.nx; ++i) {
          const int gi = d.offset[0] + i, gj = d.offset[1] + j, gk = d.offset[2] + k;
          const bool inside_domain =
              gi >= 0 && gi < grid[0] && gj >= 0 && gj < grid[1] && gk >= 0 && gk < grid[2];
          if (inside_domain) wrong += got[l.at(i, j, k)] != value(gi, gj, gk);
        }
    EXPECT_EQ(wrong, 0) << "procs " << to_string(procs);
  }
}

// Ranks sharing a GPU: a warning naming MPS and its command without MPS, a note with it,
// nothing when each rank has its own GPU; MPS is found by its control pipe.
TEST(Runtime, SharedGpuWarningAndMpsDetection) {
  EXPECT_EQ(shared_gpu_warning(2, 2, false), "");
  const std::string w = shared_gpu_warning(4, 1, false);
  EXPECT_EQ(w.rfind("warning: 4 ranks share 1 GPU(s)", 0), 0u) << w;
  EXPECT_NE(w.find("nvidia-cuda-mps-control -d"), std::string::npos) << w;
  EXPECT_EQ(shared_gpu_warning(4, 1, true).rfind("note: ", 0), 0u);
  if (world_rank() != 0) return;
  char dir[] = "/tmp/halo3d-mps-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  setenv("CUDA_MPS_PIPE_DIRECTORY", dir, 1);
  EXPECT_FALSE(cuda_mps_running());
  const std::string pipe = std::string(dir) + "/control";
  ASSERT_EQ(mkfifo(pipe.c_str(), 0600), 0);
  EXPECT_TRUE(cuda_mps_running());
  unlink(pipe.c_str());
  rmdir(dir);
  unsetenv("CUDA_MPS_PIPE_DIRECTORY");
}

// The backend rule make_kernels and --dry-run share: cuda always, host never, auto only
// where CUDA is compiled in and every rank sees a GPU (the fewest any rank sees).
TEST(Runtime, AutoPicksCudaOnlyWhereEveryRankSeesAGpu) {
  EXPECT_TRUE(picks_cuda(Backend::cuda, 0));
  EXPECT_FALSE(picks_cuda(Backend::host, 4));
  EXPECT_FALSE(picks_cuda(Backend::auto_, 0));
  EXPECT_EQ(picks_cuda(Backend::auto_, 1), cuda_compiled());
  EXPECT_EQ(runs_on_gpu(Backend::auto_, MPI_COMM_WORLD),
            cuda_compiled() && fewest_gpus(int(cuda_devices().size()), MPI_COMM_WORLD) > 0);
  EXPECT_FALSE(runs_on_gpu(Backend::host, MPI_COMM_WORLD));
  EXPECT_TRUE(runs_on_gpu(Backend::cuda, MPI_COMM_WORLD));
}

TEST(Operator, OverlapOnAndOffGiveIdenticalResults) {
  SolveOptions o = base_options();
  o.grid = {19, 14, 23};
  o.rhs = "random";
  o.max_iters = 25;
  o.tol = 1e-300;  // run exactly max_iters
  o.overlap = OverlapMode::off;
  const auto off = solve(o, MPI_COMM_WORLD);
  o.overlap = OverlapMode::on;
  const auto on = solve(o, MPI_COMM_WORLD);
  EXPECT_EQ(off.u, on.u);
  EXPECT_EQ(off.result.history, on.result.history);
  o.overlap = OverlapMode::auto_;
  const auto chosen = solve(o, MPI_COMM_WORLD);
  EXPECT_EQ(off.u, chosen.u);
  EXPECT_EQ(off.result.history, chosen.result.history);
}

// --overlap auto times both ways and says what it chose, the same on every rank.
TEST(Operator, OverlapAutoChoosesByTimingTheSameOnEveryRank) {
  RuntimeOptions ro = test::laplacian_runtime({40, 36, 32});
  ro.overlap = OverlapMode::auto_;
  auto rt = make_runtime(ro, MPI_COMM_WORLD);
  const std::string& why = rt->overlap_choice;
  if (test::world_size() == 1) {
    EXPECT_FALSE(rt->op->overlap());
    EXPECT_NE(why.find("one rank"), std::string::npos) << why;
    return;
  }
  EXPECT_NE(why.find("auto: overlapped"), std::string::npos) << why;
  EXPECT_EQ(why.rfind(rt->op->overlap() ? "on" : "off", 0), 0u) << why;
  int mine = rt->op->overlap(), lo = 0, hi = 0;
  MPI_Allreduce(&mine, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(lo, hi);
}

TEST(Poisson, CgMatchesExactDiscreteSolution) {
  SolveOptions o = base_options();
  o.grid = {23, 17, 29};
  o.modes = {{2, 3, 1}, {1, 1, 1}};
  o.precond = Precond::none;  // plain CG: as many iterations as distinct eigenvalues
  const auto out = solve(o, MPI_COMM_WORLD);
  EXPECT_TRUE(out.result.converged);
  EXPECT_LE(out.result.iterations, 3);  // two distinct eigenvalues
  const auto exact = exact_discrete(o);
  EXPECT_LT(max_abs_diff(out.u, exact), 1e-9 * max_abs(exact));
}

TEST(Poisson, SingleModeConvergesInOneIteration) {
  SolveOptions o = base_options();
  o.grid = {16, 16, 16};
  o.modes = {{3, 1, 2}};
  o.precond = Precond::none;
  const auto out = solve(o, MPI_COMM_WORLD);
  EXPECT_TRUE(out.result.converged);
  EXPECT_EQ(out.result.iterations, 1);
  const auto exact = exact_discrete(o);
  EXPECT_LT(max_abs_diff(out.u, exact), 1e-12 * max_abs(exact));
}

TEST(Poisson, JacobiMatchesExactDiscreteSolution) {
  SolveOptions o = base_options();
  o.grid = {9, 8, 7};
  o.solver = SolverKind::jacobi;
  o.tol = 1e-10;
  const auto out = solve(o, MPI_COMM_WORLD);
  EXPECT_TRUE(out.result.converged);
  const auto exact = exact_discrete(o);
  EXPECT_LT(max_abs_diff(out.u, exact), 1e-8 * max_abs(exact));
}

// A solve of the manufactured source times `factor` (a power of two), its answer gathered.
struct ScaledSolve {
  std::vector<double> u;
  DriveResult result;
  double true_rel = 0;
};
ScaledSolve solve_scaled(const SolveOptions& o, double factor, MPI_Comm comm) {
  const Problem prob(o);
  auto rt = make_runtime(runtime_options(o, prob.stencil()), comm);
  std::vector<double> src;
  prob.fill_source(rt->decomp, src);
  for (double& v : src) v *= factor;
  const Buffer b = upload(*rt->kernels, src);
  auto pc = make_preconditioner(method_plan(o), *rt);
  auto m = make_method(method_plan(o), prob.dt(), *rt->op, rt->cart.get(), rt->timers, b, pc.get());
  m->start();
  DriveOptions dro;
  dro.max_iters = o.max_iters;
  ScaledSolve out;
  out.result = drive(*m, rt->cart.get(), dro, 0, {});
  out.true_rel = m->true_relative_residual();
  out.u = gather(rt->decomp, download(*rt->kernels, m->solution()), rt->cart.get());
  return out;
}

// ||b||^2 of b = 2^-600 f underflows and of 2^+600 f overflows: the solvers scale by a power
// of two before squaring, so such problems are solved, and their answers are the unscaled
// answer times the factor, bit for bit, with the same iterations and residuals (issue 28).
TEST(Poisson, RightHandSidesNearTheEndsOfTheDoubleRangeAreSolvedExactlyScaled) {
  for (const char* kind : {"mg", "none", "jacobi"}) {
    SolveOptions o = base_options();
    o.grid = {13, 11, 9};
    o.modes = {{1, 1, 1}, {3, 2, 1}};
    o.tol = 1e-9;
    if (std::string(kind) == "jacobi") o.solver = SolverKind::jacobi;
    if (std::string(kind) == "none") o.precond = Precond::none;
    const ScaledSolve one = solve_scaled(o, 1.0, MPI_COMM_WORLD);
    ASSERT_TRUE(one.result.converged) << kind;
    for (const int e : {-600, -1000, 600, 1000}) {
      const ScaledSolve s = solve_scaled(o, std::ldexp(1.0, e), MPI_COMM_WORLD);
      EXPECT_TRUE(s.result.converged) << kind << " 2^" << e;
      EXPECT_EQ(s.result.iterations, one.result.iterations) << kind << " 2^" << e;
      EXPECT_EQ(s.result.history, one.result.history) << kind << " 2^" << e;
      EXPECT_EQ(s.true_rel, one.true_rel) << kind << " 2^" << e;
      std::size_t differ = 0;
      for (std::size_t i = 0; i < s.u.size(); ++i)
        differ += s.u[i] != std::ldexp(one.u[i], e) ? 1 : 0;
      EXPECT_EQ(differ, 0u) << kind << " 2^" << e << ": points not the scaled answer";
    }
  }
}

// --iters N (tol 0) runs N iterations: a recurrence residual that underflows to 0 on the way
// is not a breakdown; CG starts over from the true residual and the answer stays at
// working precision (issue 28, item 19). Plain, multigrid and mixed precision.
TEST(Poisson, FixedIterationsRunPastTheRecurrenceUnderflow) {
  for (const char* kind : {"mg", "mixed", "none"}) {
    SolveOptions o = base_options();
    o.grid = {16, 16, 16};
    o.rhs = "random";
    o.tol = 0;
    o.max_iters = std::string(kind) == "none" ? 1200 : 300;
    if (std::string(kind) == "none") o.precond = Precond::none;
    if (std::string(kind) == "mixed") o.precision = Precision::mixed;
    for (const double factor : {1.0, std::ldexp(1.0, -520)}) {  // 2^-520: b.b underflows
      ScaledSolve s;
      ASSERT_NO_THROW(s = solve_scaled(o, factor, MPI_COMM_WORLD)) << kind;
      EXPECT_EQ(s.result.iterations, o.max_iters) << kind;
      EXPECT_LT(s.true_rel, 1e-12) << kind << " factor " << factor;
    }
  }
}

// NaN in b is a breakdown (exit code 4) on every rank, never a zero norm.
TEST(Poisson, NaNInTheRightHandSideIsABreakdownOnEveryRank) {
  for (const char* kind : {"cg", "jacobi"}) {
    SolveOptions o = base_options();
    o.grid = {9, 8, 7};
    if (std::string(kind) == "jacobi") o.solver = SolverKind::jacobi;
    const Problem prob(o);
    auto rt = make_runtime(runtime_options(o, prob.stencil()), MPI_COMM_WORLD);
    std::vector<double> src;
    prob.fill_source(rt->decomp, src);
    const Layout l = rt->decomp.layout();
    if (world_rank() == world_size() - 1) src[l.at(l.nx - 1, 0, l.nz - 1)] = std::nan("");
    const Buffer b = upload(*rt->kernels, src);
    int code = -1;
    try {
      auto m =
          make_method(method_plan(o), prob.dt(), *rt->op, rt->cart.get(), rt->timers, b, nullptr);
      m->start();
      DriveOptions dro;
      dro.max_iters = 5;
      drive(*m, rt->cart.get(), dro, 0, {});
    } catch (const Error& e) {
      code = e.code();
    }
    EXPECT_EQ(code, kExitBreakdown) << kind;
  }
}

TEST(Poisson, SecondOrderAgainstTheContinuousSolution) {
  // h = 1/8, 1/16, 1/32: the max error against sin(pi x) sin(pi y) sin(pi z) falls by 4.
  std::vector<double> err;
  for (int n : {7, 15, 31}) {
    SolveOptions o = base_options();
    o.grid = {n, n, n};
    o.tol = 1e-12;
    const auto out = solve(o, MPI_COMM_WORLD);
    Problem p(o);
    double e = 0;
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i)
          e = std::max(
              e, std::abs(out.u[i + n * (j + std::size_t(n) * k)] - p.exact_continuous(i, j, k)));
    err.push_back(e);
  }
  for (std::size_t i = 1; i < err.size(); ++i) {
    const double order = std::log2(err[i - 1] / err[i]);
    EXPECT_NEAR(order, 2.0, 0.05) << "errors " << err[i - 1] << " -> " << err[i];
  }
}

TEST(Heat, MatchesExactDiscreteSolution) {
  SolveOptions o = base_options();
  o.problem = ProblemKind::heat;
  o.grid = {15, 12, 10};
  o.modes = {{1, 1, 1}, {2, 1, 3}};
  o.steps = 40;
  o.alpha = 0.7;
  const auto out = solve(o, MPI_COMM_WORLD);
  EXPECT_EQ(out.result.iterations, 40);
  const auto exact = exact_discrete(o);
  EXPECT_LT(max_abs_diff(out.u, exact), 1e-12 * max_abs(exact));
}

// Implicit schemes at a dt 10x the explicit limit: each step multiplies mode k by
// (1 - (1-theta) c lambda_k) / (1 + theta c lambda_k), exactly (to the inner --tol).
TEST(Heat, ImplicitSchemesMatchExactDiscreteSolution) {
  for (const char* scheme : {"implicit", "crank-nicolson"})
    for (const char* precond : {"mg", "none"}) {
      SolveOptions o = base_options();
      o.problem = ProblemKind::heat;
      o.time_scheme = test::choice<TimeScheme>(scheme);
      o.precond = test::choice<Precond>(precond);
      o.grid = {15, 12, 10};
      o.modes = {{1, 1, 1}, {2, 1, 3}};
      o.steps = 8;
      o.alpha = 0.7;
      o.dt = 10 / (o.alpha * Problem(o).stencil().diag);  // 10 x the explicit limit
      o.tol = 1e-13;
      const auto out = solve(o, MPI_COMM_WORLD);
      EXPECT_EQ(out.result.iterations, 8) << scheme << " " << precond;
      const auto exact = exact_discrete(o);
      EXPECT_LT(max_abs_diff(out.u, exact), 1e-10 * max_abs(exact)) << scheme << " " << precond;
      EXPECT_GT(max_abs(exact), 1e-3);  // the modes have not decayed to nothing
    }
}

// Implicit steps on random data: every process grid gives the one-rank answer to rounding
// (bitwise with multigrid: its cycle and the CG sums do not depend on the grid).
TEST(Heat, ImplicitIndependentOfProcessGrid) {
  SolveOptions o = base_options();
  o.problem = ProblemKind::heat;
  o.time_scheme = TimeScheme::crank_nicolson;
  o.grid = {17, 13, 11};
  o.rhs = "random";
  o.steps = 5;
  o.dt = 1e-3;
  const auto ref = solve(o, MPI_COMM_SELF);
  for (const Int3& procs : process_grids(world_size())) {
    o.procs = procs;
    const auto out = solve(o, MPI_COMM_WORLD);
    EXPECT_EQ(out.u, ref.u) << "procs " << to_string(procs);
  }
}

TEST(Decomposition, RandomRhsIndependentOfProcessGrid) {
  // Reference on one rank (every rank computes it alone), then every process grid of
  // this job: same iteration count, same answer to rounding.
  SolveOptions o = base_options();
  o.grid = {17, 13, 11};
  o.rhs = "random";
  o.seed = 42;
  const auto ref = solve(o, MPI_COMM_SELF);
  ASSERT_TRUE(ref.result.converged);
  for (const Int3& procs : process_grids(world_size())) {
    o.procs = procs;
    const auto out = solve(o, MPI_COMM_WORLD);
    EXPECT_EQ(out.result.iterations, ref.result.iterations) << "procs " << to_string(procs);
    EXPECT_LT(max_abs_diff(out.u, ref.u), 1e-13 * max_abs(ref.u)) << "procs " << to_string(procs);
  }
}

TEST(Hdf5, SolutionFileRoundTrip) {
  SolveOptions o = base_options();
  o.grid = {12, 10, 7};
  o.modes = {{1, 2, 1}};
  o.output = "roundtrip_" + std::to_string(world_size()) + ".h5";
  o.tol = 1e-12;  // multigrid-preconditioned: a few iterations, error well below 1e-10
  ASSERT_EQ(run_solve(o, MPI_COMM_WORLD), 0);
  const auto in_process = solve(o, MPI_COMM_WORLD);
  // Read back on one rank with a one-rank decomposition: the whole field.
  if (world_rank() == 0) {
    H5Id f = h5_open_read(o.output, MPI_COMM_SELF);
    Decomposition whole;
    whole.grid = whole.count = o.grid;
    whole.procs = {1, 1, 1};
    std::vector<double> u(whole.layout().padded_size());
    h5_read_field(f.get(), "u", whole, u.data());
    const Layout l = whole.layout();
    std::vector<double> flat;
    for (int k = 0; k < l.nz; ++k)
      for (int j = 0; j < l.ny; ++j)
        for (int i = 0; i < l.nx; ++i) flat.push_back(u[l.at(i, j, k)]);
    EXPECT_EQ(flat, in_process.u);
    EXPECT_EQ(h5_attr_ints(f.get(), "grid"), (std::vector<long long>{12, 10, 7}));
    EXPECT_EQ(h5_attr_string(f.get(), "problem"), "poisson");
    EXPECT_EQ(h5_attr_ints(f.get(), "converged"), std::vector<long long>{1});
    EXPECT_LT(h5_attr_doubles(f.get(), "l2_error").at(0), 1e-10);
    // No temporary (OUTPUT.partial.<run id>) left behind.
    if (DIR* dir = opendir(".")) {
      while (const dirent* e = readdir(dir))
        EXPECT_NE(std::string(e->d_name).rfind(o.output + ".partial", 0), 0u)
            << "temporary file left behind: " << e->d_name;
      closedir(dir);
    }
    std::remove(o.output.c_str());
    std::remove(("roundtrip_" + std::to_string(world_size()) + ".xdmf").c_str());
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
}  // namespace halo3d

namespace halo3d {
namespace {

TEST(GlobalSums, StartFinishEqualsTheBlockingSumsAndTheExactSum) {
  // Random partials of very different sizes (so the order and precision of the additions
  // matter), two sums in flight at once and finished in the opposite order, against the
  // blocking global_sums and against the exact sum (long double, summed the same everywhere).
  const int n = 3, ranks = world_size();
  std::vector<DD> all(std::size_t(n) * ranks);
  for (int r = 0; r < ranks; ++r)
    for (int i = 0; i < n; ++i) {
      const double hi = std::ldexp(std::sin(1.0 + r * 7.0 + i), (r * 13 + i * 5) % 40 - 20);
      all[std::size_t(r) * n + i] = DD{hi, hi * 0x1p-60};
    }
  const DD* mine = &all[std::size_t(world_rank()) * n];
  double blocking[n], a[n], b[n];
  global_sums(MPI_COMM_WORLD, mine, n, blocking);
  GlobalSums first(MPI_COMM_WORLD), second(MPI_COMM_WORLD);
  first.start(mine, n);
  const DD doubled[n] = {DD{2 * mine[0].hi, 2 * mine[0].lo}, DD{2 * mine[1].hi, 2 * mine[1].lo},
                         DD{2 * mine[2].hi, 2 * mine[2].lo}};
  second.start(doubled, n);
  second.finish(b);
  first.finish(a);
  for (int i = 0; i < n; ++i) {
    long double exact = 0;
    for (int r = 0; r < ranks; ++r)
      exact +=
          (long double)all[std::size_t(r) * n + i].hi + (long double)all[std::size_t(r) * n + i].lo;
    EXPECT_EQ(a[i], blocking[i]) << i;
    EXPECT_EQ(b[i], 2 * blocking[i]) << i;
    EXPECT_NEAR(a[i], double(exact), 4e-16 * std::fabs(double(exact))) << i;
  }
}

TEST(MpiEnv, ThreadLevelBelowFunneledIsUnavailable) {
  for (int ok : {MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE})
    EXPECT_NO_THROW(check_mpi_thread_level(ok));
  try {
    check_mpi_thread_level(MPI_THREAD_SINGLE);
    FAIL() << "MPI_THREAD_SINGLE accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitUnavailable);
    EXPECT_NE(std::string(e.what()).find("provides MPI_THREAD_SINGLE, halo3d needs "
                                         "MPI_THREAD_FUNNELED"),
              std::string::npos)
        << e.what();
  }
}

// Polls `r` for up to 10 s: a receive that a stale one stole the message from fails here
// instead of hanging the test.
bool completes(Request& r) {
  for (int i = 0; i < 10000; ++i) {
    if (r.test()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

TEST(MpiEnv, RequestsWaitMoveAndCancelAbandonedReceives) {
  const int rank = world_rank(), size = world_size();
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  // A ring: every rank's value arrives at the next one through wait_all.
  int out = 1000 + rank, in = -1;
  std::vector<Request> rs;
  ASSERT_EQ(MPI_Irecv(&in, 1, MPI_INT, prev, 11, MPI_COMM_WORLD, rs.emplace_back().for_recv()),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Isend(&out, 1, MPI_INT, next, 11, MPI_COMM_WORLD, rs.emplace_back().for_send()),
            MPI_SUCCESS);
  wait_all(rs);
  EXPECT_EQ(in, 1000 + prev);
  for (const Request& r : rs) EXPECT_FALSE(r.pending());

  // A receive abandoned while pending is cancelled: the next message with its tag goes to
  // the receive posted after it, and the abandoned buffer is never written.
  int stale = -1;
  {
    Request abandoned;
    ASSERT_EQ(MPI_Irecv(&stale, 1, MPI_INT, prev, 12, MPI_COMM_WORLD, abandoned.for_recv()),
              MPI_SUCCESS);
    EXPECT_TRUE(abandoned.pending());
  }
  MPI_Barrier(MPI_COMM_WORLD);  // every rank's stale receive is gone before anyone sends
  int fresh = -1;
  Request recv;
  ASSERT_EQ(MPI_Irecv(&fresh, 1, MPI_INT, prev, 12, MPI_COMM_WORLD, recv.for_recv()), MPI_SUCCESS);
  // Moved, the request keeps its operation and the source is left empty.
  Request moved = std::move(recv);
  EXPECT_FALSE(recv.pending());
  EXPECT_TRUE(moved.pending());
  Request send;
  ASSERT_EQ(MPI_Isend(&out, 1, MPI_INT, next, 12, MPI_COMM_WORLD, send.for_send()), MPI_SUCCESS);
  ASSERT_TRUE(completes(moved));
  send.wait();
  EXPECT_EQ(fresh, 1000 + prev);
  EXPECT_EQ(stale, -1);

  // An abandoned nonblocking collective is completed, not cancelled: every rank's barrier
  // ends, and the next collective matches the next one.
  {
    Request barrier;
    ASSERT_EQ(MPI_Ibarrier(MPI_COMM_WORLD, barrier.for_collective()), MPI_SUCCESS);
  }
  int sum = 1;
  ASSERT_EQ(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
  EXPECT_EQ(sum, size);
}

}  // namespace
}  // namespace halo3d

namespace halo3d {
namespace {

// /u of `path`, whole, as stored.
std::vector<double> read_raw(const std::string& path) {
  H5Id f = h5_open_read(path, MPI_COMM_SELF);
  H5Id dset(H5Dopen2(f.get(), "u", H5P_DEFAULT), H5Dclose);
  H5Id space(H5Dget_space(dset.get()), H5Sclose);
  std::vector<double> v(std::size_t(H5Sget_simple_extent_npoints(space.get())));
  HALO3D_H5_CHECK(H5Dread(dset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()));
  return v;
}

// Disabled: on this VM it failed intermittently (about 1 run in 6 on 3-4 ranks, e.g. grid
// 5,7,3 procs 1,1,3) with the unchanged box-per-rank write, before any redistribution; the
// cause (the test's reuse of one file name, or the write path) is not found yet. Run it by
// hand: test_parallel --gtest_also_run_disabled_tests --gtest_filter='Hdf5.DISABLED_*'.
TEST(Hdf5, WriteOnAnyProcessGridEqualsTheOneRankFile) {
  // Every process grid of this job (2,1,1, 1,2,1, 2,2,1, 3,1,1 ...) on grids that split
  // unevenly: the file rank 0 writes alone is the reference, point for point. Each write is
  // repeated: Open MPI's ompio with fcoll/vulcan (avoided by MpiSession) got about 2 in 5 of the
  // 5x7x3 writes on 3 ranks wrong, so a few repetitions catch it if it comes back.
  const std::string ref = "pgrid_ref_" + std::to_string(world_size()) + ".h5";
  const std::string out = "pgrid_" + std::to_string(world_size()) + ".h5";
  for (const Int3& grid : {Int3{23, 17, 11}, Int3{5, 7, 3}, Int3{16, 9, 2}}) {
    if (world_rank() == 0) {
      const Decomposition whole = Decomposition::whole(grid);
      const std::vector<double> u = random_box(whole, 11, std::nan(""));
      write_h5_atomically(ref, MPI_COMM_SELF,
                          [&](hid_t f) { h5_write_field(f, "u", whole, u.data()); });
    }
    const std::vector<double> want = world_rank() == 0 ? read_raw(ref) : std::vector<double>();
    for (const Int3& procs : process_grids(world_size())) {
      if (procs[0] > grid[0] || procs[1] > grid[1] || procs[2] > grid[2]) continue;
      Comm cart;
      const Decomposition d = decompose(MPI_COMM_WORLD, grid, procs, cart);
      const std::vector<double> u = random_box(d, 11, std::nan(""));
      for (int rep = 0; rep < 4; ++rep) {
        write_h5_atomically(out, cart.get(), [&](hid_t f) { h5_write_field(f, "u", d, u.data()); });
        if (world_rank() == 0)
          EXPECT_EQ(read_raw(out), want)
              << "grid " << to_string(grid) << " procs " << to_string(procs) << " write " << rep;
        MPI_Barrier(MPI_COMM_WORLD);
      }
    }
  }
  if (world_rank() == 0) {
    std::remove(ref.c_str());
    std::remove(out.c_str());
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
}  // namespace halo3d
