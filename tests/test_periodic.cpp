// Periodic axes, the foundation (issue 25): the decomposition's neighbours wrap, and every
// halo exchange fills every ghost whose point wraps into the domain with the value of the
// global point it wraps to — by a message where the neighbour is another rank, by a local
// copy where it is this rank itself (one rank along a periodic axis; serial levels). Checked
// on random data at every ghost point (faces, edges, corners) of every rank, for periodic
// on 0-3 axes, every process grid of the rank count (1, 2 and 3 ranks along a periodic
// axis), double and float, the one-round and the per-axis exchange, the sweeps' face
// exchanges and a sweep itself, through every transport available here. Run under mpirun
// with 1-8 ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "errors.hpp"
#include "halo.hpp"
#include "host_copy.hpp"
#include "operator.hpp"
#include "problem.hpp"
#include "runtime.hpp"
#include "test_support.hpp"
#include "transports/transports.hpp"

namespace halo3d {
namespace {

using test::process_grids;
using test::world_rank;
using test::world_size;

// Odd sizes (uneven splits; boxes one point thick on 7-8 ranks, where a rank's low and high
// boundary layers are one layer) and a grid of one and two points along axes (a periodic
// axis of one point is its own neighbour on both sides).
const Int3 kGrids[] = {{11, 9, 13}, {5, 3, 7}, {2, 1, 3}};

// The 8 subsets of the axes, as Periodic.
std::vector<Periodic> all_periodic() {
  std::vector<Periodic> out;
  for (int m = 0; m < 8; ++m) out.push_back({(m & 1) != 0, (m & 2) != 0, (m & 4) != 0});
  return out;
}

std::string describe(const Decomposition& d) {
  return "grid " + to_string(d.grid) + " procs " + to_string(d.procs) + " periodic " +
         std::to_string(d.periodic[0]) + std::to_string(d.periodic[1]) +
         std::to_string(d.periodic[2]) + " rank " + std::to_string(d.rank);
}

bool fits(const Int3& grid, const Int3& procs) {
  return procs[0] <= grid[0] && procs[1] <= grid[1] && procs[2] <= grid[2];
}

// The global point (gi, gj, gk), possibly one step off the domain, wrapped on the periodic
// axes; false if it is off the domain on a non-periodic one.
bool wrap_into_domain(const Decomposition& d, int g[3]) {
  for (int a = 0; a < 3; ++a) {
    if (d.periodic[a]) g[a] = (g[a] + d.grid[a]) % d.grid[a];
    if (g[a] < 0 || g[a] >= d.grid[a]) return false;
  }
  return true;
}

template <class T>
T global_value(std::uint64_t seed, const Int3& grid, const int g[3]) {
  return T(random_value(
      seed, std::uint64_t(g[0]) + std::uint64_t(grid[0]) * (g[1] + std::uint64_t(grid[1]) * g[2])));
}

// This rank's box of the global field `seed`, its ghosts this rank's own random garbage, or
// zeros (as the solver's fields have off the domain: the per-axis rounds pass on the
// neighbours' ghost rims, which are then zero too).
template <class T>
std::vector<T> local_field(const Decomposition& d, std::uint64_t seed, bool garbage_ghosts = true) {
  const Layout l = d.layout();
  std::vector<T> h(l.padded_size(), T(0));
  for (std::size_t c = 0; garbage_ghosts && c < h.size(); ++c)
    h[c] = T(random_value(7000 + seed + 100 * std::uint64_t(d.rank), c));
  for (int k = 0; k < l.nz; ++k)
    for (int j = 0; j < l.ny; ++j)
      for (int i = 0; i < l.nx; ++i) {
        const int g[3] = {d.offset[0] + i, d.offset[1] + j, d.offset[2] + k};
        h[l.at(i, j, k)] = global_value<T>(seed, d.grid, g);
      }
  return h;
}

// Points of `got` wrong after an exchange of field `seed`. faces_only == false (exchange():
// one round or per-axis rounds): every point of the padded box whose global point wraps
// into the domain holds its value, every other point what it held before. faces_only ==
// true (a face exchange of the axes in `axes`): face ghosts of those axes (one index one
// step off the box) as above, every other point off edges and corners as before (edges and
// corners may take a neighbour's rim, which the sweeps never read).
template <class T>
long wrong_points(const Decomposition& d, std::uint64_t seed, bool faces_only, AxisMask axes,
                  const std::vector<T>& before, const std::vector<T>& got, std::string& first) {
  const Layout l = d.layout();
  long wrong = 0;
  for (int k = -1; k <= l.nz; ++k)
    for (int j = -1; j <= l.ny; ++j)
      for (int i = -1; i <= l.nx; ++i) {
        const int idx[3] = {i, j, k}, n[3] = {l.nx, l.ny, l.nz};
        int off = 0, axis = 0;
        for (int a = 0; a < 3; ++a)
          if (idx[a] < 0 || idx[a] >= n[a]) ++off, axis = a;
        if (faces_only && off > 1) continue;
        int g[3] = {d.offset[0] + i, d.offset[1] + j, d.offset[2] + k};
        bool filled = wrap_into_domain(d, g);
        if (faces_only && off == 1) filled = filled && ((axes >> axis) & 1u);
        const std::ptrdiff_t c = l.at(i, j, k);
        const T want = filled ? global_value<T>(seed, d.grid, g) : before[c];
        if (got[c] == want) continue;
        if (wrong++ == 0)
          first = "point " + std::to_string(i) + "," + std::to_string(j) + "," + std::to_string(k);
      }
  return wrong;
}

// A transport seen as one without the one round, so that exchange() runs its per-axis rounds
// (no transport's way now, kept for one that lacks the round) over each transport too.
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

// exchange() of field `seed` in T through `op`, checked at every point; garbage ghosts
// off the domain for the one round (it must leave them alone), zeros for the per-axis rounds.
template <class T>
void check_exchange(Kernels& k, const Decomposition& d, DistributedOperator& op, std::uint64_t seed,
                    const std::string& what) {
  const bool one_round = op.transport().fills_corners_in_one_round();
  const std::vector<T> before = local_field<T>(d, seed, one_round);
  BasicBuffer<T> u = upload(k, before);
  op.exchange(u.data());
  std::string first;
  EXPECT_EQ(wrong_points(d, seed, false, kAllAxes, before, download(k, u), first), 0)
      << what << (sizeof(T) == 4 ? " float " : " double ") << describe(d) << ", first " << first;
}

// A face exchange of `axes` (start/finish, as a sweep's) of field `seed` through `t`.
template <class T>
void check_faces(Kernels& k, const Decomposition& d, HaloTransport& t, AxisMask axes,
                 std::uint64_t seed, const std::string& what) {
  const std::vector<T> before = local_field<T>(d, seed);
  BasicBuffer<T> u = upload(k, before);
  t.start(u.data(), axes);
  t.finish(u.data());
  std::string first;
  EXPECT_EQ(wrong_points(d, seed, true, axes, before, download(k, u), first), 0)
      << what << (sizeof(T) == 4 ? " float" : " double") << " axes " << axes << " " << describe(d)
      << ", first " << first;
}

// Every check on decomposition d (rt's, or a serial level's) through one transport `t`
// (built for its plan): face exchanges of every axis mask, exchange() (one round where `t`
// has it, per-axis rounds otherwise and through PerAxisOnly), double and float, fresh fields,
// then face exchanges and exchange() alternating.
void check_transport(Runtime& rt, const Decomposition& d, std::unique_ptr<HaloTransport> t,
                     std::unique_ptr<HaloTransport> per_axis, const std::string& name) {
  Kernels& k = *rt.kernels;
  std::uint64_t seed = 1000;
  for (AxisMask axes = 1; axes <= kAllAxes; ++axes) {
    check_faces<double>(k, d, *t, axes, ++seed, name);
    check_faces<float>(k, d, *t, axes, ++seed, name);
  }
  HaloTransport& moved = *t;  // owned by op from here
  DistributedOperator op(k, d, rt.op->stencil(), std::move(t), false, rt.timers);
  check_exchange<double>(k, d, op, ++seed, name);
  check_exchange<float>(k, d, op, ++seed, name);
  // Face exchanges and one rounds alternating through the same transport (ipc's channels
  // count their exchanges per kind): each must still deliver its own field.
  for (AxisMask axes : {kAllAxes, AxisMask(1)}) {
    check_faces<float>(k, d, moved, axes, ++seed, name + " after one round");
    check_exchange<double>(k, d, op, ++seed, name + " again");
  }
  if (!per_axis) return;
  DistributedOperator rounds(k, d, rt.op->stencil(),
                             std::make_unique<PerAxisOnly>(std::move(per_axis)), false, rt.timers);
  check_exchange<double>(k, d, rounds, ++seed, name + " per-axis rounds");
  check_exchange<float>(k, d, rounds, ++seed, name + " per-axis rounds");
}

std::unique_ptr<Runtime> periodic_runtime(const Int3& grid, const Int3& procs, const Periodic& p) {
  RuntimeOptions ro = test::laplacian_runtime(grid, procs, Transport::mpi);
  ro.periodic = p;
  ro.overlap = OverlapMode::off;
  return make_runtime(ro, MPI_COMM_WORLD);
}

// The rank at process-grid coordinates c (x fastest: decompose passes (z, y, x) to MPI,
// which orders ranks row-major), or MPI_PROC_NULL off a non-periodic axis.
int rank_at(const Decomposition& d, const int off[3]) {
  int c[3];
  for (int a = 0; a < 3; ++a) {
    c[a] = d.coords[a] + off[a];
    if (d.periodic[a]) c[a] = (c[a] + d.procs[a]) % d.procs[a];
    if (c[a] < 0 || c[a] >= d.procs[a]) return MPI_PROC_NULL;
  }
  return c[0] + d.procs[0] * (c[1] + d.procs[1] * c[2]);
}

TEST(Periodic, NeighboursWrapOnEveryProcessGrid) {
  for (const Periodic& p : all_periodic())
    for (const Int3& procs : process_grids(world_size())) {
      Comm cart;
      const Decomposition d = decompose(MPI_COMM_WORLD, {12, 10, 9}, procs, cart, p);
      ASSERT_EQ(d.rank, world_rank());
      for (int a = 0; a < 3; ++a)
        for (int side = 0; side < 2; ++side) {
          int off[3] = {0, 0, 0};
          off[a] = 2 * side - 1;
          EXPECT_EQ(d.neighbor[a][side], rank_at(d, off)) << describe(d) << " axis " << a;
        }
      for (int dir = 0; dir < 27; ++dir) {
        const int off[3] = {dir % 3 - 1, dir / 3 % 3 - 1, dir / 9 - 1};
        const int want = dir == 13 ? MPI_PROC_NULL : rank_at(d, off);
        EXPECT_EQ(d.around[dir], want) << describe(d) << " dir " << dir;
      }
      // The plan: messages to other ranks, local copies where the neighbour is this rank.
      const HaloPlan plan = HaloPlan::build(d);
      for (const HaloFace& f : plan.faces) EXPECT_NE(f.neighbor, d.rank);
      for (const HaloFace& f : plan.self_faces) {
        EXPECT_EQ(f.neighbor, d.rank);
        EXPECT_TRUE(d.periodic[f.face.axis] && d.procs[f.face.axis] == 1) << describe(d);
      }
      int self_faces = 0;
      for (int a = 0; a < 3; ++a) self_faces += 2 * (d.periodic[a] && d.procs[a] == 1);
      EXPECT_EQ(int(plan.self_faces.size()), self_faces) << describe(d);
    }
}

TEST(Periodic, WholeBoxIsItsOwnNeighbour) {
  for (const Periodic& p : all_periodic()) {
    const Decomposition d = Decomposition::whole({4, 3, 5}, p);
    for (int a = 0; a < 3; ++a)
      EXPECT_EQ(d.neighbor[a],
                (std::array<int, 2>{p[a] ? 0 : MPI_PROC_NULL, p[a] ? 0 : MPI_PROC_NULL}));
    for (int dir = 0; dir < 27; ++dir) {
      const int off[3] = {dir % 3 - 1, dir / 3 % 3 - 1, dir / 9 - 1};
      EXPECT_EQ(d.around[dir], dir == 13 ? MPI_PROC_NULL : rank_at(d, off)) << dir;
    }
    const HaloPlan plan = HaloPlan::build(d);
    EXPECT_TRUE(plan.faces.empty());
    EXPECT_TRUE(plan.around.empty());
  }
}

// Every transport this build and backend have (mpi and mpi-cuda; ipc and nccl on GPU runs),
// on every grid, process grid and set of periodic axes, each with its one round and through
// PerAxisOnly.
TEST(Periodic, EveryGhostHoldsThePointItWrapsTo) {
  for (const Int3& grid : kGrids)
    for (const Int3& procs : process_grids(world_size())) {
      if (!fits(grid, procs)) continue;
      for (const Periodic& p : all_periodic()) {
        auto rt = periodic_runtime(grid, procs, p);
        const HaloPlan plan = HaloPlan::build(rt->decomp);
        const TransportContext tc{*rt->kernels, plan, rt->cart.get(), rt->hosts, rt->peer};
        for (Transport name : concrete_transports()) {
          std::unique_ptr<HaloTransport> t, per_axis;
          try {
            t = make_named_transport(name, tc);
            if (t->fills_corners_in_one_round()) per_axis = make_named_transport(name, tc);
          } catch (const Error& e) {
            ASSERT_EQ(e.code(), kExitUnavailable) << e.what();
            continue;
          }
          check_transport(*rt, rt->decomp, std::move(t), std::move(per_axis), to_string(name));
        }
      }
    }
}

// A serial level (a gathered multigrid level: Decomposition::whole on every rank, mpi over
// MPI_COMM_SELF, as make_operator builds it): its periodic ghosts are all local copies.
TEST(Periodic, SerialLevelWrapsByLocalCopies) {
  auto rt = periodic_runtime({8, 8, 8}, {0, 0, 0}, {});  // only its kernels are used
  for (const Int3& grid : kGrids)
    for (const Periodic& p : all_periodic()) {
      const Decomposition d = Decomposition::whole(grid, p);
      const HaloPlan plan = HaloPlan::build(d);
      check_transport(*rt, d, make_mpi_transport(*rt->kernels, plan, MPI_COMM_SELF),
                      make_mpi_transport(*rt->kernels, plan, MPI_COMM_SELF), "serial mpi");
    }
}

// u holding small integers, so that A u is exact in any order: the operator's sweeps, with
// their own face exchange, overlapped or not, against the periodic 7-point Laplacian
// (cx = cy = cz = 1, diag 6) computed here with the neighbours wrapped.
TEST(Periodic, SweepReadsTheWrappedNeighbours) {
  const Int3 grid{7, 6, 5};
  for (const Int3& procs : process_grids(world_size())) {
    if (!fits(grid, procs)) continue;
    for (const Periodic& p : all_periodic()) {
      auto rt = periodic_runtime(grid, procs, p);
      const Decomposition& d = rt->decomp;
      const Layout l = d.layout();
      auto value = [&](int g[3]) {
        if (!wrap_into_domain(d, g)) return 0.0;  // Dirichlet zero beyond a non-periodic face
        return double(int(1000 * global_value<double>(5, d.grid, g)));
      };
      std::vector<double> h(l.padded_size(), 0.0), want(l.padded_size(), 0.0);
      for (int k = 0; k < l.nz; ++k)
        for (int j = 0; j < l.ny; ++j)
          for (int i = 0; i < l.nx; ++i) {
            int g[3] = {d.offset[0] + i, d.offset[1] + j, d.offset[2] + k};
            h[l.at(i, j, k)] = value(g);
          }
      for (int k = 0; k < l.nz; ++k)
        for (int j = 0; j < l.ny; ++j)
          for (int i = 0; i < l.nx; ++i) {
            double sum = 0;
            for (int a = 0; a < 3; ++a)
              for (int s = -1; s <= 1; s += 2) {
                int g[3] = {d.offset[0] + i, d.offset[1] + j, d.offset[2] + k};
                g[a] += s;
                sum += value(g);
              }
            want[l.at(i, j, k)] = 6 * h[l.at(i, j, k)] - sum;
          }
      for (bool overlap : {false, true}) {
        rt->op->set_overlap(overlap);
        Buffer u = upload(*rt->kernels, h), out(*rt->kernels, l.padded_size());
        rt->op->apply(u.data(), out.data());
        const std::vector<double> got = download(*rt->kernels, out);
        long wrong = 0;
        for (int k = 0; k < l.nz; ++k)
          for (int j = 0; j < l.ny; ++j)
            for (int i = 0; i < l.nx; ++i) wrong += got[l.at(i, j, k)] != want[l.at(i, j, k)];
        EXPECT_EQ(wrong, 0) << describe(d) << " overlap " << overlap;
      }
    }
  }
}

// The checker itself: a wrap that fills a ghost from the wrong layer is caught. The ghost
// layer below x of a whole periodic box, filled from its own low boundary layer (as a copy
// that forgot to take the opposite face would) instead of the high one.
TEST(Periodic, CheckerCatchesAWrongWrap) {
  const Decomposition d = Decomposition::whole({6, 4, 3}, {true, false, false});
  const Layout l = d.layout();
  const std::vector<double> before = local_field<double>(d, 9);
  std::vector<double> got = before;
  for (int k = 0; k < l.nz; ++k)
    for (int j = 0; j < l.ny; ++j) {
      got[l.at(-1, j, k)] = before[l.at(0, j, k)];  // wrong: should be nx - 1
      got[l.at(l.nx, j, k)] = before[l.at(0, j, k)];
    }
  std::string first;
  EXPECT_EQ(wrong_points(d, 9, true, 1, before, got, first), long(l.ny) * l.nz);
  for (int k = 0; k < l.nz; ++k)
    for (int j = 0; j < l.ny; ++j) got[l.at(-1, j, k)] = before[l.at(l.nx - 1, j, k)];
  EXPECT_EQ(wrong_points(d, 9, true, 1, before, got, first), 0) << first;
}

}  // namespace
}  // namespace halo3d
