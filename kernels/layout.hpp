// Plain data shared by the kernel API, the solvers and both backends.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

// Point updates are always inlined on the host: GCC's size heuristics (which depend on
// -mtune) left ops::apply_point out of line in the smoothing sweep's loop under the default
// tuning, one call a point, and the double smoothing step ran at half the speed it has
// inlined (PERFORMANCE.md, "The host kernels").
#if defined(__CUDACC__)
#define HALO3D_HD __host__ __device__
#elif defined(__GNUC__)
#define HALO3D_HD __attribute__((always_inline))
#else
#define HALO3D_HD
#endif

namespace halo3d {

// Local box of nx*ny*nz interior points stored with one ghost layer on every side,
// x fastest. Ghost cells hold neighbours' faces or the Dirichlet zero.
// Rows are padded so that every interior row starts on a 32-byte boundary (one DRAM
// sector): the x-ghost sits at offset kRowOffset - 1 and the row stride is a multiple of
// 4 doubles. Unpadded, each warp's 256-byte run of a row would straddle 9 sectors.
struct Layout {
  static constexpr int kRowOffset = 4;  // doubles before i = 0 in each row
  int nx = 0, ny = 0, nz = 0;

  HALO3D_HD std::ptrdiff_t sy() const { return (nx + kRowOffset + 1 + 3) / 4 * 4; }
  HALO3D_HD std::ptrdiff_t sz() const { return sy() * (ny + 2); }
  HALO3D_HD std::size_t padded_size() const { return std::size_t(sz()) * (nz + 2); }
  HALO3D_HD std::size_t interior_size() const { return std::size_t(nx) * ny * nz; }
  // Index of interior point (i,j,k); -1 and n address ghost layers.
  HALO3D_HD std::ptrdiff_t at(int i, int j, int k) const {
    return (i + kRowOffset) + sy() * (j + 1) + sz() * (k + 1);
  }
};

// Half-open box [i0,i1) x [j0,j1) x [k0,k1) of interior indices.
struct Region {
  int i0 = 0, i1 = 0, j0 = 0, j1 = 0, k0 = 0, k1 = 0;
  HALO3D_HD bool empty() const { return i0 >= i1 || j0 >= j1 || k0 >= k1; }
  HALO3D_HD std::size_t size() const {
    return empty() ? 0 : std::size_t(i1 - i0) * (j1 - j0) * (k1 - k0);
  }
  static Region whole(const Layout& l) { return {0, l.nx, 0, l.ny, 0, l.nz}; }
};

// Sub-boxes of a padded box (ghost layers allowed: indices -1 and n), packed one after
// another into one buffer, each x fastest (ops::box_point): what the one-round ghost
// exchange sends to, or receives from, its up to 26 neighbours (faces, edges, corners), so
// that one launch packs them all.
struct BoxList {
  static constexpr int kMax = 26;
  int count = 0;
  Region box[kMax];
  long long start[kMax + 1] = {};  // box b's first value in the buffer; start[count]: the total
  void add(const Region& r) {
    box[count] = r;
    start[count + 1] = start[count] + (long long)r.size();
    ++count;
  }
  HALO3D_HD long long points() const { return start[count]; }
};

// Variable coefficients (-div(k grad u) + shift u): the weight k_f / h_a^2 of every face f
// between two neighbouring points, in three padded arrays of the level's layout. w[a][c]
// belongs to the face between point c and its +a neighbour; the low ghost slots hold the
// faces to the low neighbour (or the boundary), so every face of the box is stored once.
// A variable shift (--shift expr:/file:) adds sigma at each point, one more padded array
// (null: the stencil's constant shift). Where multigrid smooths the level, inv_diag holds
// D^{-1} (1 / ops::point_diag) at every point, ghosts too (the neighbours' values, 0 beyond
// the domain's boundary): the first smoothing step from zero scales by it, and the second
// reads that step's value at the neighbours without its being stored
// (LevelCoefficients::add_inverse_diagonal; null elsewhere). Pointers into backend memory,
// in the grid's scalar type T.
template <class T>
struct FaceWeights {
  const T* w[3] = {nullptr, nullptr, nullptr};
  const T* sigma = nullptr;
  const T* inv_diag = nullptr;
};

// Where a local box sits in its global grid: the global index of its first point and the
// grid's size per axis (the spectrum bound tells unknown neighbours from Dirichlet values by it).
struct BoxPlace {
  int offset[3] = {0, 0, 0};
  int grid[3] = {0, 0, 0};
};

// The Neumann boundary planes a level's box meets (node-centred axes: the boundary nodes are
// unknowns, their dual cells cut by the boundary): the box's place in its grid and the
// grid's Neumann faces (bit 2 axis + side). The face weights take their factors from it
// (ops::neumann_face_factor): 0 for the face beyond a Neumann face, 1/2 for a face lying in
// one Neumann plane, 1/4 in two. faces = 0: none, every factor 1.
struct NeumannPlanes {
  BoxPlace place;
  int faces = 0;
};

// The 7-point operator. Constant coefficients (-lap_h + shift):
// (A u)_c = diag*u_c - cx*(u_w+u_e) - cy*(u_s+u_n) - cz*(u_b+u_t).
// Variable ones (variable(): vd is set, and vf too where a float V-cycle runs on it):
// (A u)_c = d_c u_c - sum over the six faces of w_f u_neighbour, d_c = the six w_f + shift
// (or + sigma_c where the weights carry a variable shift; ops::point_diag); cx, cy, cz then stand
// only for the spacing (1/h^2, which the multigrid plan compares), and diag for the constant
// operator of that spacing.
struct Stencil {
  double cx = 0, cy = 0, cz = 0, diag = 0;
  double shift = 0;
  FaceWeights<double> vd;
  FaceWeights<float> vf;
  HALO3D_HD bool variable() const { return vd.w[0] != nullptr; }
  static Stencil laplacian(double hx, double hy, double hz) {
    Stencil s;
    s.cx = 1.0 / (hx * hx), s.cy = 1.0 / (hy * hy), s.cz = 1.0 / (hz * hz);
    s.diag = 2.0 * (s.cx + s.cy + s.cz);
    return s;
  }
};
HALO3D_HD inline const FaceWeights<double>& faces_of(const Stencil& s, double) { return s.vd; }
HALO3D_HD inline const FaceWeights<float>& faces_of(const Stencil& s, float) { return s.vf; }

// The coefficients a stencil sweep is compiled for: constant, variable (face weights, no
// point shift) or variable with a point shift (sigma). Both backends instantiate each sweep
// for each, and a sweep runs on compiled_for's copy of its stencil, which tells the compiler
// what the kind implies (weights cleared, or known to be there; sigma cleared, or known to
// be there), so the point updates' branches on them fold away. Compiled in, those branches
// kept every host sweep from vectorising (control flow in the loop) and cost the CUDA sweeps
// registers: the double smoothing step 40 instead of 29, 4% slower (PERFORMANCE.md, session
// 40). with_coefficients calls fn with the kind a stencil needs, as a std::integral_constant.
enum class Coefficients { constant, variable, variable_shift };
template <Coefficients C>
HALO3D_HD inline Stencil compiled_for(Stencil s) {
  if (C == Coefficients::constant) s.vd = {}, s.vf = {};
  if (C == Coefficients::variable) s.vd.sigma = nullptr, s.vf.sigma = nullptr;
  // Known, not tested: with_coefficients chose C from these pointers.
  if (C != Coefficients::constant && s.vd.w[0] == nullptr) __builtin_unreachable();
  if (C == Coefficients::variable_shift && s.vd.sigma == nullptr) __builtin_unreachable();
  return s;
}
template <class Fn>
inline void with_coefficients(const Stencil& s, Fn&& fn) {
  using K = Coefficients;
  if (!s.variable())
    fn(std::integral_constant<K, K::constant>{});
  else if (s.vd.sigma)
    fn(std::integral_constant<K, K::variable_shift>{});
  else
    fn(std::integral_constant<K, K::variable>{});
}

// The six faces of a local box: axis 0..2 (x,y,z), side 0 (low) or 1 (high).
struct Face {
  int axis = 0, side = 0;
  HALO3D_HD int index() const { return 2 * axis + side; }
};

// A field given by its global point indices, filled where the backend computes: the
// built-in right-hand sides, initial states and exact answers, so a 512^3 field costs one
// write pass on the device instead of a host loop and a 1 GiB upload.
struct FieldGen {
  enum Kind { random, separable } kind = random;
  // random: splitmix64 of the global index gi + gnx (gj + gny gk), (gi,gj,gk) = off + (i,j,k).
  int off[3] = {0, 0, 0};
  long long gnx = 0, gny = 0;
  std::uint64_t seed = 0;
  // separable: sum over `terms` of c x[i] y[j] z[k]; `tables` (backend memory) holds per
  // term c, then the box's nx x-values, ny y-values and nz z-values.
  int terms = 0;
  const double* tables = nullptr;
};

// Linear interpolation between a grid and a coarser one, axis by axis (multigrid): fine
// point i of an axis sits at (i+1)/mf, coarse point I at (I+1)/mc, m the axis's intervals:
// n + 1 with Dirichlet zeros at 0 and 1, n on a periodic axis (position 1 is position 0,
// the ghosts wrap). Prolongation P interpolates; restriction is scale * P^T.
// The local boxes' global offsets place them; each reads one ghost layer of its input.
// A transfer's weights in one scalar type T (see Transfer).
template <class T>
struct TransferWeights {
  const T* pw[3] = {};  // {1 - t, t} for each local fine index
  const T* rw[3] = {};  // {w0, w1, w2, w3} for each local coarse index (unused ones 0)
  T scale = 1;          // restriction's factor: the product of mc/mf over the axes
};

struct Transfer {
  Layout fine, coarse;         // local boxes
  int nf[3] = {}, nc[3] = {};  // global sizes per axis
  int mf[3] = {}, mc[3] = {};  // their intervals (ops::axis_intervals: n + 1, n if periodic)
  // Point 0's position in intervals (ops::interp_1d's at0: 1, or 0 behind a Neumann low
  // face) and whether the axis has ends (not periodic: restriction stays on the grid).
  int at0[3] = {1, 1, 1};
  bool bounded[3] = {true, true, true};
  int fo[3] = {}, co[3] = {};  // global offsets of the local boxes
  // The most fine points one coarse point's restriction reads along an axis: 3 (nested, or
  // a ratio <= 1.5), 4 after the first step of an even axis (mg_coarser's from_fine). The
  // kernels loop to it (ops::restrict_x/plane/z's S); weights past a count are 0.
  int span = 3;
  // Per-axis tables in backend memory, from ops::transfer_tables (the kernels read them
  // instead of dividing per point): pidx[a] holds the local coarse lo of each local fine
  // index, ridx[a] {local fine first, count} of each local coarse index. The weights come
  // in double (wd) and in float (wf, each rounded once on the host), so a float V-cycle's
  // transfers compute in float alone: no FP64 on GPUs where it runs at 1/64 rate.
  const int* pidx[3] = {};
  const int* ridx[3] = {};
  TransferWeights<double> wd;
  TransferWeights<float> wf;
  // Operator-dependent interpolation (--mg-interp operator with a variable operator; null:
  // the tables' trilinear one): 3 padded arrays of `fine`, od[a * fine.padded_size() + c]
  // the weight t of fine point c's upper coarse neighbour along a (1 - t its lower one's),
  // every ghost filled (ops::od_weight_point makes them; transfer_ops.hpp says the rule). In
  // float (12 B a point): the double V-cycle widens them exactly, the float one reads them
  // as they are.
  const float* od = nullptr;
};
HALO3D_HD inline const TransferWeights<double>& weights_of(const Transfer& t, double) {
  return t.wd;
}
HALO3D_HD inline const TransferWeights<float>& weights_of(const Transfer& t, float) { return t.wf; }

// An unevaluated double-double sum (hi + lo, |lo| <= ulp(hi)/2).
struct DD {
  double hi = 0.0, lo = 0.0;
};

}  // namespace halo3d
