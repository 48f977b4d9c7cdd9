#include "session.hpp"

#include "errors.hpp"
#include "fields.hpp"
#include "implicit_heat.hpp"
#include "timers.hpp"

namespace halo3d {

namespace {

double max_over_ranks(double x, MPI_Comm comm) {
  HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_MAX, comm));
  return x;
}

}  // namespace

SolveSession::SolveSession(const ProblemSpec& problem, const ParallelOptions& parallel,
                           const MethodPlan& method, MPI_Comm world,
                           std::function<MemoryNeed(const Decomposition&, MPI_Comm)> memory)
    : spec_(problem), plan_(method), problem_(std::make_unique<Problem>(spec_)) {
  RuntimeOptions ro;
  static_cast<ParallelOptions&>(ro) = parallel;
  ro.grid = spec_.grid;
  ro.stencil = problem_->stencil();
  ro.memory = std::move(memory);
  rt_ = make_runtime(ro, world);
}

SolveSession::~SolveSession() = default;

void SolveSession::fill_source() {
  b_ = fill_fields(kernels(), spec_, *problem_, decomp(), comm());
  // Poisson's boundary values are in b; heat's are added by every step.
  if (spec_.problem == ProblemKind::heat && has_boundary_values(spec_))
    boundary_ = upload(kernels(), boundary_source(spec_, *problem_, decomp(), comm()));
}

void SolveSession::set_source(Buffer b) { b_ = std::move(b); }

void SolveSession::build_method() {
  // The preconditioner's set-up (the multigrid hierarchy) is timed on its own.
  const double t_setup = now_seconds();
  pc_ = make_preconditioner(plan_, *rt_);
  // The slowest rank's: the set-up is collective, and every rank then reports the same value.
  setup_s_ = max_over_ranks(now_seconds() - t_setup, comm());
  const Buffer* bg = boundary();
  method_ = plan_.implicit()
                ? make_implicit_heat(*rt_, plan_, dt(), b_, bg)
                : make_method(plan_, dt(), *rt_->op, comm(), rt_->timers, b_, pc_.get(), bg);
}

DriveResult SolveSession::drive(const DriveOptions& o, long first, std::vector<double> history) {
  return halo3d::drive(*method_, comm(), o, first, std::move(history));
}

}  // namespace halo3d
