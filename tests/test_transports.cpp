// Halo transports (run under mpirun with 1-4 ranks; HALO3D_TEST_BACKEND=host|cuda): every
// transport available here, overlap on and off, gives bitwise the results of mpi with
// overlap off on the same decomposition; repeated exchanges deliver the right ghosts; auto
// picks an available one; unavailable ones fail alike on every rank with exit code 6.
// A transport not available here is skipped (its error is collective, so all ranks skip).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "box_gather.hpp"
#include "errors.hpp"
#include "problem.hpp"
#include "runtime.hpp"
#include "solvers.hpp"
#include "test_support.hpp"

namespace halo3d {
namespace {

using test::backend_under_test;
using test::process_grids;
using test::world_rank;
using test::world_size;

std::vector<std::string> transport_names() {
  std::vector<std::string> names;
  for (Transport t : concrete_transports()) names.push_back(to_string(t));
  return names;
}
const std::vector<std::string> kTransports = transport_names();

struct Outcome {
  std::vector<double> u;        // this rank's interior, x fastest
  std::vector<double> history;  // residuals
  long iterations = 0;
  std::string transport;
};

std::vector<double> interior(const Layout& l, const std::vector<double>& padded) {
  std::vector<double> v;
  for (int k = 0; k < l.nz; ++k)
    for (int j = 0; j < l.ny; ++j)
      for (int i = 0; i < l.nx; ++i) v.push_back(padded[l.at(i, j, k)]);
  return v;
}

// The solve path in-process; nullopt (and why) when the transport is unavailable here.
std::optional<Outcome> solve_with(SolveOptions o, const std::string& halo, bool overlap,
                                  std::string& why, const std::string& peer_access = "auto") {
  o.backend = backend_under_test();
  o.halo = test::choice<Transport>(halo);
  o.overlap = overlap ? OverlapMode::on : OverlapMode::off;
  o.peer_access = test::choice<PeerAccess>(peer_access);
  std::optional<test::InProcessSolve> run;
  try {
    run = test::solve_in_process(o, MPI_COMM_WORLD);
  } catch (const Error& e) {
    if (e.code() != kExitUnavailable) throw;
    why = e.what();
    return std::nullopt;
  }
  const DriveResult& r = run->result;
  auto& rt = run->rt;
  Outcome out;
  out.u = interior(rt->decomp.layout(), run->solution());
  out.history = r.history;
  out.iterations = r.iterations;
  out.transport = rt->op->transport().name();
  return out;
}

SolveOptions cg_options(const Int3& procs) {
  SolveOptions o;
  o.grid = {13, 11, 9};
  o.procs = procs;
  o.rhs = "random";
  o.seed = 11;
  o.max_iters = 20;
  o.tol = 1e-300;  // exactly max_iters iterations
  o.output = "none";
  return o;
}

bool all_equal(bool mine) {
  int v = mine ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return v == 1;
}

void print0(const std::string& s) {
  if (comm_rank(MPI_COMM_WORLD) == 0) std::printf("  %s\n", s.c_str());
}

TEST(Transports, CgBitwiseEqualToMpiWithOverlapOff) {
  int tried = 0;
  for (const Int3& procs : process_grids(world_size())) {
    std::string why;
    const auto ref = solve_with(cg_options(procs), "mpi", false, why);
    ASSERT_TRUE(ref.has_value()) << why;
    for (const std::string& t : kTransports)
      for (bool overlap : {false, true}) {
        const auto got = solve_with(cg_options(procs), t, overlap, why);
        if (!got) {
          if (procs == process_grids(world_size()).front())
            print0(t + " not available here: " + why);
          break;
        }
        ++tried;
        EXPECT_EQ(got->transport, t);
        EXPECT_EQ(got->iterations, ref->iterations);
        // Bitwise, on every rank (EXPECT_EQ on doubles compares with ==; NaN would fail).
        EXPECT_TRUE(all_equal(got->u == ref->u))
            << t << " overlap " << overlap << " procs " << to_string(procs);
        EXPECT_TRUE(all_equal(got->history == ref->history)) << t << " overlap " << overlap;
      }
  }
  EXPECT_GT(tried, 0);
}

TEST(Transports, HeatBitwiseEqualToMpiWithOverlapOff) {
  SolveOptions o;
  o.problem = ProblemKind::heat;
  o.grid = {12, 10, 11};
  o.modes = {{1, 1, 1}, {2, 3, 1}};
  o.steps = 15;
  o.output = "none";
  std::string why;
  const auto ref = solve_with(o, "mpi", false, why);
  ASSERT_TRUE(ref.has_value()) << why;
  for (const std::string& t : kTransports)
    for (bool overlap : {false, true}) {
      const auto got = solve_with(o, t, overlap, why);
      if (!got) break;
      EXPECT_TRUE(all_equal(got->u == ref->u)) << t << " overlap " << overlap;
    }
}

TEST(Transports, PeerAccessOffGivesTheSameResults) {
  std::string why;
  const auto ref = solve_with(cg_options({0, 0, 0}), "mpi", false, why);
  ASSERT_TRUE(ref.has_value()) << why;
  const auto got = solve_with(cg_options({0, 0, 0}), "ipc", true, why, "off");
  if (!got) GTEST_SKIP() << why;
  EXPECT_TRUE(all_equal(got->u == ref->u));
}

// One exchange of new values (seeded by `round`) in u through t; checks every ghost
// that has a neighbour against the neighbour's value, bitwise, in u's scalar type.
template <class T>
void exchange_round(HaloTransport& t, Kernels& k, BasicBuffer<T>& u, const Decomposition& d,
                    int round, const std::string& name) {
  const Layout l = d.layout();
  const Int3 grid = d.grid;
  auto value = [&](int gi, int gj, int gk) {
    const bool inside =
        gi >= 0 && gi < grid[0] && gj >= 0 && gj < grid[1] && gk >= 0 && gk < grid[2];
    return T(
        inside ? random_value(100 + round, std::uint64_t(gi) + 100 * (gj + 100 * std::uint64_t(gk)))
               : 0.0);
  };
  std::vector<T> h(l.padded_size(), T(0));
  for (int kk = 0; kk < l.nz; ++kk)
    for (int j = 0; j < l.ny; ++j)
      for (int i = 0; i < l.nx; ++i)
        h[l.at(i, j, kk)] = value(d.offset[0] + i, d.offset[1] + j, d.offset[2] + kk);
  k.copy(u.data(), h.data(), h.size(), Lane::interior);
  t.start(u.data());
  t.finish(u.data());
  std::vector<T> got(l.padded_size());
  k.synchronize();
  k.copy(got.data(), u.data(), got.size(), Lane::interior);
  k.synchronize();
  for (int kk = -1; kk <= l.nz; ++kk)
    for (int j = -1; j <= l.ny; ++j)
      for (int i = -1; i <= l.nx; ++i) {
        const int outside = (i < 0 || i >= l.nx) + (j < 0 || j >= l.ny) + (kk < 0 || kk >= l.nz);
        if (outside != 1) continue;
        const T want = value(d.offset[0] + i, d.offset[1] + j, d.offset[2] + kk);
        if (got[l.at(i, j, kk)] != want) {
          ADD_FAILURE() << name << " " << (sizeof(T) == 4 ? "float" : "double") << " procs "
                        << to_string(d.procs) << " round " << round << " ghost " << i << "," << j
                        << "," << kk << ": " << got[l.at(i, j, kk)] << " != " << want;
          return;
        }
      }
}

// Ghosts after several exchanges of changing data through the same transport object:
// the per-exchange handshake must neither deliver stale data nor overwrite unread data.
// `types`: per round, 'd' a double field, 'f' a float field (a float multigrid level's
// exchange; one transport moves either type).
void repeated_exchanges(const std::string& types) {
  const Int3 grid{11, 6, 9};
  for (const Int3& procs : process_grids(world_size())) {
    if (procs[0] > grid[0] || procs[1] > grid[1] || procs[2] > grid[2]) continue;
    auto rt = make_runtime(test::laplacian_runtime(grid, procs, Transport::mpi), MPI_COMM_WORLD);
    const Decomposition& d = rt->decomp;
    const Layout l = d.layout();
    const HaloPlan plan = HaloPlan::build(d);
    const TransportContext tc{*rt->kernels, plan, rt->cart.get(), rt->hosts,
                              peer_policy(PeerAccess::auto_)};
    for (const std::string& name : kTransports) {
      std::unique_ptr<HaloTransport> t;
      try {
        t = make_named_transport(test::choice<Transport>(name), tc);
      } catch (const Error& e) {
        ASSERT_EQ(e.code(), kExitUnavailable);
        continue;
      }
      // Two fields of each type used alternately, new values every round.
      Kernels& k = *rt->kernels;
      Buffer dfields[2] = {Buffer(k, l.padded_size()), Buffer(k, l.padded_size())};
      FloatBuffer ffields[2] = {FloatBuffer(k, l.padded_size()), FloatBuffer(k, l.padded_size())};
      for (int round = 0; round < int(types.size()); ++round) {
        if (types[round] == 'f')
          exchange_round(*t, k, ffields[round % 2], d, round, name);
        else
          exchange_round(*t, k, dfields[round % 2], d, round, name);
      }
    }
  }
}

TEST(Transports, RepeatedExchangesDeliverTheNeighboursValues) { repeated_exchanges("dddddd"); }
TEST(Transports, RepeatedFloatExchangesDeliverTheNeighboursValues) { repeated_exchanges("ffffff"); }
TEST(Transports, DoubleAndFloatExchangesInterleaved) { repeated_exchanges("dfdffddf"); }

TEST(Transports, AutoPicksTheFastestAvailable) {
  auto rt = make_runtime(test::laplacian_runtime({16, 12, 10}), MPI_COMM_WORLD);
  const HaloSelection& s = rt->halo_selection;
  EXPECT_EQ(s.requested, Transport::auto_);
  EXPECT_EQ(s.chosen, rt->op->transport().kind());
  if (rt->kernels->name() != "cuda" || world_size() == 1) {
    EXPECT_EQ(s.chosen, Transport::mpi);
    EXPECT_TRUE(s.candidates.empty());
    return;
  }
  ASSERT_FALSE(s.candidates.empty());
  double best = 1e300;
  Transport best_name = Transport::auto_;
  for (const auto& [n, t] : s.candidates)
    if (t < best) best = t, best_name = n;
  EXPECT_EQ(s.chosen, best_name);
  for (const auto& [n, t] : s.candidates)
    print0("auto candidate " + to_string(n) + ": " + std::to_string(t) + " s");
}

TEST(Transports, UnavailableTransportsFailAlikeWithExitCode6) {
  auto attempt = [](const std::string& halo) -> std::optional<Error> {
    const RuntimeOptions ro =
        test::laplacian_runtime({8, 8, 8}, {0, 0, 0}, test::choice<Transport>(halo));
    try {
      make_runtime(ro, MPI_COMM_WORLD);
    } catch (const Error& e) {
      return e;
    }
    return std::nullopt;
  };
  if (backend_under_test() == Backend::host) {
    for (const std::string& t : {"mpi-cuda", "ipc", "nccl"}) {
      const auto e = attempt(t);
      ASSERT_TRUE(e.has_value()) << t << " should be unavailable on the host backend";
      EXPECT_EQ(e->code(), kExitUnavailable);
      EXPECT_TRUE(e->collective());
      EXPECT_NE(std::string(e->what()).find("--halo " + t), std::string::npos) << e->what();
    }
    return;
  }
  // CUDA: NCCL refuses two ranks on one GPU before calling NCCL (no hang).
  RuntimeOptions ro = test::laplacian_runtime({8, 8, 8}, {0, 0, 0}, Transport::mpi);
  ro.backend = Backend::cuda;
  auto rt = make_runtime(ro, MPI_COMM_WORLD);
  const bool shared =
      !shared_gpu(gather_rank_gpus(*rt->kernels, rt->hosts, MPI_COMM_WORLD), rt->hosts).empty();
  rt.reset();
  if (shared && nccl_compiled()) {
    const auto e = attempt("nccl");
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->code(), kExitUnavailable);
    EXPECT_NE(std::string(e->what()).find("share GPU"), std::string::npos) << e->what();
    EXPECT_NE(std::string(e->what()).find("ipc"), std::string::npos) << e->what();
  }
  if (!all_cuda_aware_mpi(MPI_COMM_WORLD)) {
    const auto e = attempt("mpi-cuda");
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->code(), kExitUnavailable);
    EXPECT_NE(std::string(e->what()).find("CUDA-aware"), std::string::npos) << e->what();
  }
}

