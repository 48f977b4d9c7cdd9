#include "session.hpp"

#include <cmath>
#include <string>

#include "checks.hpp"
#include "coefficient.hpp"
#include "errors.hpp"
#include "fields.hpp"
#include "host_copy.hpp"
#include "implicit_heat.hpp"
#include "timers.hpp"

namespace halo3d {

namespace {

double max_over_ranks(double x, MPI_Comm comm) {
  HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_MAX, comm));
  return x;
}

// ||b - A x|| / ||b|| recomputed from scratch by the method, from its scaled vectors (b and
// x times a power of two: the ratio is the same, and no square overflows or underflows
// whatever the magnitude of b). NaN or Inf is a breakdown, never a success.
double true_relative_residual(Method& m) {
  const double rel = m.true_relative_residual();
  if (!std::isfinite(rel))
    throw Error(kExitBreakdown, "the true residual ||b - A x|| / ||b|| is " + std::to_string(rel) +
                                    ": the solve diverged or the data holds NaN/Inf; nothing "
                                    "written");
  return rel;
}
}  // namespace

SolveSession::SolveSession(const ProblemSpec& problem, const ParallelOptions& parallel,
                           const MethodPlan& method, MPI_Comm world,
                           std::function<MemoryNeed(const Decomposition&, MPI_Comm, bool)> memory)
    : spec_(problem), plan_(method), problem_(std::make_unique<Problem>(spec_)) {
  // No Dirichlet face (every one periodic or Neumann) and no shift: A 1 = 0 (issue 25's step
  // 6; implicit heat's I + c A is nonsingular). A variable shift there is nonsingular where
  // sigma > 0 at some point (checked on the data below).
  singular_ = singular_operator(spec_);
  RuntimeOptions ro;
  static_cast<ParallelOptions&>(ro) = parallel;
  ro.grid = spec_.grid;
  ro.periodic = periodic_axes(spec_);
  ro.neumann = neumann_mask(spec_);
  ro.stencil = problem_->stencil();
  ro.memory = std::move(memory);
  // A variable shift alone, or a Neumann face: k = 1's weights (Neumann's factors on them).
  if (variable_operator(spec_))
    ro.kappa = [this](const Decomposition& d, MPI_Comm cart) {
      return fill_coefficient(spec_, d, cart);
    };
  // With Neumann faces a shift (constant too) is a point field: each point's diagonal takes
  // sigma V_p (LevelCoefficients scales it by the control volume, on every level).
  if (point_shift(spec_))
    ro.sigma = [this](const Decomposition& d, MPI_Comm cart) { return fill_shift(spec_, d, cart); };
  rt_ = make_runtime(ro, world);
  // Heat with a variable k: the step's limit is the largest diagonal of the operator k
  // makes (every rank's maximum), known now; the problem is made again with it.
  if (spec_.problem == ProblemKind::heat && rt_->coefficients)
    problem_ =
        std::make_unique<Problem>(spec_, max_diagonal(*rt_->kernels, *rt_->coefficients, comm()));
}

SolveSession::~SolveSession() = default;

void SolveSession::fill_source() {
  b_ = fill_fields(kernels(), spec_, *problem_, decomp(), comm(),
                   rt_->coefficients ? &rt_->coefficients->kappa() : nullptr);
  // Poisson's boundary values are in b; heat's are added by every step.
  if (spec_.problem == ProblemKind::heat && has_boundary_values(spec_))
    boundary_ = upload(kernels(),
                       boundary_source(spec_, *problem_, decomp(), comm(),
                                       rt_->coefficients ? &rt_->coefficients->kappa() : nullptr));
}

void SolveSession::set_source(Buffer b) { b_ = std::move(b); }

void SolveSession::set_source(const double* box) {
  const std::vector<double> padded = padded_from_box(kernels(), decomp().layout(), box);
  if (b_.size() != padded.size()) b_ = Buffer(kernels(), padded.size());
  upload_to(kernels(), padded, b_.data());
  // Exact: V_p is a power of two, so the bits are fill_fields' (which scales on the host).
  if (decomp().neumann)
    kernels().volume_scale(decomp().layout(), neumann_planes(decomp()), false, b_.data());
}

void SolveSession::build_method() {
  // The preconditioner's set-up (the multigrid hierarchy) is timed on its own.
  if (!pc_built_) {
    const double t_setup = now_seconds();
    pc_ = make_preconditioner(plan_, *rt_);
    // The slowest rank's: the set-up is collective, and every rank then reports the same value.
    setup_s_ = max_over_ranks(now_seconds() - t_setup, comm());
    pc_built_ = true;
  }
  method_.reset();  // the old method's vectors go before the new one's are allocated
  if (singular_) remove_source_mean();
  const Buffer* bg = boundary();
  method_ = plan_.implicit() ? make_implicit_heat(*rt_, plan_, dt(), b_, bg)
                             : make_method(plan_, dt(), *rt_->op, comm(), rt_->timers, b_,
                                           pc_.get(), bg, singular_);
}

