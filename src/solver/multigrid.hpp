// Geometric multigrid V-cycle as a CG preconditioner, on any grid size, distributed over
// the same process grid as the fine level and bitwise independent of it.
//
// Coarsening, per axis, from the grid's size n (points at (i+1)/(n+1); mg_coarser says the
// rules, with periodic and Neumann axes):
//   n odd:  n -> (n-1)/2, nested (every coarse point is a fine point), ratio r = 2;
//   n even: n+1 is odd, so no nesting exists; the first step goes to n/2 - 1 (r just above
//           2), later ones to m-1 with m the smallest even number >= (n+1)/1.5 (r <= 1.5),
//           and the next step is nested again;
//   n = 1:  stays 1.
// The hierarchy stops at its first level of at most kMgDensePoints points, which is solved
// exactly (its operator's inverse, mg_dense_inverse).
// Transfers are trilinear interpolation P and restriction R = scale * P^T (Transfer), the
// coarse operator is the same stencil rediscretised, the smoother a Chebyshev polynomial
// (or damped Jacobi) in D^{-1}A with exact eigenvalue bounds of the 7-point operator, the
// coarsest solve exact (or, where --mg-levels stops above kMgDensePoints, a Chebyshev
// polynomial over the whole spectrum): every part is a fixed symmetric linear operator, so
// the V-cycle is one too, and plain PCG is correct.
// Variable coefficients (coefficients.hpp): each coarse level's faces are the Galerkin
// product R A P per axis, lumped to 7 points, and the Chebyshev bounds come from each
// level's own operator (Gershgorin); see vary_levels. With MgOptions::interp operator_ the
// interpolation is operator-dependent (each fine point's weights from its own faces,
// Transfer::od; R = scale * P^T still): fewer iterations across jumps in k, a costlier set-up.
//
// Every coarse point is computed by one rank from fine values at fixed global positions in
// a fixed order, and no reduction runs inside a cycle, so the cycle gives the same bits on
// any process grid and on either backend. Coarse levels keep the fine level's process
// grid while every rank owns points of them and they are larger than MgOptions::
// gather_points; the rest of the hierarchy is run redundantly on every rank (it is
// small): the last distributed level restricts its residual to its own coarse points,
// all-gathers those (BoxGather: over CUDA IPC on one host, else through host memory) into
// the whole coarse grid on every rank, and interpolates the correction straight from that
// whole grid into its own box. Redundant coarse solves rather than agglomeration onto one
// rank: on separate GPUs the redundant work runs concurrently and costs nothing, while
// agglomeration adds a dependent step (sending the correction back); even 8 ranks sharing
// one H200 spend only 0.74 ms a V-cycle on the 8 gathered levels of 512^3 (2 ranks: 0.48
// ms), against about 0.17 ms for one dependent exchange round (docs/PERFORMANCE.md). CPU
// ranks share their node's memory bandwidth, so there the redundant work is not free, and
// the host backend's default gathers only the last 16^3 (mg_gather_points).
//
// Precision "mixed" (--precision mixed) runs the whole V-cycle in float, half the bytes
// per level: apply() rounds r to float on the fine level, cycles in float (the same code,
// instantiated for float; gathered levels too) and converts z back to double, where CG
// stays. The float cycle is still a fixed map computed identically on every process grid
// and backend (the same rounding of the same operations), so the answers stay
// decomposition-independent; it is a symmetric operator only up to float rounding, which
// plain PCG tolerates at the tolerances halo3d solves to (docs/PERFORMANCE.md measures the
// iteration counts).
//
// --fmg (fmg.hpp): first_iterate() runs a full-multigrid F-cycle on the same levels, which
// CG starts from instead of x = 0.
#pragma once
#include <mpi.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "parallel_options.hpp"
#include "precond.hpp"
#include "runtime.hpp"

