// The one-round ghost exchange (DistributedOperator::exchange over a transport that
// fills_corners_in_one_round: mpi): every ghost point with a neighbour, faces, edges and
// corners, holds the global field's value after one round, points off the domain keep what
// they held, the messages are the ones its cost reports, and the result is bitwise that of
// the per-axis rounds; repeated face and one-round exchanges of both types through one
// transport (its persistent requests) each deliver their own field. Run under mpirun with
// 1-8 ranks: every process grid of that many.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "halo.hpp"
#include "host_copy.hpp"
#include "operator.hpp"
#include "problem.hpp"
#include "runtime.hpp"
#include "test_support.hpp"

namespace halo3d {
namespace {

using test::process_grids;
using test::world_rank;
using test::world_size;

// Odd sizes: uneven splits, and on 7-8 ranks boxes one point thick (a rank's low and high
// boundary layers are then the same layer).
const Int3 kGrids[] = {{11, 9, 13}, {5, 3, 7}};

bool fits(const Int3& grid, const Int3& procs) {
  return procs[0] <= grid[0] && procs[1] <= grid[1] && procs[2] <= grid[2];
}

bool in_domain(const Int3& grid, int gi, int gj, int gk) {
  return gi >= 0 && gi < grid[0] && gj >= 0 && gj < grid[1] && gk >= 0 && gk < grid[2];
}

// The global field of `seed`: each value a function of its global index.
template <class T>
T global_value(std::uint64_t seed, const Int3& grid, int gi, int gj, int gk) {
  return T(random_value(
      seed, std::uint64_t(gi) + std::uint64_t(grid[0]) * (gj + std::uint64_t(grid[1]) * gk)));
}

// This rank's box of the global field `seed`; its ghosts hold `ghost` values (this rank's
// own random garbage, or zeros as the solver's fields have off the domain).
template <class T>
std::vector<T> local_field(const Decomposition& d, std::uint64_t seed, bool garbage_ghosts) {
  const Layout l = d.layout();
  std::vector<T> h(l.padded_size(), T(0));
  if (garbage_ghosts)
    for (std::size_t c = 0; c < h.size(); ++c)
      h[c] = T(random_value(7000 + seed + 100 * std::uint64_t(d.rank), c));
  for (int k = 0; k < l.nz; ++k)
    for (int j = 0; j < l.ny; ++j)
      for (int i = 0; i < l.nx; ++i)
        h[l.at(i, j, k)] =
            global_value<T>(seed, d.grid, d.offset[0] + i, d.offset[1] + j, d.offset[2] + k);
  return h;
}

// Points of `got` that differ from what the one-round exchange must leave: the global value
// at every point of the padded box inside the domain (interior and ghosts), `before` off it.
template <class T>
long wrong_points(const Decomposition& d, std::uint64_t seed, const std::vector<T>& before,
                  const std::vector<T>& got, std::string& first) {
  const Layout l = d.layout();
  long wrong = 0;
  for (int k = -1; k <= l.nz; ++k)
    for (int j = -1; j <= l.ny; ++j)
      for (int i = -1; i <= l.nx; ++i) {
        const int gi = d.offset[0] + i, gj = d.offset[1] + j, gk = d.offset[2] + k;
        const std::ptrdiff_t c = l.at(i, j, k);
        const T want =
            in_domain(d.grid, gi, gj, gk) ? global_value<T>(seed, d.grid, gi, gj, gk) : before[c];
        if (got[c] == want) continue;
        if (wrong++ == 0)
          first = "rank " + std::to_string(d.rank) + " point " + std::to_string(i) + "," +
                  std::to_string(j) + "," + std::to_string(k);
      }
  return wrong;
}

// Neighbours of this rank in the process grid (offsets in {-1,0,1}^3 but 0), and the points
// of the sub-boxes they get: counted here from the boxes' extents, not from the plan.
void expected_messages(const Decomposition& d, std::size_t& messages, std::size_t& points) {
  messages = points = 0;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int off[3] = {dx, dy, dz};
        bool ok = dx || dy || dz;
        std::size_t n = 1;
        for (int a = 0; a < 3; ++a) {
          ok = ok && d.coords[a] + off[a] >= 0 && d.coords[a] + off[a] < d.procs[a];
          n *= off[a] ? 1 : std::size_t(d.count[a]);
        }
        if (ok) ++messages, points += n;
      }
}

// One exchange() of field `seed` in T on rt's operator, checked at every point.
template <class T>
void check_one_round(Runtime& rt, std::uint64_t seed) {
  const Decomposition& d = rt.decomp;
  Kernels& k = *rt.kernels;
  const std::vector<T> before = local_field<T>(d, seed, true);
  BasicBuffer<T> u = upload(k, before);
  rt.op->exchange(u.data());
  std::string first;
  const long wrong = wrong_points(d, seed, before, download(k, u), first);
  EXPECT_EQ(wrong, 0) << (sizeof(T) == 4 ? "float" : "double") << " grid " << to_string(d.grid)
                      << " procs " << to_string(d.procs) << ", first " << first;
}

std::unique_ptr<Runtime> mpi_runtime(const Int3& grid, const Int3& procs) {
  return make_runtime(test::laplacian_runtime(grid, procs, Transport::mpi), MPI_COMM_WORLD);
}

TEST(Exchange, OneRoundFillsEveryGhostOnEveryProcessGrid) {
  for (const Int3& grid : kGrids)
    for (const Int3& procs : process_grids(world_size())) {
      if (!fits(grid, procs)) continue;
      auto rt = mpi_runtime(grid, procs);
      ASSERT_TRUE(rt->op->transport().fills_corners_in_one_round());
      // Double and float interleaved with the sweeps' face exchanges through the same
      // transport: each exchange must deliver its own field, whatever came before.
      Buffer w(*rt->kernels, rt->decomp.layout().padded_size()),
          out(*rt->kernels, rt->decomp.layout().padded_size());
      check_one_round<double>(*rt, 1);
      rt->op->apply(w.data(), out.data());
      check_one_round<float>(*rt, 2);
      check_one_round<double>(*rt, 3);
      rt->op->apply(w.data(), out.data());
      check_one_round<float>(*rt, 4);
    }
}

TEST(Exchange, CostCountsTheNeighboursAndTheirSubBoxes) {
  for (const Int3& grid : kGrids)
    for (const Int3& procs : process_grids(world_size())) {
      if (!fits(grid, procs)) continue;
      auto rt = mpi_runtime(grid, procs);
      std::size_t messages = 0, points = 0;
      expected_messages(rt->decomp, messages, points);
      const DistributedOperator::ExchangeCost c = rt->op->exchange_cost();
      EXPECT_EQ(c.rounds, world_size() > 1 ? 1 : 0) << to_string(procs);
      EXPECT_EQ(c.messages, messages) << to_string(procs);
      EXPECT_EQ(c.bytes, points * sizeof(double)) << to_string(procs);
      // The face neighbours are the ones MPI_Cart_shift names.
      const Decomposition& d = rt->decomp;
      for (int a = 0; a < 3; ++a)
        for (int side = 0; side < 2; ++side) {
          int off[3] = {0, 0, 0};
          off[a] = 2 * side - 1;
          EXPECT_EQ(d.around[Decomposition::around_index(off[0], off[1], off[2])],
                    d.neighbor[a][side]);
        }
    }
}

// A transport without the one round (as ipc and nccl are): the mpi transport seen through a
// wrapper that says so, so that exchange() runs its per-axis rounds.
class PerAxisOnly final : public HaloTransport {
 public:
  explicit PerAxisOnly(std::unique_ptr<HaloTransport> t) : t_(std::move(t)) {}
  Transport kind() const override { return t_->kind(); }
  void start(const double* u, AxisMask axes) override { t_->start(u, axes); }
  void start(const float* u, AxisMask axes) override { t_->start(u, axes); }
  void finish(double* u) override { t_->finish(u); }
  void finish(float* u) override { t_->finish(u); }

