#include "multigrid.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "box_gather.hpp"
#include "coefficients.hpp"
#include "errors.hpp"
#include "fmg.hpp"
#include "host_copy.hpp"
#include "method_plan.hpp"
#include "multigrid_level.hpp"
#include "nvtx.hpp"
#include "point_ops.hpp"
#include "solvers.hpp"
#include "timing.hpp"

namespace halo3d {
namespace {

// A coarse level overlaps its exchanges with the interior sweep (as --overlap asks) only
// from this many points per rank: below it the interior sweep (about 32 B a point at a
// few TB/s: some 20 us at 2M points on an H200) is too short to hide the exchange and
// costs six more launches. Measured on 8 ranks of 512^3 sharing an H200 under MPS: the
// 85^3 boxes of the 170^3 level took 2.89 ms per V-cycle overlapped, 2.55 ms not.
constexpr double kMinOverlapPoints = double(1 << 21);

using Steps = MgSteps;

// The 7-point operator rediscretised on the coarser grid (a shift, as in I + c A, kept).
Stencil coarser_stencil(const Stencil& s, const Decomposition& f, const Decomposition& c_) {
  const double shift = s.diag - 2.0 * (s.cx + s.cy + s.cz);
  double c[3] = {s.cx, s.cy, s.cz};
  for (int a = 0; a < 3; ++a) {  // h_fine / h_coarse
    const double ratio = double(c_.intervals(a)) / double(f.intervals(a));
    c[a] *= ratio * ratio;
  }
  Stencil out;
  out.cx = c[0], out.cy = c[1], out.cz = c[2];
  out.diag = 2.0 * (c[0] + c[1] + c[2]) + shift;
  out.shift = s.shift;
  return out;
}

}  // namespace
std::unique_ptr<Preconditioner> make_preconditioner(const MethodPlan& m, Runtime& rt) {
  if (!m.preconditioned()) return nullptr;
  return std::make_unique<Multigrid>(rt, m.mg);
}

namespace {

// Allocates a level's vectors in T: b, x, y and w, but only w on a double fine level (see
// MgVectors).
template <class T>
void allocate_vectors(MgVectors<T>& v, Kernels& k, std::size_t n, bool fine) {
  const bool mixed = std::is_same_v<T, float>;
  if (!fine || mixed) {
    v.b = BasicBuffer<T>(k, n);
    v.x = BasicBuffer<T>(k, n);
  }
  if (!fine) v.y = BasicBuffer<T>(k, n);
  if (!fine || !mixed) v.w = BasicBuffer<T>(k, n);
}

}  // namespace

// The ghost shell of layout l (the six faces' ghost layers with their edges and corners).
BoxList ghost_shell(const Layout& l) {
  BoxList s;
  s.add({-1, l.nx + 1, -1, l.ny + 1, -1, 0});
  s.add({-1, l.nx + 1, -1, l.ny + 1, l.nz, l.nz + 1});
  s.add({-1, l.nx + 1, -1, 0, 0, l.nz});
  s.add({-1, l.nx + 1, l.ny, l.ny + 1, 0, l.nz});
  s.add({-1, 0, 0, l.ny, 0, l.nz});
  s.add({l.nx, l.nx + 1, 0, l.ny, 0, l.nz});
  return s;
}

Multigrid::Multigrid(Runtime& rt, const MgOptions& o, DistributedOperator* fine,
                     LevelCoefficients* fine_coef)
    : rt_(rt), o_(o) {
  if (!fine) fine = rt.op.get();
  if (o.smooth < 1) throw BadInput("--mg-smooth must be >= 1");
  mixed_ = o.precision == Precision::mixed;
  Kernels& k = *rt.kernels;
  MPI_Comm cart = rt.cart.get();
  const int ranks = rt.decomp.ranks;
  Stencil stencil = fine->stencil();
  const std::vector<MgLevelPlan> plan = mg_plan(rt.decomp, stencil, o, k.on_gpu(), cart);
  for (std::size_t l = 0; l < plan.size(); ++l) {
    auto L = std::make_unique<Level>();
    L->grid = plan[l].grid;
    L->points = double(L->grid[0]) * L->grid[1] * L->grid[2];
    L->decomp = plan[l].decomp;
    L->distributed = plan[l].distributed;
    if (l == 0) {
      L->A = fine;
    } else {
      stencil = coarser_stencil(stencil, levels_.back()->decomp, L->decomp);
      const bool overlap = double(L->decomp.layout().interior_size()) >= kMinOverlapPoints;
      L->own_op = make_operator(rt, L->decomp, stencil, L->distributed, overlap);
      L->A = L->own_op.get();
    }
    const std::size_t n = L->decomp.layout().padded_size();
    if (mixed_)
      allocate_vectors(L->f, k, n, l == 0);
    else
      allocate_vectors(L->d, k, n, l == 0);
    const bool coarsest = l + 1 == plan.size();
    const Decomposition& p = L->decomp;
    L->steps =
        coarsest ? coarse_steps(stencil, L->grid, p, 0) : smoother_steps(o, stencil, L->grid, p, 0);
    levels_.push_back(std::move(L));
  }
  if (mixed_) {
    shell_ = ghost_shell(fine->layout());
    zero_shell_ = FloatBuffer(k, std::size_t(shell_.points()));
  }
  // Transfers between consecutive levels, and the gather where the hierarchy leaves the
  // process grid.
  for (std::size_t l = 0; l + 1 < levels_.size(); ++l) {
    Level& F = *levels_[l];
    Level& C = *levels_[l + 1];
    if (F.distributed && !C.distributed) {
      F.gathers = true;
      const Decomposition own = mg_coarser_box(F.decomp, C.grid);  // may own no point
      F.down = make_transfer(k, F.decomp, own, TransferUse::restriction);
      F.up = make_transfer(k, F.decomp, C.decomp, TransferUse::prolongation);
      const std::size_t n = own.layout().padded_size();
      if (mixed_)
        F.f.restricted = FloatBuffer(k, n);
      else
        F.d.restricted = Buffer(k, n);
      int mine[6];
      for (int a = 0; a < 3; ++a) mine[a] = own.offset[a], mine[3 + a] = own.count[a];
      std::vector<int> boxes(6 * std::size_t(ranks));
      HALO3D_MPI_CHECK(MPI_Allgather(mine, 6, MPI_INT, boxes.data(), 6, MPI_INT, cart));
      // Over CUDA IPC where the halo goes over it (every rank on one host), else via host.
      const bool ipc = fine->transport().kind() == Transport::ipc;
      F.gather = make_box_gather(k, boxes, C.grid, cart, rt.hosts, rt.peer, ipc);
    } else {
      F.down = make_transfer(k, F.decomp, C.decomp);
    }
  }
  // Levels from which the cycle can be recorded: each one below it fills no ghost and
  // gathers nothing (no message, no wait for the device).
  for (std::size_t l = levels_.size(); l-- > 1;) {
    const Level& L = *levels_[l];
    const bool below = l + 1 == levels_.size() || levels_[l + 1]->records;
    levels_[l]->records = below && !L.gathers && !L.A->plan().fills_ghosts();
  }
  if (fine->stencil().variable()) vary_levels(fine, fine_coef);
  make_dense(*levels_.back());
  for (double b : level_bytes()) bytes_ += b;
  // Mixed: the fine level's conversions (read r, write its float copy; read z in float and
  // r, write z in double, with r.z).
  if (mixed_) bytes_ += levels_[0]->points * (12 + 20);
}

// Variable coefficients: each coarser level's faces from the level above's (coarse_parts:
// Galerkin, in backend memory) and a variable shift's sigma from the level above's
// (coarse_points: the fine level's uploaded, each coarse level's kept only until the next is
// made), its weights lent to its operator, and every level's steps from its own operator's
// spectrum bound (over all ranks where the level is distributed).
void Multigrid::vary_levels(DistributedOperator* fine, LevelCoefficients* fine_coef) {
  Kernels& k = *rt_.kernels;
  if (!fine_coef && fine == rt_.op.get()) fine_coef = rt_.coefficients.get();
  if (!fine_coef) throw std::logic_error("multigrid: a variable operator without its coefficients");
  LevelCoefficients* above = fine_coef;
  Buffer sigma;  // the level above's, in backend memory
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    Level& L = *levels_[l];
    if (l == 1 && fine_coef->sigma_or_null()) sigma = upload(k, *fine_coef->sigma_or_null());
    if (l > 0) {
      if (o_.interp == MgInterp::operator_) interpolation_weights(*levels_[l - 1], *above);
      const Buffer parts = coarse_parts(*levels_[l - 1], L, *above);
      Buffer point = sigma.size() ? coarse_points(*levels_[l - 1], L, sigma.data()) : Buffer();
      L.coef = LevelCoefficients::galerkin(k, L.decomp.layout(), L.A->stencil(), parts.data(),
                                           point.size() ? point.data() : nullptr,
                                           neumann_planes(L.decomp));
      above = L.coef.get();
      sigma = std::move(point);
      k.synchronize();  // before parts go
    }
    // A smoothed level's D^{-1}, its ghosts from the neighbours as a vector's (a whole level's:
    // its periodic wraps only), then the float copies.
    if (!mg_dense_level(l, levels_.size(), L.grid)) {
      double* inv_diag = above->add_inverse_diagonal(k);
      if (L.distributed || L.decomp.wraps()) L.A->exchange(inv_diag);
    }
    if (mixed_) above->add_float(k);
    L.A->set_stencil(above->attach(L.A->stencil()));
    double bound = above->local_spectrum_bound(k, L.decomp);
    if (L.distributed)
      HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &bound, 1, MPI_DOUBLE, MPI_MAX, rt_.cart.get()));
    const Stencil& s = L.A->stencil();
    const Decomposition& p = L.decomp;
    L.steps = l + 1 == levels_.size() ? coarse_steps(s, L.grid, p, bound, shifted_low(L, *above))
                                      : smoother_steps(o_, s, L.grid, p, bound);
  }
}