namespace halo3d {

struct MgOptions {
  int levels = 0;  // 0: coarsen to the first level of at most kMgDensePoints points
  int smooth = 2;  // smoothing steps before and after the coarse correction
  Smoother smoother = Smoother::chebyshev;
  // With a variable operator: trilinear interpolation, or operator-dependent (Transfer::od).
  MgInterp interp = MgInterp::trilinear;
  Precision precision = Precision::double_;  // mixed: the V-cycle in float
  // A coarse level of at most this many points, or one of which some rank would own no
  // point, and every level below it, is gathered onto every rank and run there (0: only
  // the latter; tests use it to run the distributed path on small grids; kMgGatherAuto:
  // the backend's default, mg_gather_points).
  long long gather_points = kMgGatherAuto;
  // Full multigrid (fmg.cpp): first_iterate() runs an F-cycle with this many V-cycles per
  // level (0: off, first_iterate() declines and CG starts from x = 0).
  int fmg_cycles = 0;
};

// The coarsest level l of `levels` (grid g) is solved exactly, by its operator's inverse
// (Kernels::dense_solve), when it is below the fine level and has at most kMgDensePoints
// points: mg_level_grids stops at the first such level, and mg_plan gathers it onto every
// rank. An exact solve there, rather than smoothing it and the few points below it, is what
// a high-k inclusion away from the Dirichlet faces needs (PERFORMANCE.md, "The coarsest
// level solved exactly"); 125 points (5^3) keep its set-up (n^3/3 operations on the host)
// and its cycle's reads (n^2 words) small.
constexpr double kMgDensePoints = 125;
inline bool mg_dense_level(std::size_t l, std::size_t levels, const Int3& g) {
  return l > 0 && l + 1 == levels && double(g[0]) * g[1] * g[2] <= kMgDensePoints;
}

// Each level's global size, this rank's box and whether it runs distributed (false:
// gathered, the whole grid on every rank). Collective over cart.
struct MgLevelPlan {
  Int3 grid{};
  Decomposition decomp;
  bool distributed = true;
};
// The levels of the operator `fine_op` (its stencil sets the spacings semi-coarsening
// compares) on the `fine` boxes; gpu: whether the kernels run on GPUs (the default
// gather, mg_gather_points; the same on every rank).
std::vector<MgLevelPlan> mg_plan(const Decomposition& fine, const Stencil& fine_op,
                                 const MgOptions& o, bool gpu, MPI_Comm cart);
// Bytes of backend memory the hierarchy of `plan` allocates on this rank (the fine
// level's vectors are the solver's); mixed: float levels, and the fine level's right-hand
// side and iterate in float as well; variable: the levels' face weights (coefficients.hpp),
// and with sigma a variable shift's fourth array; od: the interpolation weights of
// --mg-interp operator (Transfer::od).
double mg_memory_bytes(const std::vector<MgLevelPlan>& plan, bool mixed = false,
                       bool variable = false, bool sigma = false, bool od = false);

// A Transfer between two boxes of consecutive levels, with its weight tables in backend
// memory. Throws std::logic_error if a transfer it is made for (`uses`) would read beyond
// one ghost layer.
struct TransferOp {
  Transfer t;
  Buffer tables;
};
enum class TransferUse { both, restriction, prolongation };
TransferOp make_transfer(Kernels& k, const Decomposition& fine, const Decomposition& coarse,
                         TransferUse uses = TransferUse::both);
// The bytes of make_transfer's tables between these boxes (what mg_memory_bytes counts).
std::size_t transfer_table_bytes(const Layout& fine, const Layout& coarse);
// The ghost shell of layout l (the six faces' ghost layers with their edges and corners).
BoxList ghost_shell(const Layout& l);

// The global sizes of every level, finest first, of a grid with spacings h (any common
// scale: only their ratios matter). An axis whose spacing is well above the finest one is
// not coarsened (semi-coarsening). Without h: the unit cube's, 1/(N+1) (1/N on a periodic
// axis). neumann: the Neumann faces (neumann_mask), whose axes count intervals as
// ops::axis_intervals.
std::vector<Int3> mg_level_grids(const Int3& grid, const std::array<double, 3>& h, int max_levels,
                                 const Periodic& periodic = {}, int neumann = 0);
std::vector<Int3> mg_level_grids(const Int3& grid, int max_levels, const Periodic& periodic = {},
                                 int neumann = 0);
// The spacings a 7-point stencil's weights stand for, up to one common factor (1/sqrt(c)).
std::array<double, 3> stencil_spacing(const Stencil& s);
// The next coarser size of an axis of n points: Dirichlet odd n -> (n-1)/2 (nested), even n
// -> a ratio of intervals <= 1.5 to an odd size; periodic even n -> n/2 (nested), odd n ->
// ceil(2n/3) rounded up to even, so the next step nests.
int mg_coarser(int n, bool periodic = false);
// With a Neumann face (node-centred, m = ops::axis_intervals): m even -> m/2 intervals
// (nested: the boundary node stays), m odd -> ceil(2m/3) rounded up to even; n itself where
// the axis cannot coarsen (m = 1).
// from_fine: the step from the fine grid. A Dirichlet axis split at odd indices (odd_splits:
// even n >= kOddSplitsFrom) then
// goes to n/2 - 1 (n + 1 intervals to n/2: a ratio just above 2, not nested), where later
// steps take 1.5: a first step of 1.5 costs the 1e4 block of issue 25 a third more
// iterations (PERFORMANCE.md, "why the 1e4 block takes more iterations on even grids") and
// leaves level 1 with 30% of the fine points instead of 12%. Its restriction reads 4 fine
// points per axis ([2J, 2J+3] for coarse J), which one ghost layer holds only when every
// split of the fine axis is odd (split_axis with odd_splits: decompose arranges it).
int mg_coarser(int n, bool periodic, bool low_neumann, bool high_neumann, bool from_fine = false);
// The first coarse point (of nc) the box starting at fine index o (of nf) owns along an axis,
// or for o = the box's end, the end of its coarse box (multigrid_plan.cpp says the rule).
int mg_coarse_first(int o, int nf, int nc, bool periodic, bool low_neumann = false,
                    bool high_neumann = false);
// The steps (cd, cr) of `count` Chebyshev iterations for the interval [a, b] of D^{-1}A
// (each step: d = cd d + cr (f - A u), u += d); cr includes 1/diag. count = 1: damped Jacobi.
std::vector<std::array<double, 2>> mg_chebyshev_steps(double a, double b, int count, double diag);

// The coarsest level's exact solve (multigrid_smoother.cpp): its operator as a dense matrix
// (row-major over l's interior points, x fastest; s's face weights, if variable, in host
// memory over l's padded box), and that matrix's inverse, column-major (Kernels::
// dense_solve); singular: A 1 = 0 (no Dirichlet face, no shift), whose solve then holds for
// right-hand sides orthogonal to the constants.
std::vector<double> mg_dense_operator(const Layout& l, const Stencil& s, const Periodic& p);
std::vector<double> mg_dense_inverse(std::vector<double> a, int n, bool singular);

struct MgLevelInfo {
  Int3 grid{};
  bool distributed = true;  // false: gathered, run on every rank
};

// One level's messages in one V-cycle, on this rank: halo exchanges (rounds of messages
// that wait for each other: a sweep's exchange is one, a transfer's one, or one per split
// axis where the transport has no one-round exchange; DistributedOperator::exchange_cost),
// the messages and bytes they send, and whether the level gathers (one all-gather of its
// coarse points; BoxGather).
struct MgLevelTraffic {
  int exchanges = 0;
  double messages = 0, bytes = 0;
  bool gathers = false;
};

class BoxGather;
// One level's pieces as the full-multigrid start (fmg.cpp) uses them, in scalar type T.
// Level 0's b and x are null in double (the caller's).
template <class T>
struct MgLevelView {
  DistributedOperator* A = nullptr;
  T *b = nullptr, *x = nullptr, *y = nullptr;
  T* restricted = nullptr;         // where the level gathers: its own coarse points
  const Transfer* down = nullptr;  // restriction to the next level (or its own points)
  const Transfer* up = nullptr;    // where it gathers: prolongation from the whole grid
  BoxGather* gather = nullptr;     // where it gathers
  double points = 0;               // global
  bool wraps = false;              // some axis periodic (Decomposition::wraps)
  const std::vector<std::array<double, 2>>* steps = nullptr;  // smoothing (coarsest: solve)
};

class Multigrid final : public Preconditioner {
 public:
  // Builds the hierarchy under `fine` (default: the runtime's operator), an operator on the
  // runtime's decomposition whose stencil may carry a shift (I + c A). A variable `fine`
  // other than the runtime's brings its own face weights, `fine_coef` (k and the spacing
  // they are made for; a float copy is added when mixed). Collective.
  Multigrid(Runtime& rt, const MgOptions& o, DistributedOperator* fine = nullptr,
            LevelCoefficients* fine_coef = nullptr);
  ~Multigrid() override;
  std::string name() const override { return "mg"; }
  // In double, the fine level's second iterate lives in `scratch` when one is given: 8 B a
  // point less than a vector of its own (mixed keeps its float vectors: see apply_mixed).
  // `in`'s ghost layer is read as zero on Dirichlet faces (every kernel writes interiors
  // only, so the solvers' vectors keep the zeros they were allocated with) and is refreshed
  // from the neighbours (the fine level's first sweep reads x = c in at its ghosts).
  void apply(double* in, double* out, int dot_slot = kNoReduction,
             double* scratch = nullptr) override;
  // Mixed: level 0's float right-hand side; apply_float runs the float cycle from it.
  float* float_input() override;
  const float* apply_float(const double* r, int dot_slot, double* scratch) override;
  double bytes_per_apply() const override { return bytes_; }
  double bytes_per_float_apply() const override;
  // With MgOptions::fmg_cycles > 0: x = one full-multigrid F-cycle's approximation to
  // A^{-1} b (fmg.cpp), else false. b's ghost layers may be refreshed. Collective.
  bool first_iterate(double* b, double* x, double* scratch = nullptr) override;
  // Global bytes one first_iterate() moves (0 when off).
  double fmg_bytes() const;
  std::vector<MgLevelInfo> levels() const;
  std::string describe() const;  // one line: the levels and where they run
  // Each level's own share of one V-cycle: global bytes (the model of bytes_per_apply) and
  // device milliseconds (median of reps; the cycle from that level down, less the cycle
  // from the next level down), on in/out as apply's.
  std::vector<double> level_bytes() const;
  std::vector<double> level_ms(double* in, double* out, int reps);
  std::vector<MgLevelTraffic> level_traffic() const;
  // The fine level's transfer to the next level (its restriction and the prolongation
  // back), or null with one level: bench times it alone.
  const Transfer* fine_transfer() const;
  // Bytes a point that smoothing with these steps moves (from x = 0, or from a guess), the
  // face weights and inverse diagonal of variable coefficients apart; the scaling model's too.
  static double smooth_bytes(const std::vector<std::array<double, 2>>& steps, bool from_zero);

