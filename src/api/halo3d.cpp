// The public API (include/halo3d/halo3d.hpp) over SolveSession: the caller's settings become
// the session's ProblemSpec, ParallelOptions and MethodPlan, and its arrays the session's
// source and solution. No second assembly: the session builds the run as `halo3d solve` does.
#include "halo3d/halo3d.hpp"

#include "coefficient.hpp"
#include "mpi_env.hpp"
#include "session.hpp"

namespace halo3d {

const char* version() { return HALO3D_VERSION_STRING; }

namespace {

Backend to_backend(Settings::Backend b) {
  switch (b) {
    case Settings::Backend::host:
      return Backend::host;
    case Settings::Backend::cuda:
      return Backend::cuda;
    case Settings::Backend::auto_:
      break;
  }
  return Backend::auto_;
}

// The plan `halo3d solve --solver S --precond P --tol --max-iters --precision` makes
// (app/plan.cpp's method_plan), with the command line's multigrid defaults (MgOptions').
MethodPlan method_plan(const Settings& s) {
  if (!(s.tol >= 0) || s.max_iters < 0)
    throw BadInput("halo3d::Settings: tol and max_iters must be >= 0 (tol " +
                   std::to_string(s.tol) + ", max_iters " + std::to_string(s.max_iters) + ")");
  MethodPlan m;
  m.kind = s.method == Settings::Method::jacobi ? MethodKind::jacobi : MethodKind::cg;
  m.multigrid = s.method == Settings::Method::mg_pcg;
  m.tol = s.tol;
  m.max_iters = s.max_iters;
  m.mg.precision =
      s.precision == Settings::Precision::mixed ? Precision::mixed : Precision::double_;
  return m;
}

ProblemSpec problem_spec(const Grid& g, const Operator& op) {
  if (op.boundary_value != 0.0)
    throw BadInput("halo3d::Operator: boundary_value " + std::to_string(op.boundary_value) +
                   ": only 0 is supported");
  for (int p : g.points)
    if (p < 1) throw BadInput("halo3d::Grid: points " + to_string(g.points) + ": must be >= 1");
  ProblemSpec spec;
  spec.grid = g.points;
  spec.problem = ProblemKind::poisson;
  spec.box = op.box;
  spec.shift = op.shift;
  spec.coefficient = op.coefficient;
  spec.shift_field = op.shift_field;
  spec.bc = parse_bc(op.bc);  // names --bc, as check_operator names --box and --shift
  check_operator(spec);       // names --box/--shift: the command line's words for these fields
  check_coefficient_option(spec);
  return spec;
}

}  // namespace

struct Solver::Impl {
  std::unique_ptr<SolveSession> session;
};

Solver::Solver(MPI_Comm comm, const Grid& grid, const Settings& settings, const Operator& op)
    : impl_(std::make_unique<Impl>()) {
  check_host_isa(comm);
  ParallelOptions par;
  par.procs = grid.procs;
  par.backend = to_backend(settings.backend);
  impl_->session =
      std::make_unique<SolveSession>(problem_spec(grid, op), par, method_plan(settings), comm);
}

Solver::Solver(Solver&&) noexcept = default;
Solver& Solver::operator=(Solver&&) noexcept = default;
Solver::~Solver() = default;

Box Solver::local_box() const {
  const Decomposition& d = impl_->session->decomp();
  return {d.offset, d.count};
}

std::array<int, 3> Solver::process_grid() const { return impl_->session->decomp().procs; }

std::string Solver::backend() const { return impl_->session->kernels().name(); }

std::string Solver::warnings() const { return impl_->session->runtime().warnings; }

Result Solver::solve(const double* f, double* u) {
  SolveSession& s = *impl_->session;
  // f (and u) may be device memory the caller's kernels or copies are still writing (or
  // reading) on its own streams: this backend's streams do not wait for those by themselves.
  s.kernels().wait_for_caller();
  s.set_source(f);
  s.build_method();  // the hierarchy once; the method (scaled by this f) every time
  s.method().start();
  DriveOptions o;
  o.max_iters = s.plan().max_iters;
  DriveResult res = s.drive(o);
  const Verification v = s.verify(res, s.plan().tol, false);
  s.solution_to(u);
  Result r{res.iterations, res.converged, v.true_rel};
  r.singular = s.singular();
  r.source_mean_removed = r.singular ? s.mean_removed().mean : 0.0;
  return r;
}

}  // namespace halo3d