// The Galerkin parts of coarse level C's faces (Kernels::galerkin_parts) from F's weights,
// with their ghosts: from the neighbours (C distributed), or, where F gathers, every rank's
// own coarse points gathered into the whole grid; a periodic axis's wrap. Beyond the domain's
// boundary they stay zero. F's weights hold every face the sums read within the ghost layer
// (the ghost lines beside the box included: face_weights and galerkin_faces make them). Two
// faces lie beyond it: the face below a rank's first fine point and the one above its ghost
// layer, read where a rank owns the first (last) coarse point of a bounded axis but not the
// fine point next to that boundary (its neighbour there holds one fine point); only then are
// F's weights, and each fine point's face below it (Kernels::faces_below), exchanged.
Buffer Multigrid::coarse_parts(Level& F, Level& C, LevelCoefficients& above) {
  Kernels& k = *rt_.kernels;
  const Transfer& t = F.down.t;
  const std::size_t nf = F.decomp.layout().padded_size();
  const int cn[3] = {t.coarse.nx, t.coarse.ny, t.coarse.nz};
  const int fn[3] = {t.fine.nx, t.fine.ny, t.fine.nz};
  int beyond = 0;
  for (int a = 0; a < 3 && cn[0] * cn[1] * cn[2] > 0; ++a)
    if (t.bounded[a] && ((t.co[a] == 0 && t.fo[a] > 0) ||
                         (t.co[a] + cn[a] == t.nc[a] && t.fo[a] + fn[a] < t.nf[a])))
      beyond = 1;
  if (F.distributed)
    HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &beyond, 1, MPI_INT, MPI_MAX, rt_.cart.get()));
  double* w = above.weights();
  Buffer below;
  if (beyond) {
    below = Buffer(k, 3 * nf);
    k.faces_below(F.decomp.layout(), w, below.data());
    for (int a = 0; a < 3; ++a) {
      F.A->exchange(w + a * nf);
      F.A->exchange(below.data() + a * nf);
    }
  }
  const std::size_t own = t.coarse.padded_size(), nc = C.decomp.layout().padded_size();
  Buffer parts(k, 6 * own);
  k.galerkin_parts(t, w, below.data(), parts.data());
  if (F.gathers) {
    Buffer whole(k, 6 * nc);
    for (int q = 0; q < 6; ++q) F.gather->gather(parts.data() + q * own, whole.data() + q * nc);
    parts = std::move(whole);
  }
  if (C.distributed || C.decomp.wraps())
    for (int q = 0; q < 6; ++q) C.A->exchange(parts.data() + q * nc);
  k.synchronize();
  return parts;
}