TEST(Transports, OverlapMeasurementWorksForEveryTransport) {
  if (world_size() == 1) GTEST_SKIP() << "no halo on one rank";
  for (const std::string& t : kTransports) {
    const RuntimeOptions ro =
        test::laplacian_runtime({20, 16, 12}, {0, 0, 0}, test::choice<Transport>(t));
    std::unique_ptr<Runtime> rt;
    try {
      rt = make_runtime(ro, MPI_COMM_WORLD);
    } catch (const Error&) {
      continue;
    }
    const Layout l = rt->decomp.layout();
    Buffer u(*rt->kernels, l.padded_size()), out(*rt->kernels, l.padded_size());
    const auto ov = rt->op->measure_overlap(u.data(), out.data(), 3, rt->cart.get());
    EXPECT_GT(ov.halo_s, 0) << t;
    EXPECT_GT(ov.overlapped_s, 0) << t;
    EXPECT_GE(ov.hidden_fraction, 0) << t;
    EXPECT_LE(ov.hidden_fraction, 1) << t;
  }
}

// The multigrid gather: every rank's box of a random grid, in backend memory, arrives at
// its place in the whole grid on every rank, for boxes of uneven sizes (one rank may own
// none), in double and float; the ipc path (CUDA, one host) gives the host path's bits.
template <class T>
void check_box_gather(Runtime& rt, const Int3& grid, const std::vector<int>& boxes) {
  Kernels& k = *rt.kernels;
  const int rank = comm_rank(rt.cart.get());
  const Layout whole{grid[0], grid[1], grid[2]}, mine = box_layout(boxes, rank);
  auto value = [&](int i, int j, int kk) {  // random-looking, exact in float
    return T(std::sin(1.0 + i * 0.37 + j * 1.91 + kk * 3.07) * 1024.0) / T(64);
  };
  std::vector<T> own(mine.padded_size(), T(-7));  // ghosts: garbage that must not arrive
  const int* b = &boxes[6 * std::size_t(rank)];
  for (int kk = 0; kk < mine.nz; ++kk)
    for (int j = 0; j < mine.ny; ++j)
      for (int i = 0; i < mine.nx; ++i)
        own[mine.at(i, j, kk)] = value(b[0] + i, b[1] + j, b[2] + kk);
  BasicBuffer<T> own_d(k, own.size()), whole_d(k, whole.padded_size());
  k.copy(own_d.data(), own.data(), own.size(), Lane::interior);
  for (bool ipc : {false, true}) {
    auto g = make_box_gather(k, boxes, grid, rt.cart.get(), rt.hosts, rt.peer, ipc);
    if (ipc && g->describe() != "ipc") continue;  // host backend, or not one host
    for (int rep = 0; rep < 3; ++rep) g->gather(own_d.data(), whole_d.data());
    std::vector<T> got(whole.padded_size());
    k.synchronize();
    k.copy(got.data(), whole_d.data(), got.size(), Lane::interior);
    k.synchronize();
    long bad = 0;
    for (int kk = -1; kk <= whole.nz; ++kk)
      for (int j = -1; j <= whole.ny; ++j)
        for (int i = -1; i <= whole.nx; ++i) {
          const bool ghost =
              i < 0 || j < 0 || kk < 0 || i == whole.nx || j == whole.ny || kk == whole.nz;
          bad += got[whole.at(i, j, kk)] != (ghost ? T(0) : value(i, j, kk));
        }
    EXPECT_TRUE(all_equal(bad == 0))
        << g->describe() << ": " << bad << " wrong points on rank " << rank;
  }
}

TEST(Transports, BoxGatherPlacesEveryRanksBoxInTheWholeGrid) {
  auto rt = make_runtime(test::laplacian_runtime({16, 12, 10}), MPI_COMM_WORLD);
  const int ranks = world_size(), rank = world_rank();
  const Int3 grid{9, 7, 5};
  // Slabs along z of uneven thickness (the last rank may own none), full in x and y.
  std::vector<int> boxes;
  for (int r = 0, z = 0; r < ranks; ++r) {
    const int n = std::min(grid[2] - z, r % 2 ? 1 : 2);
    boxes.insert(boxes.end(), {0, 0, z, grid[0], grid[1], r + 1 == ranks ? grid[2] - z : n});
    z += n;
  }
  (void)rank;
  check_box_gather<double>(*rt, grid, boxes);
  check_box_gather<float>(*rt, grid, boxes);
}

}  // namespace
}  // namespace halo3d