 private:
  std::unique_ptr<HaloTransport> t_;
};

// The solver's fields (zero ghosts off the domain) after one round and after the per-axis
// rounds: the same bits at every point of the padded box, in double and float.
template <class T>
void compare_with_per_axis(Runtime& rt, DistributedOperator& per_axis, std::uint64_t seed) {
  const Decomposition& d = rt.decomp;
  Kernels& k = *rt.kernels;
  const std::vector<T> h = local_field<T>(d, seed, false);
  BasicBuffer<T> one = upload(k, h), axes = upload(k, h);
  rt.op->exchange(one.data());
  per_axis.exchange(axes.data());
  const std::vector<T> a = download(k, one), b = download(k, axes);
  long differ = 0;
  for (std::size_t c = 0; c < a.size(); ++c) differ += a[c] != b[c];
  EXPECT_EQ(differ, 0) << (sizeof(T) == 4 ? "float" : "double") << " grid " << to_string(d.grid)
                       << " procs " << to_string(d.procs);
  std::string first;
  EXPECT_EQ(wrong_points(d, seed, h, b, first), 0) << "per-axis rounds, first " << first;
}

TEST(Exchange, OneRoundBitwiseEqualToThePerAxisRounds) {
  for (const Int3& grid : kGrids)
    for (const Int3& procs : process_grids(world_size())) {
      if (!fits(grid, procs)) continue;
      auto rt = mpi_runtime(grid, procs);
      const HaloPlan plan = HaloPlan::build(rt->decomp);
      DistributedOperator per_axis(
          *rt->kernels, rt->decomp, rt->op->stencil(),
          std::make_unique<PerAxisOnly>(make_mpi_transport(*rt->kernels, plan, rt->cart.get())),
          false, rt->timers);
      int split = 0;
      for (int a = 0; a < 3; ++a) split += procs[a] > 1;
      EXPECT_EQ(per_axis.exchange_cost().rounds, split);
      EXPECT_EQ(per_axis.exchange_cost().messages, plan.faces.size());
      compare_with_per_axis<double>(*rt, per_axis, 11);
      compare_with_per_axis<float>(*rt, per_axis, 12);
    }
}

// Points of `got` wrong after a face exchange of the axes in `axes` of field `seed`: a face
// ghost (one index one step off the box, the others inside it) of an exchanged axis holds
// the global value where it is in the domain; every other point off edges and corners is
// as before (edges and corners may take a neighbour's rim, which the sweeps never read).
template <class T>
long wrong_face_points(const Decomposition& d, std::uint64_t seed, AxisMask axes,
                       const std::vector<T>& before, const std::vector<T>& got,
                       std::string& first) {
  const Layout l = d.layout();
  const int n[3] = {l.nx, l.ny, l.nz};
  long wrong = 0;
  for (int k = -1; k <= l.nz; ++k)
    for (int j = -1; j <= l.ny; ++j)
      for (int i = -1; i <= l.nx; ++i) {
        const int idx[3] = {i, j, k};
        int off = 0, axis = 0;
        for (int a = 0; a < 3; ++a)
          if (idx[a] < 0 || idx[a] >= n[a]) ++off, axis = a;
        if (off > 1) continue;
        const int gi = d.offset[0] + i, gj = d.offset[1] + j, gk = d.offset[2] + k;
        const std::ptrdiff_t c = l.at(i, j, k);
        const bool filled = off == 1 && ((axes >> axis) & 1u) && in_domain(d.grid, gi, gj, gk);
        const T want = filled ? global_value<T>(seed, d.grid, gi, gj, gk) : before[c];
        if (got[c] == want) continue;
        if (wrong++ == 0)
          first = "rank " + std::to_string(d.rank) + " point " + std::to_string(i) + "," +
                  std::to_string(j) + "," + std::to_string(k);
      }
  return wrong;
}

// One exchange of a fresh field `seed` in T through `t`: the faces of `axes`, or with
// axes == 0 the one round of every ghost; checked at every point it must fill or keep.
template <class T>
void check_transport_exchange(Runtime& rt, HaloTransport& t, AxisMask axes, std::uint64_t seed) {
  const Decomposition& d = rt.decomp;
  Kernels& k = *rt.kernels;
  const std::vector<T> before = local_field<T>(d, seed, true);
  BasicBuffer<T> u = upload(k, before);
  if (axes == 0) {
    t.start_all_ghosts(u.data());
  } else {
    t.start(u.data(), axes);
  }
  t.finish(u.data());
  std::string first;
  const std::vector<T> got = download(k, u);
  const long wrong = axes == 0 ? wrong_points(d, seed, before, got, first)
                               : wrong_face_points(d, seed, axes, before, got, first);
  EXPECT_EQ(wrong, 0) << (sizeof(T) == 4 ? "float" : "double") << " axes " << axes << " grid "
                      << to_string(d.grid) << " procs " << to_string(d.procs) << ", first "
                      << first;
}

// The mpi transport makes its messages' requests once (persistent: one set per scalar type
// and axis mask, one per type for the one round) and restarts them on every exchange. Three
// passes over every kind of exchange, double and float alternating (which comes first
// changes each pass), each a new random field: every exchange must deliver its own field through
// requests made for an earlier one.
TEST(Exchange, RepeatedExchangesThroughTheSameRequests) {
  for (const Int3& grid : kGrids)
    for (const Int3& procs : process_grids(world_size())) {
      if (!fits(grid, procs)) continue;
      auto rt = mpi_runtime(grid, procs);
      auto t = make_mpi_transport(*rt->kernels, HaloPlan::build(rt->decomp), rt->cart.get());
      std::uint64_t seed = 100;
      for (int pass = 0; pass < 3; ++pass)
        for (AxisMask axes = 0; axes <= kAllAxes; ++axes) {
          // Float first on the first pass: requests made for floats would move only half a
          // double exchange's bytes (made for doubles, a float exchange still arrives).
          if (pass % 2 == 0) check_transport_exchange<float>(*rt, *t, axes, ++seed);
          check_transport_exchange<double>(*rt, *t, axes, ++seed);
          if (pass % 2 == 1) check_transport_exchange<float>(*rt, *t, axes, ++seed);
        }
    }
}

// PersistentRequests on its own (MPI_COMM_SELF, each rank): restarted on new data, moved
// with its requests, refused while active, and released while a receive is still pending.
TEST(PersistentRequests, RestartedMovedAndReleased) {
  double in = 0, out = 0;
  PersistentRequests recvs(PersistentRequests::Kind::recv), sends(PersistentRequests::Kind::send);
  ASSERT_EQ(MPI_Recv_init(&in, 1, MPI_DOUBLE, 0, 7, MPI_COMM_SELF, recvs.add()), MPI_SUCCESS);
  ASSERT_EQ(MPI_Send_init(&out, 1, MPI_DOUBLE, 0, 7, MPI_COMM_SELF, sends.add()), MPI_SUCCESS);
  PersistentRequests moved = std::move(recvs);
  EXPECT_EQ(recvs.size(), 0u);
  EXPECT_EQ(moved.size(), 1u);
  for (std::uint64_t i = 0; i < 5; ++i) {
    out = random_value(std::uint64_t(world_rank()) + 1, i);
    moved.start_all();
    EXPECT_TRUE(moved.active());
    EXPECT_THROW(moved.start_all(), std::logic_error);
    sends.start_all();
    moved.wait_all();
    sends.wait_all();
    EXPECT_FALSE(moved.active());
    EXPECT_EQ(in, out) << i;
  }
  {
    // A receive no send will match, left active: the destructor cancels and frees it.
    double never = 0;
    PersistentRequests pending(PersistentRequests::Kind::recv);
    ASSERT_EQ(MPI_Recv_init(&never, 1, MPI_DOUBLE, 0, 8, MPI_COMM_SELF, pending.add()),
              MPI_SUCCESS);
    pending.start_all();
  }
  // The cancelled receive took nothing: a message on its tag still arrives here.
  out = 12345;
  double got = 0;
  MPI_Sendrecv(&out, 1, MPI_DOUBLE, 0, 8, &got, 1, MPI_DOUBLE, 0, 8, MPI_COMM_SELF,
               MPI_STATUS_IGNORE);
  EXPECT_EQ(got, 12345.0);
}

}  // namespace
}  // namespace halo3d