// A point field (sigma) on coarse level C from its values on F (`fine`, every ghost filled),
// with its ghosts: from the neighbours (C distributed), or, where F gathers, every rank's own
// coarse points gathered into the whole grid; a periodic axis's ghosts wrap (on a whole
// level, local copies); the boundary's from the nearest point. In backend memory, as the
// cycle moves its vectors.
Buffer Multigrid::coarse_points(Level& F, Level& C, const double* fine) {
  Kernels& k = *rt_.kernels;
  Buffer mine = coarsen_points(k, F.down.t, fine);
  if (F.gathers) {
    Buffer whole(k, C.decomp.layout().padded_size());
    F.gather->gather(mine.data(), whole.data());
    mine = std::move(whole);
    if (C.decomp.wraps()) C.A->exchange(mine.data());
  } else if (C.distributed || C.decomp.wraps()) {
    C.A->exchange(mine.data());
  }
  fill_boundary_ghosts(k, C.decomp, mine.data());
  k.synchronize();
  return mine;
}

// Runs the steps from the iterate in x (from_zero: from x = 0, whatever x holds),
// alternating with y; returns where the result is. From zero, the first step is
// x = cr D^{-1} b (no sweep, no halo) and the second reads that x as its direction d as
// well; the two run as one sweep that computes x where it reads it (fuses_start). A step's
// direction is read only when its cd is not 0 and written only when the next step reads
// it. slot += b.result, from the last step.
template <class T>
T* Multigrid::smooth(Level& L, const Steps& steps, const T* b, T* x, T* y, bool from_zero,
                     int slot) {
  const std::size_t n = steps.size();
  // Where step s writes its direction: where step s + 1 reads one.
  auto d_out = [&](std::size_t s) {
    return s + 1 < n && steps[s + 1][0] != 0 ? L.v<T>().wp() : nullptr;
  };
  const T* d = nullptr;
  std::size_t s = 0;
  if (from_zero && fuses_start(steps)) {
    // Its exchange fills b's ghosts only (x's are cr b's): b's values are unchanged.
    T* out = d_out(1);
    L.A->smooth_from_start(steps[0][1], steps[1][0], steps[1][1], const_cast<T*>(b), out, y,
                           n == 2 ? slot : kNoReduction);
    std::swap(x, y);
    d = out;
    s = 2;
  } else if (from_zero) {
    rt_.kernels->smooth_start(L.A->layout(), L.A->stencil(), steps[0][1], b, x);
    if (n == 1 && slot != kNoReduction) rt_.kernels->dot(L.A->layout(), b, x, slot);
    d = x;
    s = 1;
  }
  for (; s < n; ++s) {
    const double cd = steps[s][0], cr = steps[s][1];
    T* out = d_out(s);
    L.A->smooth(cd, cr, b, x, cd != 0 ? d : nullptr, out, y, s + 1 == n ? slot : kNoReduction);
    std::swap(x, y);
    d = out;
  }
  return x;
}

