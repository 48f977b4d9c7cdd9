#include "decomposition.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "errors.hpp"
#include "point_ops.hpp"

namespace halo3d {

Periodic periodic_axes(const FaceKinds& f) {
  Periodic p{};
  for (int a = 0; a < 3; ++a) p[a] = f[2 * a] == Bc::periodic;
  return p;
}

int Decomposition::intervals(int a) const {
  return ops::axis_intervals(grid[a], periodic[a], neumann_face(a, 0), neumann_face(a, 1));
}

int neumann_mask(const FaceKinds& f) {
  int m = 0;
  for (int i = 0; i < 6; ++i)
    if (f[i] == Bc::neumann) m |= 1 << i;
  return m;
}

std::string to_string(const Int3& v) {
  return std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]);
}
namespace {

std::string str(const Int3& v) {
  return std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]);
}

bool fits(const Int3& grid, const Int3& p) {
  for (int d = 0; d < 3; ++d)
    if (p[d] < 1 || p[d] > grid[d]) return false;
  return true;
}

// Faces exchanged per rank, as a cost: what a good process grid keeps small.
double halo_cost(const Int3& g, const Int3& p) {
  const double lx = double(g[0]) / p[0], ly = double(g[1]) / p[1], lz = double(g[2]) / p[2];
  return (p[0] > 1 ? ly * lz : 0) + (p[1] > 1 ? lx * lz : 0) + (p[2] > 1 ? lx * ly : 0);
}

}  // namespace

Span split_axis(int n, int p, int coord, bool odd_splits) {
  const int base = n / p, extra = n % p;
  const auto split = [&](int c) {
    const int s = c * base + std::min(c, extra);
    return odd_splits && c > 0 && c < p && s % 2 == 0 ? s - 1 : s;
  };
  return {split(coord), split(coord + 1) - split(coord)};
}

namespace {

// --procs with every factor given: it must make `ranks` and leave every rank points.
Int3 checked_procs(const Int3& grid, int ranks, const Int3& requested) {
  const long long prod = 1LL * requested[0] * requested[1] * requested[2];
  if (prod != ranks)
    throw BadInput("--procs " + str(requested) + " makes " + std::to_string(prod) +
                   " ranks but the job has " + std::to_string(ranks));
  if (!fits(grid, requested))
    throw BadInput("--procs " + str(requested) + " would leave ranks without points on grid " +
                   str(grid));
  return requested;
}

// MPI_Dims_create's balanced factors, with the larger ones on the longer free axes.
Int3 balanced_procs(const Int3& grid, int ranks, const Int3& requested) {
  Int3 dims = requested;
  HALO3D_MPI_CHECK(MPI_Dims_create(ranks, 3, dims.data()));
  std::vector<int> free_axes, factors;
  for (int d = 0; d < 3; ++d)
    if (requested[d] == 0) free_axes.push_back(d), factors.push_back(dims[d]);
  std::sort(factors.begin(), factors.end(), std::greater<>());
  // On equal lengths split z first, then y: their faces are contiguous or row-strided,
  // while an x face is a gather with a stride of a whole row.
  std::sort(free_axes.begin(), free_axes.end(),
            [&](int a, int b) { return grid[a] != grid[b] ? grid[a] > grid[b] : a > b; });
  for (std::size_t i = 0; i < free_axes.size(); ++i) dims[free_axes[i]] = factors[i];
  return dims;
}

// Thin grids: search every factorisation for the one with the least halo.
Int3 least_halo_procs(const Int3& grid, int ranks, const Int3& requested) {
  Int3 best{0, 0, 0};
  double best_cost = std::numeric_limits<double>::max();
  for (int px = 1; px <= ranks; ++px) {
    if (ranks % px) continue;
    for (int py = 1; py <= ranks / px; ++py) {
      if ((ranks / px) % py) continue;
      const Int3 p{px, py, ranks / px / py};
      bool ok = fits(grid, p);
      for (int d = 0; d < 3; ++d) ok = ok && (requested[d] == 0 || requested[d] == p[d]);
      if (ok && halo_cost(grid, p) < best_cost) best_cost = halo_cost(grid, p), best = p;
    }
  }
  if (best[0] == 0)
    throw BadInput("grid " + str(grid) + " cannot be split over " + std::to_string(ranks) +
                   " ranks without leaving some rank with no points");
  return best;
}

}  // namespace