// out = the control volume V_p at every interior point (1 without Neumann faces, and with
// `volumes` false), 0 at the ghosts, as every vector's are: out may be a solver's scratch
// vector, used as such again afterwards.
void SolveSession::fill_interior(double* out, bool volumes) {
  const Layout l = decomp().layout();
  std::vector<double> v(l.padded_size(), 0.0);
  for (int k = 0; k < l.nz; ++k)
    for (int j = 0; j < l.ny; ++j)
      for (int i = 0; i < l.nx; ++i) v[std::size_t(l.at(i, j, k))] = 1.0;
  if (volumes) scale_by_volume(decomp(), v);
  upload_to(kernels(), v, out);
}

// sum_p V_p over the grid: V_p is the product of a factor per axis (1/2 in a Neumann plane),
// so the sum is the product of the axes' sums. Exact (dyadic values), as the double-double
// sum of the V_p is.
double SolveSession::total_volume() const {
  const Decomposition& d = decomp();
  const NeumannPlanes np = neumann_planes(d);
  double total = 1.0;
  for (int a = 0; a < 3; ++a) {
    double axis = 0.0;
    for (int g = 0; g < d.grid[a]; ++g) axis += ops::in_neumann_plane(np, a, g) ? 0.5 : 1.0;
    total *= axis;
  }
  return total;
}

// b -= V mean_V(f) (b = V f; without Neumann faces V = 1: b -= mean(b)): the consistent
// problem whose solutions differ from the least-squares ones of the given b by constants
// only; f less its mean. What was removed is reported (solve's output and report).
void SolveSession::remove_source_mean() {
  Kernels& k = kernels();
  const Layout l = decomp().layout();
  const double total = total_volume();
  Buffer w(k, l.padded_size());  // for a moment, before the method's vectors exist
  const double bb = global_dot(k, l, b_.data(), b_.data(), comm());
  fill_interior(w.data(), false);
  removed_.mean = global_dot(k, l, w.data(), b_.data(), comm()) / total;
  if (decomp().neumann) fill_interior(w.data(), true);  // else V = 1: w holds it
  k.axpby(l, -removed_.mean, w.data(), 1.0, b_.data());
  removed_.norm = std::abs(removed_.mean) * std::sqrt(global_dot(k, l, w.data(), w.data(), comm()));
  removed_.relative = bb > 0 ? removed_.norm / std::sqrt(bb) : 0.0;
}

DriveResult SolveSession::drive(const DriveOptions& o, long first, std::vector<double> history) {
  DriveResult r = halo3d::drive(*method_, comm(), o, first, std::move(history));
  // The zero-mean answer (with Neumann faces: mean over the control volumes, sum(V u) = 0):
  // A's null space is the constants, and CG's iterates drift in them by rounding only.
  // In the method's spare vector (dead once solved): nothing allocated beyond the memory
  // check's count after the solve.
  if (singular_) {
    const Layout l = decomp().layout();
    double* w = method_->spare().data();
    double* u = method_->solution().data();
    fill_interior(w, true);
    const double m = global_dot(kernels(), l, w, u, comm()) / total_volume();
    if (decomp().neumann) fill_interior(w, false);  // else V = 1: w holds it
    kernels().axpby(l, -m, w, 1.0, u);
  }
  return r;
}

Verification SolveSession::verify(DriveResult& res, double tol, bool measure) {
  const bool heat = spec_.problem == ProblemKind::heat;
  Verification v;
  if (!heat) v.true_rel = true_relative_residual(*method_);
  if (!heat && res.converged && !(v.true_rel <= kTrueResidualSlack * tol)) {
    res.converged = false;
    v.unconfirmed = true;
  }
  // No iteration ran (--max-iters 0): the residual is the starting iterate's, recomputed.
  v.rel_res = res.history.empty() && !heat ? v.true_rel : res.relative_residual;
  // A NaN/Inf answer is a breakdown on every rank, never a success. Checked where u lives.
  if (!all_finite(kernels(), decomp().layout(), method_->solution().data(), comm()))
    throw Error(kExitBreakdown, "the solution holds NaN or Inf after " +
                                    std::to_string(res.iterations) +
                                    " iterations: the solve diverged; nothing written");
  v.verified = measure;
  if (!v.verified) return v;
  if (problem_->has_exact())
    v.err = problem_->errors(kernels(), decomp(), method_->solution().data(),
                             method_->spare().data(), comm());
  // How much of the halo the overlap hides, measured on the real faces after the solve.
  v.has_halo = decomp().ranks > 1;
  if (v.has_halo) {
    v.ov = rt_->op->measure_overlap(method_->solution().data(), method_->spare().data(), 5, comm());
  }
  return v;
}

}  // namespace halo3d