// Whether smooth() from zero runs its first two steps as one sweep: when the second step
// reads x as its direction (Chebyshev's always do).
bool Multigrid::fuses_start(const Steps& steps) { return steps.size() >= 2 && steps[1][0] != 0; }

// What smooth() moves per point: from zero, the first step 16 B (read b, write x), or with
// the second in one sweep (fuses_start) 16 B for both (read b, write the result); any
// other step 24 B (read b and u, write unew); and 8 B more for each direction a step reads
// (unless that is u itself) and writes. Variable coefficients' face weights and inverse
// diagonal are counted apart (level_bytes).
double Multigrid::smooth_bytes(const Steps& steps, bool from_zero) {
  const std::size_t n = steps.size();
  const bool fused = from_zero && fuses_start(steps);
  double bytes = 0;
  for (std::size_t s = fused ? 1 : 0; s < n; ++s) {
    if (s == 0 && from_zero) {  // its x is the next step's direction too
      bytes += 16;
      continue;
    }
    bytes += fused && s == 1 ? 16 : 24;
    if (steps[s][0] != 0 && !(s == 1 && from_zero)) bytes += 8;  // reads its direction
    if (s + 1 < n && steps[s + 1][0] != 0) bytes += 8;           // writes the next one's
  }
  return bytes;
}

