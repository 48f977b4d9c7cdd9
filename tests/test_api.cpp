// The public API (include/halo3d/halo3d.hpp) against the session `halo3d solve` runs: the
// same f (random, by global index) gives bitwise the same u, on every process grid of the
// rank count, for each method; the boxes tile the grid as the decomposition splits it; a
// second solve reuses the hierarchy and still matches a fresh solver; bad input is an Error
// with its exit code. Periodic and Neumann faces (Operator::bc): bitwise as solve, and b = A u*
// from a plain reference operator solved back (the singular case's mean reported in Result). Run
// under mpirun with 1-4 ranks (HALO3D_TEST_BACKEND=cuda: on GPUs).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <halo3d/halo3d.hpp>
#include <thread>

#include "test_support.hpp"

#if defined(HALO3D_HAVE_CUDA)
#include <cuda_runtime.h>
#endif

namespace halo3d {
namespace {

const Int3 kGrid{19, 14, 11};  // unequal axes: a transposed layout would show

Settings::Backend api_backend() {
  return test::backend_under_test() == Backend::cuda ? Settings::Backend::cuda
                                                     : Settings::Backend::host;
}

// f at this rank's box, x fastest, without ghosts: random_value of each point's global index,
// as `--rhs random --seed` fills it.
std::vector<double> random_f(const Box& b, std::uint64_t seed) {
  std::vector<double> f;
  for (int k = 0; k < b.size[2]; ++k)
    for (int j = 0; j < b.size[1]; ++j)
      for (int i = 0; i < b.size[0]; ++i) {
        const std::uint64_t g =
            b.offset[0] + i +
            std::uint64_t(kGrid[0]) * (b.offset[1] + j + kGrid[1] * (b.offset[2] + k));
        f.push_back(random_value(seed, g));
      }
  return f;
}

// The same solve through `halo3d solve`'s path (SolveSession from make_plan), this rank's
// interior x fastest.
std::vector<double> reference(const SolveOptions& o) {
  test::InProcessSolve s = test::solve_in_process(o, MPI_COMM_WORLD);
  const Layout l = s.rt->decomp.layout();
  const std::vector<double> padded = s.solution();
  std::vector<double> u;
  for (int k = 0; k < l.nz; ++k)
    for (int j = 0; j < l.ny; ++j)
      for (int i = 0; i < l.nx; ++i) u.push_back(padded[l.at(i, j, k)]);
  return u;
}

SolveOptions options_for(const Settings& s, const Int3& procs, std::uint64_t seed,
                         const Operator& op) {
  SolveOptions o;
  o.grid = kGrid;
  o.box = op.box;
  o.shift = op.shift;
  o.coefficient = op.coefficient;
  o.shift_field = op.shift_field;
  o.bc = parse_bc(op.bc);
  o.procs = procs;
  o.backend = test::backend_under_test();
  o.rhs = "random";
  o.seed = seed;
  o.solver = s.method == Settings::Method::jacobi ? SolverKind::jacobi : SolverKind::cg;
  o.precond = s.method == Settings::Method::mg_pcg ? Precond::mg : Precond::none;
  o.precision = s.precision == Settings::Precision::mixed ? Precision::mixed : Precision::double_;
  o.tol = s.tol;
  o.max_iters = s.max_iters;
  return o;
}

bool bitwise_equal(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// The API's box on this rank is the decomposition's block split of the grid.
void expect_box(const Solver& s, const Int3& procs) {
  const Box b = s.local_box();
  const Int3 p = s.process_grid();
  if (procs != Int3{0, 0, 0}) EXPECT_EQ(p, procs);
  EXPECT_EQ(1LL * p[0] * p[1] * p[2], test::world_size());
  // Rank r of the caller's communicator sits at process coordinates x fastest (the header's
  // promise: a caller can place its ranks).
  const int r = test::world_rank();
  const Int3 c{r % p[0], r / p[0] % p[1], r / (p[0] * p[1])};
  for (int a = 0; a < 3; ++a) {
    const Span sp = split_axis(kGrid[a], p[a], c[a], odd_splits(kGrid[a], false));
    EXPECT_EQ(b.offset[a], sp.offset) << "axis " << a;
    EXPECT_EQ(b.size[a], sp.count) << "axis " << a;
  }
  long long points = b.points();
  MPI_Allreduce(MPI_IN_PLACE, &points, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(points, 1LL * kGrid[0] * kGrid[1] * kGrid[2]);
}

void check_method(Settings s, bool must_converge, const Operator& op = {}) {
  s.backend = api_backend();
  std::uint64_t seed = 11;
  for (const Int3& procs : test::process_grids(test::world_size())) {
    SCOPED_TRACE("procs " + to_string(procs));
    Solver solver(MPI_COMM_WORLD, {kGrid, procs}, s, op);
    expect_box(solver, procs);
    const std::vector<double> f = random_f(solver.local_box(), ++seed);
    std::vector<double> u(f.size(), 7.0);  // not read: the solve starts from 0
    const Result r = solver.solve(f.data(), u.data());
    EXPECT_TRUE(bitwise_equal(u, reference(options_for(s, procs, seed, op))));
    EXPECT_EQ(r.converged, must_converge);
    if (must_converge) EXPECT_LE(r.relative_residual, 2 * s.tol);
    EXPECT_GT(r.iterations, 0);
  }
}

// op gives another answer than the default operator (on some rank) for the same f.
void expect_changes_answer(const Operator& op, std::uint64_t seed) {
  Settings s;
  s.backend = api_backend();
  Solver a(MPI_COMM_WORLD, {kGrid, {0, 0, 0}}, s, op), b(MPI_COMM_WORLD, {kGrid, {0, 0, 0}}, s);
  const std::vector<double> f = random_f(a.local_box(), seed);
  std::vector<double> ua(f.size()), ub(f.size());
  a.solve(f.data(), ua.data());
  b.solve(f.data(), ub.data());
  int differ = !bitwise_equal(ua, ub);
  MPI_Allreduce(MPI_IN_PLACE, &differ, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(differ, 1);
}

TEST(Api, MgPcgBitwiseAsSolveOnEveryProcessGrid) { check_method({}, true); }

// Operator's box and shift are solve's --box and --shift (and change the answer).
TEST(Api, BoxAndShiftBitwiseAsSolve) {
  Operator op;
  op.box = {2.0, 1.0, 0.5};
  op.shift = 3.0;
  check_method({}, true, op);
  expect_changes_answer(op, 5);
}

// Operator's coefficient is solve's --coefficient: bitwise the same on every process grid,
// and a k that is not constant changes the answer.
TEST(Api, CoefficientBitwiseAsSolve) {
  Operator op;
  op.coefficient = "expr:(x<0.5 && y<0.4) ? 1e3 : 1+z";
  check_method({}, true, op);
  expect_changes_answer(op, 6);
}

// Operator's shift_field is solve's --shift expr:/file: (with k = 1 and with a variable k).
TEST(Api, ShiftFieldBitwiseAsSolve) {
  Operator op;
  op.shift_field = "expr:100*(1+sin(5*x))*(y+z)";
  check_method({}, true, op);
  expect_changes_answer(op, 7);
  op.coefficient = "expr:1+10*x*y";
  check_method({}, true, op);
}

// Operator's bc is solve's --bc: periodic and Neumann faces (f scaled by V_p inside, as the
// program's source), the singular case too, bitwise on every process grid.
TEST(Api, BoundaryKindsBitwiseAsSolve) {
  for (const char* bc : {"x=periodic", "x0=neumann,z=neumann", "x=neumann,y=periodic,z=neumann"}) {
    SCOPED_TRACE(bc);
    Operator op;
    op.bc = bc;
    check_method({}, true, op);
    expect_changes_answer(op, 8);
  }
  Settings mixed;
  mixed.precision = Settings::Precision::mixed;
  Operator op;
  op.bc = "x=neumann,y=neumann,z=periodic";
  op.shift_field = "expr:(x<0.3)*(1+y)";  // no Dirichlet face, nonsingular
  check_method(mixed, true, op);
}

// The whole grid's V-scaled operator (k = 1, a constant shift), written here from the
// definition: each face 1/h^2 times its area fraction (1/2 per other axis on whose Neumann
// plane it lies), none beyond a Neumann face, zero ghosts beyond a Dirichlet one, wrapped
// neighbours on a periodic axis, the shift times V_p.
struct Whole {
  Int3 n;
  FaceKinds bc;
  double shift, h[3];
  Whole(const Int3& grid, const std::string& text, double s)
      : n(grid), bc(parse_bc(text)), shift(s) {
    for (int a = 0; a < 3; ++a)
      h[a] = 1.0 / ops::axis_intervals(n[a], kind(a, 0) == Bc::periodic, kind(a, 0) == Bc::neumann,
                                       kind(a, 1) == Bc::neumann);
  }
  Bc kind(int a, int side) const { return bc[std::size_t(2 * a + side)]; }
  double half(int a, int g) const {
    return (kind(a, 0) == Bc::neumann && g == 0) || (kind(a, 1) == Bc::neumann && g == n[a] - 1)
               ? 0.5
               : 1.0;
  }
  double volume(const int g[3]) const { return half(0, g[0]) * half(1, g[1]) * half(2, g[2]); }
  std::size_t index(const int g[3]) const {
    return std::size_t(g[0] + n[0] * (g[1] + n[1] * g[2]));
  }
  std::vector<double> apply(const std::vector<double>& u) const {
    std::vector<double> out(u.size());
    for (int z = 0; z < n[2]; ++z)
      for (int y = 0; y < n[1]; ++y)
        for (int x = 0; x < n[0]; ++x) {
          const int g[3] = {x, y, z};
          const double up = u[index(g)];
          double v = shift * volume(g) * up;
          for (int a = 0; a < 3; ++a)
            for (int side = 0; side < 2; ++side) {
              int q[3] = {x, y, z};
              q[a] += side ? 1 : -1;
              const bool out_of = q[a] < 0 || q[a] >= n[a];
              if (out_of && kind(a, side) == Bc::neumann) continue;
              if (out_of && kind(a, side) == Bc::periodic) q[a] = (q[a] + n[a]) % n[a];
              const double uq = out_of && kind(a, side) == Bc::dirichlet ? 0.0 : u[index(q)];
              const double area = volume(g) / half(a, g[a]);  // the other axes' halves
              v += area / (h[a] * h[a]) * (up - uq);
            }
          out[index(g)] = v;
        }
    return out;
  }
};

// b = A u* for a random u*, given as f = V^{-1} b (the library scales f by V_p), solved back
// to rounding with MG-PCG on every process grid: Neumann and periodic faces, with a shift and
// without one (the singular case: u* of zero V-weighted mean comes back, the mean removed is
// rounding; f + 0.75 gives the same u and reports 0.75 removed).
TEST(Api, SolvesBackAnAnswerWithNeumannAndPeriodicFaces) {
  for (const auto& [bc, shift] : {std::pair<const char*, double>{"x0=neumann,y=periodic", 0.0},
                                  {"x=neumann,y=neumann,z=neumann", 2.5},
                                  {"x=neumann,y=periodic,z=neumann", 0.0}}) {
    const Whole w(kGrid, bc, shift);
    const std::size_t n = std::size_t(kGrid[0]) * kGrid[1] * kGrid[2];
    std::vector<double> ustar(n);
    for (std::size_t i = 0; i < n; ++i) ustar[i] = random_value(31, i);
    Operator op;
    op.bc = bc;
    op.shift = shift;
    const bool singular =
        shift == 0 && std::find(w.bc.begin(), w.bc.end(), Bc::dirichlet) == w.bc.end();
    if (singular) {  // the zero V-weighted mean answer
      double vu = 0, vol = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const int g[3] = {int(i % kGrid[0]), int(i / kGrid[0] % kGrid[1]),
                          int(i / (kGrid[0] * kGrid[1]))};
        vu += w.volume(g) * ustar[i], vol += w.volume(g);
      }
      for (double& x : ustar) x -= vu / vol;
    }
    const std::vector<double> b = w.apply(ustar);
    Settings s;
    s.backend = api_backend();
    s.tol = 1e-12;
    for (const Int3& procs : test::process_grids(test::world_size())) {
      SCOPED_TRACE(std::string(bc) + " procs " + to_string(procs));
      Solver solver(MPI_COMM_WORLD, {kGrid, procs}, s, op);
      const Box box = solver.local_box();
      std::vector<double> f, want;
      for (int k = 0; k < box.size[2]; ++k)
        for (int j = 0; j < box.size[1]; ++j)
          for (int i = 0; i < box.size[0]; ++i) {
            const int g[3] = {box.offset[0] + i, box.offset[1] + j, box.offset[2] + k};
            f.push_back(b[w.index(g)] / w.volume(g));
            want.push_back(ustar[w.index(g)]);
          }
      std::vector<double> u(f.size());
      const Result r = solver.solve(f.data(), u.data());
      EXPECT_TRUE(r.converged);
      EXPECT_EQ(r.singular, singular);
      EXPECT_LT(std::abs(r.source_mean_removed), 1e-12);
      double err = 0;
      for (std::size_t i = 0; i < u.size(); ++i) err = std::max(err, std::abs(u[i] - want[i]));
      MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      EXPECT_LT(err, 1e-9);
      if (!singular) continue;
      for (double& x : f) x += 0.75;
      std::vector<double> u2(f.size());
      const Result r2 = solver.solve(f.data(), u2.data());
      EXPECT_NEAR(r2.source_mean_removed, 0.75, 1e-12);
      err = 0;
      for (std::size_t i = 0; i < u.size(); ++i) err = std::max(err, std::abs(u2[i] - want[i]));
      MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      EXPECT_LT(err, 1e-9);
    }
  }
}

TEST(Api, CgBitwiseAsSolve) {
  Settings s;
  s.method = Settings::Method::cg;
  s.tol = 1e-10;
  check_method(s, true);
}

TEST(Api, MixedPrecisionBitwiseAsSolve) {
  Settings s;
  s.precision = Settings::Precision::mixed;
  check_method(s, true);
}

TEST(Api, JacobiBitwiseAsSolveWhenNotConverged) {
  Settings s;
  s.method = Settings::Method::jacobi;
  s.max_iters = 40;
  check_method(s, false);
}

// The hierarchy is kept between solves; the second answer is a fresh solver's.
TEST(Api, SecondSolveMatchesFreshSolver) {
  Settings s;
  s.backend = api_backend();
  Solver reused(MPI_COMM_WORLD, {kGrid, {0, 0, 0}}, s);
  const std::vector<double> f1 = random_f(reused.local_box(), 3),
                            f2 = random_f(reused.local_box(), 4);
  std::vector<double> u1(f1.size()), u2(f1.size()), fresh(f1.size());
  reused.solve(f1.data(), u1.data());
  const Result r2 = reused.solve(f2.data(), u2.data());
  Solver other(MPI_COMM_WORLD, {kGrid, {0, 0, 0}}, s);
  const Result rf = other.solve(f2.data(), fresh.data());
  EXPECT_FALSE(bitwise_equal(u1, u2));
  EXPECT_TRUE(bitwise_equal(u2, fresh));
  EXPECT_EQ(r2.iterations, rf.iterations);
  EXPECT_EQ(r2.relative_residual, rf.relative_residual);
}

// f = 0: u = 0 exactly, converged at once (as `halo3d solve --rhs expr:0`); NaN in f on one
// rank: a breakdown (exit code 4) thrown on every rank, and the solver still usable after.
TEST(Api, ZeroSourceAndNaN) {
  Settings s;
  s.backend = api_backend();
  Solver solver(MPI_COMM_WORLD, {kGrid, {0, 0, 0}}, s);
  const std::size_t n = solver.local_box().points();
  std::vector<double> f(n, 0.0), u(n, 5.0);
  const Result r = solver.solve(f.data(), u.data());
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.iterations, 0);
  EXPECT_EQ(r.relative_residual, 0.0);
  EXPECT_TRUE(bitwise_equal(u, std::vector<double>(n, 0.0)));
  if (test::world_rank() == test::world_size() - 1) f[n / 2] = std::nan("");
  try {
    solver.solve(f.data(), u.data());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitBreakdown) << e.what();
    EXPECT_TRUE(e.collective());
  }
  const std::vector<double> g = random_f(solver.local_box(), 5);
  Solver fresh(MPI_COMM_WORLD, {kGrid, {0, 0, 0}}, s);
  std::vector<double> u1(n), u2(n);
  solver.solve(g.data(), u1.data());
  fresh.solve(g.data(), u2.data());
  EXPECT_TRUE(bitwise_equal(u1, u2));
}

#if defined(HALO3D_HAVE_CUDA)
void CUDART_CB sleep_200ms(void*) { std::this_thread::sleep_for(std::chrono::milliseconds(200)); }
#endif

// The cuda backend takes f and gives u in device memory too: the same u as from host arrays,
// with f still being written on the caller's stream when solve is called (the legacy default
// stream, held 200 ms by a host function before the copy that writes f): solve reads it only
// after the caller's work (Kernels::wait_for_caller). Without that wait the solver's
// non-blocking streams read f before the copy, every time; with a plain cudaMemcpy from
// pageable memory (which returns before its DMA is done) it failed now and then on 3 ranks
// under MPS (sessions 38 and 40).
TEST(Api, DevicePointersOnCuda) {
#if defined(HALO3D_HAVE_CUDA)
  if (test::backend_under_test() != Backend::cuda) GTEST_SKIP() << "the cuda backend only";
  Settings s;
  s.backend = Settings::Backend::cuda;
  Solver solver(MPI_COMM_WORLD, {kGrid, {0, 0, 0}}, s);  // binds this rank's GPU
  const std::vector<double> f = random_f(solver.local_box(), 9);
  const std::size_t bytes = f.size() * sizeof(double);
  std::vector<double> from_host(f.size()), from_device(f.size(), 3.0);
  solver.solve(f.data(), from_host.data());
  double *df = nullptr, *du = nullptr, *pinned = nullptr;
  ASSERT_EQ(cudaMalloc(&df, bytes), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&du, bytes), cudaSuccess);
  ASSERT_EQ(cudaMallocHost(&pinned, bytes), cudaSuccess);
  std::copy(f.begin(), f.end(), pinned);
  ASSERT_EQ(cudaMemset(df, 0, bytes), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaLaunchHostFunc(cudaStreamLegacy, sleep_200ms, nullptr), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(df, pinned, bytes, cudaMemcpyHostToDevice, cudaStreamLegacy),
            cudaSuccess);
  solver.solve(df, du);
  EXPECT_EQ(cudaMemcpy(from_device.data(), du, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(df);
  cudaFree(du);
  cudaFreeHost(pinned);
  EXPECT_TRUE(bitwise_equal(from_host, from_device));
#else
  GTEST_SKIP() << "CUDA is not compiled in";
#endif
}

TEST(Api, VersionIsTheHeaders) {
  EXPECT_STREQ(version(), HALO3D_VERSION_STRING);
  EXPECT_EQ(std::to_string(HALO3D_VERSION_MAJOR) + "." + std::to_string(HALO3D_VERSION_MINOR) +
                "." + std::to_string(HALO3D_VERSION_PATCH),
            version());
}

// Bad input: halo3d::Error with kExitBadInput and a message naming the problem, on every rank.
template <class F>
void expect_bad_input(F make, const char* words) {
  try {
    make();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitBadInput) << e.what();
    EXPECT_TRUE(e.collective());
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(Api, BadInputIsAnError) {
  Settings s;
  s.backend = api_backend();
  const int n = test::world_size();
  expect_bad_input([&] { Solver(MPI_COMM_WORLD, {kGrid, {n + 1, 1, 1}}, s); }, "procs");
  expect_bad_input([&] { Solver(MPI_COMM_WORLD, {{8, 0, 8}, {0, 0, 0}}, s); }, "points");
  Operator op;
  op.boundary_value = 1;
  expect_bad_input([&] { Solver(MPI_COMM_WORLD, {kGrid, {0, 0, 0}}, s, op); }, "boundary_value");
  op = {};
  op.box = {1.0, 0.0, 1.0};
  expect_bad_input([&] { Solver(MPI_COMM_WORLD, {kGrid, {0, 0, 0}}, s, op); }, "--box");
  op = {};
  op.shift = -1;
  expect_bad_input([&] { Solver(MPI_COMM_WORLD, {kGrid, {0, 0, 0}}, s, op); }, "--shift");
  op.shift = 0;
  op.coefficient = "abc";
  expect_bad_input([&] { Solver(MPI_COMM_WORLD, {kGrid, {0, 0, 0}}, s, op); }, "--coefficient");
  op.coefficient = "expr:x-0.5";
  expect_bad_input([&] { Solver(MPI_COMM_WORLD, {kGrid, {0, 0, 0}}, s, op); }, "k must be");
  op.coefficient = "1";
  op.shift_field = "expr:x-0.5";
  expect_bad_input([&] { Solver(MPI_COMM_WORLD, {kGrid, {0, 0, 0}}, s, op); }, "sigma must be");
  op.shift_field = "expr:x";
  op.shift = 1;
  expect_bad_input([&] { Solver(MPI_COMM_WORLD, {kGrid, {0, 0, 0}}, s, op); }, "give one of them");
  op = {};
  op.bc = "x0=periodic";
  expect_bad_input(
      [&] {
        Solver(MPI_COMM_WORLD, {kGrid, {0, 0, 0}}, s, op);
      },
      "periodic needs both");
  op.bc = "x=robin";
  expect_bad_input([&] { Solver(MPI_COMM_WORLD, {kGrid, {0, 0, 0}}, s, op); }, "--bc");
  op.bc = "x=neumann,y=neumann,z=periodic";
  op.shift_field = "expr:0*x";
  expect_bad_input([&] { Solver(MPI_COMM_WORLD, {kGrid, {0, 0, 0}}, s, op); }, "sigma is 0");
  s.tol = -1;
  expect_bad_input([&] { Solver(MPI_COMM_WORLD, {kGrid, {0, 0, 0}}, s); }, "tol");
}

}  // namespace
}  // namespace halo3d
