// 3D Cartesian block decomposition of the global grid over the ranks.
#pragma once
#include <mpi.h>

#include <array>
#include <string>

#include "layout.hpp"
#include "mpi_env.hpp"

namespace halo3d {

using Int3 = std::array<int, 3>;
// Per axis: whether it wraps (periodic boundaries on both of its faces).
using Periodic = std::array<bool, 3>;
// A face's boundary condition (--bc): Dirichlet values in the ghost beyond it, periodic
// (both faces of the axis: the ghosts wrap), or Neumann (a flux; the axis is node-centred:
// its boundary node is an unknown, the ghost beyond it unused).
enum class Bc : unsigned char { dirichlet, periodic, neumann };
// Per face, x0 x1 y0 y1 z0 z1 (index 2 axis + side).
using FaceKinds = std::array<Bc, 6>;
// The axes whose faces are periodic.
Periodic periodic_axes(const FaceKinds& f);
// The Neumann faces as a mask, bit 2 axis + side (what kernels and decompositions carry).
int neumann_mask(const FaceKinds& f);
// "x,y,z", as --grid and --procs take it.
std::string to_string(const Int3& v);

// Block split of n points over p parts: the first (n mod p) parts get one extra point. With
// odd_splits, every split between two parts that falls on an even index moves down by one,
// so that all of them are odd (multigrid's first step of an even Dirichlet axis reads 4 fine
// points per coarse point and fits one ghost layer only then: mg_coarser's from_fine); the
// parts stay within two points of each other while p - 1 <= n / 2, which decompose checks.
struct Span {
  int offset = 0, count = 0;
};
Span split_axis(int n, int p, int coord, bool odd_splits = false);
// The axes split at odd indices: not periodic, even, and at least this long (multigrid's
// first step halves them, mg_coarser; shorter ones take the ratio 1.5 as later steps do).
constexpr int kOddSplitsFrom = 16;
inline bool odd_splits(int n, bool periodic) {
  return !periodic && n % 2 == 0 && n >= kOddSplitsFrom;
}

// Process grid for `ranks` ranks: `requested` with zeros filled by MPI_Dims_create, the
// larger factors placed on the longer axes. Throws BadInput when the product is not the
// rank count or some rank would own no points.
Int3 choose_procs(const Int3& grid, int ranks, const Int3& requested);

struct Decomposition {
  Int3 grid{}, procs{}, coords{}, offset{}, count{};
  // periodic[a]: axis a wraps, the neighbour of its last point is its first. Its process-grid
  // coordinates wrap too, so every rank has both neighbours along it; with one rank along
  // it, that neighbour is this rank itself (`rank`), whose ghosts the halo fills by a local
  // copy of its own opposite boundary layer (HaloPlan::self_faces), never a message.
  Periodic periodic{};
  bool wraps() const { return periodic[0] || periodic[1] || periodic[2]; }
  // The global grid's Neumann faces (neumann_mask: bit 2 axis + side); such an axis is
  // node-centred (ops::axis_first, ops::axis_intervals). Set by whoever builds the grid's
  // decomposition (make_runtime from RuntimeOptions::neumann).
  int neumann = 0;
  bool neumann_face(int a, int side) const { return (neumann >> (2 * a + side) & 1) != 0; }
  // The intervals of axis a (ops::axis_intervals: n + 1, n periodic, n - 1 between Neumann
  // faces).
  int intervals(int a) const;
  // neighbor[axis][side]: rank across that face, or MPI_PROC_NULL at the domain boundary.
  std::array<std::array<int, 2>, 3> neighbor{};
  // around[around_index(dx, dy, dz)]: the rank at offset (dx, dy, dz) in {-1, 0, 1}^3 of the
  // process grid (faces, edges and corners: what the one-round ghost exchange sends to),
  // wrapped on periodic axes, or MPI_PROC_NULL off the domain; the centre, this rank, is
  // MPI_PROC_NULL too. A decomposition built by hand has none until it is set.
  std::array<int, 27> around = no_ranks();
  static constexpr int around_index(int dx, int dy, int dz) {
    return (dx + 1) + 3 * (dy + 1) + 9 * (dz + 1);
  }
  static std::array<int, 27> no_ranks() {
    std::array<int, 27> a{};
    a.fill(MPI_PROC_NULL);
    return a;
  }
  int rank = 0, ranks = 1;

  Layout layout() const { return {count[0], count[1], count[2]}; }
  // The whole grid as one rank's box (serial levels, reading files back), rank 0 of its own
  // communicator (MPI_COMM_SELF): no neighbours but itself across the faces of periodic axes.
  static Decomposition whole(const Int3& g, const Periodic& periodic = {});
  long long global_points() const { return 1LL * grid[0] * grid[1] * grid[2]; }
};

// This rank's box in its grid and the grid's Neumann faces (the face weights' factors).
inline NeumannPlanes neumann_planes(const Decomposition& d) {
  NeumannPlanes p;
  for (int a = 0; a < 3; ++a) p.place.offset[a] = d.offset[a], p.place.grid[a] = d.grid[a];
  p.faces = d.neumann;
  return p;
}

// Builds the Cartesian communicator (no reordering: rank r keeps its MPI rank, so the
// host map and GPU binding stay valid; periodic on the axes `periodic` names) and this
// rank's box.
Decomposition decompose(MPI_Comm comm, const Int3& grid, const Int3& procs_requested, Comm& cart,
                        const Periodic& periodic = {});

}  // namespace halo3d