// Buffer swaps of one cycle on level l (its smoothing steps that sweep).
std::size_t Multigrid::swaps(std::size_t l) const {
  const std::size_t n = levels_[l]->steps.size();
  return l + 1 == levels_.size() ? n - 1 : 2 * n - 1;
}

// The V-cycle on level l for right-hand side b, from x = 0 (from_zero false: from the x
// held, as full multigrid starts it); x and y are its two iterate buffers. Returns the one
// that holds the result.
// slot += b.result (from the last step).
template <class T>
T* Multigrid::cycle(std::size_t l, const T* b, T* x, T* y, int slot, bool from_zero) {
  Level& L = *levels_[l];
  MgVectors<T>& V = L.v<T>();
  Kernels& k = *rt_.kernels;
  if (l + 1 == levels_.size()) {
    if (!L.dense) return smooth(L, L.steps, b, x, y, from_zero, slot);
    k.dense_solve(L.A->layout(), L.inverse<T>(), b, x);  // exact: from_zero does not matter
    return x;
  }
  T* u = smooth(L, L.steps, b, x, y, from_zero, kNoReduction);
  T* other = u == x ? y : x;
  L.A->residual(b, u, V.wp(), kNoReduction);
  Level& C = *levels_[l + 1];
  MgVectors<T>& CV = C.v<T>();
  L.A->exchange(V.wp());
  k.restrict_to(L.down.t, V.wp(), L.gathers ? V.restricted.data() : CV.b.data());
  if (L.gathers) L.gather->gather(V.restricted.data(), CV.b.data());
  T* e = coarse_cycle<T>(l + 1);
  // A gathered e is whole on every rank: only its periodic axes' ghosts (local copies) are left.
  if (!L.gathers || C.decomp.wraps()) C.A->exchange(e);
  k.prolong_add(L.gathers ? L.up.t : L.down.t, e, u);
  return smooth(L, L.steps, b, u, other, false, slot);
}

template <class T>
T* Multigrid::coarse_cycle(std::size_t l) {
  Level& L = *levels_[l];
  MgVectors<T>& V = L.v<T>();
  auto run = [&] { return cycle(l, V.b.data(), V.x.data(), V.y.data(), kNoReduction); };
  Level::Recorded& r = L.recorded[std::is_same_v<T, float>];
  if (!L.records || recording_) return run();
  if (r.graph) {
    r.graph->replay();
    return static_cast<T*>(r.out);
  }
  if (r.state != Level::Recorded::warm) {
    if (r.state == Level::Recorded::cold) r.state = Level::Recorded::warm;
    return run();
  }
  r.state = Level::Recorded::refused;  // unless the recording below succeeds
  T* out = nullptr;
  recording_ = true;
  try {
    r.graph = rt_.kernels->record([&] { out = run(); });
  } catch (...) {
    recording_ = false;
    throw;
  }
  recording_ = false;
  r.out = out;
  return out;
}

void Multigrid::cycle_from(std::size_t l) {
  if (mixed_)
    coarse_cycle<float>(l);
  else
    coarse_cycle<double>(l);
}