 private:
  struct Level;
  // The cycle's pieces, for the V-cycle's scalar type T (double, or float when mixed).
  template <class T>
  T* cycle(std::size_t l, const T* b, T* x, T* y, int slot, bool from_zero = true);
  // cycle(l, ...) on level l's own vectors from zero, replayed where it was recorded.
  template <class T>
  T* coarse_cycle(std::size_t l);
  template <class T>
  MgLevelView<T> view(std::size_t l) const;
  template <class T>
  T* fmg(const T* b, T* x, T* y);  // fmg.cpp
  template <class T>
  T* smooth(Level& L, const std::vector<std::array<double, 2>>& steps, const T* b, T* x, T* y,
            bool from_zero, int slot);
  static bool fuses_start(const std::vector<std::array<double, 2>>& steps);
  // The bytes a point that smoothing from zero's first step reads of A beyond smooth_bytes,
  // less a sweep's face weights: D^{-1} (8 B) in their place where A is variable, else 0.
  static double start_over_sweep_bytes(const DistributedOperator& A);
  std::size_t swaps(std::size_t l) const;
  void apply_mixed(double* in, double* out, int slot, double* scratch);
  const float* float_cycle(double* scratch);  // from level 0's float b: z in float
  // `scratch`, or (null) the hierarchy's own fine-level vector, allocated at first need.
  double* fine_scratch(double* scratch);
  void lend_fine_floats(double* scratch);  // mixed: level 0's y and w in `scratch`
  void cycle_from(std::size_t l);          // the cycle on level l >= 1, on its own vectors
  // variable coefficients on every level
  void vary_levels(DistributedOperator* fine, LevelCoefficients* fine_coef);
  Buffer coarse_points(Level& F, Level& C, const double* fine);
  void interpolation_weights(Level& F, LevelCoefficients& above);
  Buffer coarse_parts(Level& F, Level& C, LevelCoefficients& above);
  double shifted_low(const Level& L, const LevelCoefficients& c);
  void make_dense(Level& L);  // the coarsest level's inverse, where it is solved exactly
  Runtime& rt_;
  MgOptions o_;
  bool mixed_ = false;
  std::vector<std::unique_ptr<Level>> levels_;
  bool recording_ = false;  // a coarse_cycle is being recorded: the levels below run as usual
  double bytes_ = 0;
  Buffer own_scratch_;      // fine_scratch's when the caller lends none (bench, tests)
  BoxList shell_;           // mixed: the fine level's ghost shell (lend_fine_floats)
  FloatBuffer zero_shell_;  // and as many zeros
};

}  // namespace halo3d