Int3 choose_procs(const Int3& grid, int ranks, const Int3& requested) {
  for (int d = 0; d < 3; ++d) {
    if (grid[d] < 1) throw BadInput("--grid " + str(grid) + ": every size must be >= 1");
    if (requested[d] < 0) throw BadInput("--procs " + str(requested) + ": entries must be >= 0");
  }
  const bool all_given = requested[0] > 0 && requested[1] > 0 && requested[2] > 0;
  if (all_given) return checked_procs(grid, ranks, requested);
  int fixed = 1;
  for (int d = 0; d < 3; ++d)
    if (requested[d] > 0) fixed *= requested[d];
  if (ranks % fixed != 0)
    throw BadInput("--procs " + str(requested) + ": " + std::to_string(ranks) +
                   " ranks cannot be split with those fixed factors");
  const Int3 dims = balanced_procs(grid, ranks, requested);
  if (fits(grid, dims)) return dims;
  return least_halo_procs(grid, ranks, requested);
}

namespace {

// Decomposition::around from the process grid: `rank_at(x, y, z)` names the rank at those
// process-grid coordinates, which are wrapped into range on periodic axes; off the grid on
// the others, there is no rank.
template <class RankAt>
void set_around(Decomposition& d, const RankAt& rank_at) {
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        int c[3] = {d.coords[0] + dx, d.coords[1] + dy, d.coords[2] + dz};
        bool inside = dx || dy || dz;
        for (int a = 0; a < 3; ++a) {
          if (d.periodic[a]) c[a] = (c[a] + d.procs[a]) % d.procs[a];
          inside = inside && c[a] >= 0 && c[a] < d.procs[a];
        }
        if (inside) d.around[Decomposition::around_index(dx, dy, dz)] = rank_at(c);
      }
}

}  // namespace

Decomposition Decomposition::whole(const Int3& g, const Periodic& periodic) {
  Decomposition d;
  d.grid = d.count = g;
  d.procs = {1, 1, 1};
  d.periodic = periodic;
  for (int a = 0; a < 3; ++a) d.neighbor[a].fill(periodic[a] ? d.rank : MPI_PROC_NULL);
  // Before this had periodic axes, a whole box had no `around`; now its only neighbour is
  // itself, across the periodic axes.
  set_around(d, [&](const int*) { return d.rank; });
  return d;
}

Decomposition decompose(MPI_Comm comm, const Int3& grid, const Int3& procs_requested, Comm& cart,
                        const Periodic& periodic) {
  Decomposition d;
  d.ranks = comm_size(comm);
  d.grid = grid;
  d.periodic = periodic;
  d.procs = choose_procs(grid, d.ranks, procs_requested);
  // MPI orders Cartesian ranks with the last dimension fastest; pass (z,y,x) so that x
  // neighbours are adjacent ranks, which keeps x-neighbours on one host more often.
  int dims[3] = {d.procs[2], d.procs[1], d.procs[0]};
  int periods[3] = {periodic[2], periodic[1], periodic[0]};
  MPI_Comm c;
  HALO3D_MPI_CHECK(MPI_Cart_create(comm, 3, dims, periods, 0, &c));
  cart = Comm(c);
  d.rank = cart.rank();
  int zyx[3];
  HALO3D_MPI_CHECK(MPI_Cart_coords(c, d.rank, 3, zyx));
  d.coords = {zyx[2], zyx[1], zyx[0]};
  for (int a = 0; a < 3; ++a) {
    if (odd_splits(grid[a], periodic[a]) && d.procs[a] - 1 > grid[a] / 2)
      throw BadInput("--grid " + str(grid) + " on process grid " + str(d.procs) + ": " +
                     std::to_string(d.procs[a]) + " ranks along " + "xyz"[a] +
                     " leave some of them one point; multigrid's first coarsening of an even "
                     "axis needs at most " +
                     std::to_string(grid[a] / 2 + 1) + " (give --procs)");
  }
  for (int a = 0; a < 3; ++a) {
    const Span s = split_axis(grid[a], d.procs[a], d.coords[a], odd_splits(grid[a], periodic[a]));
    d.offset[a] = s.offset;
    d.count[a] = s.count;
    // Periodic: MPI_Cart_shift wraps, and names this rank itself where it is alone.
    HALO3D_MPI_CHECK(MPI_Cart_shift(c, 2 - a, 1, &d.neighbor[a][0], &d.neighbor[a][1]));
  }
  set_around(d, [&](const int* xyz) {
    const int czyx[3] = {xyz[2], xyz[1], xyz[0]};  // the communicator's order (above)
    int r = MPI_PROC_NULL;
    HALO3D_MPI_CHECK(MPI_Cart_rank(c, czyx, &r));
    return r;
  });
  return d;
}

}  // namespace halo3d