// A float V-cycle's fine y and w in the two halves of `scratch` (a double vector of the fine
// layout; the hierarchy's own without one), their ghost shells zeroed: sweeps and the
// restriction read the domain boundary's ghosts as the zero Dirichlet values, and the
// double vector's bits there are its interior values. Exchanges fill the other ghosts;
// every kernel writes the interior only, so the shells stay zero through the cycle.
void Multigrid::lend_fine_floats(double* scratch) {
  Level& L0 = *levels_[0];
  const Layout lay = L0.A->layout();
  float* half = reinterpret_cast<float*>(fine_scratch(scratch));
  L0.f.lent_y = half;
  L0.f.lent_w = half + lay.padded_size();
  for (float* v : {L0.f.lent_y, L0.f.lent_w})
    rt_.kernels->unpack_boxes(lay, shell_, zero_shell_.data(), v, Lane::interior);
}

double* Multigrid::fine_scratch(double* scratch) {
  if (scratch) return scratch;
  if (own_scratch_.size() == 0)
    own_scratch_ = Buffer(*rt_.kernels, levels_[0]->A->layout().padded_size());
  return own_scratch_.data();
}

void Multigrid::apply(double* in, double* out, int slot, double* scratch) {
  HALO3D_NVTX_RANGE("multigrid V-cycle");
  if (mixed_) return apply_mixed(in, out, slot, scratch);
  Level& L0 = *levels_[0];
  // Start so that the last step writes `out` (no copy): the steps alternate buffers.
  const bool odd = swaps(0) % 2 == 1;
  double* y = fine_scratch(scratch);
  const double* r = cycle(0, const_cast<const double*>(in), odd ? y : out, odd ? out : y, slot);
  if (r != out) rt_.kernels->copy(out, r, L0.A->layout().padded_size(), Lane::interior);
}

// The V-cycle in float between two conversions; r.z (slot) in double, from the double z
// CG uses, summed as z is widened.
void Multigrid::apply_mixed(double* in, double* out, int slot, double* scratch) {
  const Layout lay = levels_[0]->A->layout();
  rt_.kernels->convert(lay, in, levels_[0]->f.b.data());
  rt_.kernels->convert(lay, float_cycle(scratch), out, in, slot);
}

float* Multigrid::float_input() { return mixed_ ? levels_[0]->f.b.data() : nullptr; }

// apply_mixed without its conversions: PCG rounded r into float_input() in its update and
// takes z in float (its r.z here: the widened z's, bit for bit).
const float* Multigrid::apply_float(const double* r, int slot, double* scratch) {
  if (!mixed_) throw std::logic_error("apply_float: the V-cycle is not in float");
  const float* z = float_cycle(scratch);
  rt_.kernels->dot(levels_[0]->A->layout(), r, z, slot);
  return z;
}

const float* Multigrid::float_cycle(double* scratch) {
  Level& L0 = *levels_[0];
  lend_fine_floats(scratch);
  return cycle(0, const_cast<const float*>(L0.f.b.data()), L0.f.x.data(), L0.f.yp(), kNoReduction);
}

// Without apply_mixed's conversions (12 + 20 B a point): r.z reads z in float and r.
double Multigrid::bytes_per_float_apply() const {
  return mixed_ ? bytes_ - levels_[0]->points * (12 + 20 - 12) : bytes_;
}

template <class T>
MgLevelView<T> Multigrid::view(std::size_t l) const {
  Level& L = *levels_[l];
  MgVectors<T>& V = L.v<T>();
  MgLevelView<T> out;
  out.A = L.A;
  out.b = V.b.data(), out.x = V.x.data(), out.y = V.yp();
  out.restricted = V.restricted.data();
  out.down = &L.down.t;
  out.points = L.points;
  out.wraps = L.decomp.wraps();
  out.steps = &L.steps;
  if (L.gathers) out.up = &L.up.t, out.gather = L.gather.get();
  return out;
}

// For fmg.cpp, which runs the same cycle on the same levels.
template MgLevelView<double> Multigrid::view<double>(std::size_t) const;
template MgLevelView<float> Multigrid::view<float>(std::size_t) const;
template double* Multigrid::cycle<double>(std::size_t, const double*, double*, double*, int, bool);
template float* Multigrid::cycle<float>(std::size_t, const float*, float*, float*, int, bool);

}  // namespace halo3d
