// How a run solves, as the solver layer takes it: which method, its stopping rule, and
// whether a multigrid hierarchy is built. Decided once from the options at the app boundary
// (src/app/plan.cpp, the one place the applicability rules live); nothing here re-derives it.
#pragma once
#include <memory>

#include "multigrid.hpp"
#include "precond.hpp"
#include "runtime.hpp"

namespace halo3d {

enum class MethodKind {
  cg,             // Poisson: CG, multigrid-preconditioned when `multigrid`
  jacobi,         // Poisson: weighted Jacobi
  euler,          // heat: explicit Euler steps
  implicit_heat,  // heat: theta-scheme steps, each an inner CG (multigrid-preconditioned
                  // when `multigrid`)
};

struct MethodPlan {
  MethodKind kind = MethodKind::cg;
  double tol = 1e-8;       // Poisson's, or each implicit step's inner CG's
  long max_iters = 10000;  // Poisson's, or each implicit step's inner CG's
  double alpha = 1.0;      // heat diffusivity
  TimeScheme time_scheme = TimeScheme::explicit_;
  double theta = 0;  // implicit heat: 1 backward Euler, 1/2 Crank-Nicolson
  // A multigrid hierarchy is built: CG's preconditioner, or the implicit steps' inner CG's.
  bool multigrid = false;
  MgOptions mg;
  bool implicit() const { return kind == MethodKind::implicit_heat; }
  // CG preconditioned by the multigrid V-cycle (the caller builds the preconditioner).
  bool preconditioned() const { return kind == MethodKind::cg && multigrid; }
};

// The preconditioner the plan asks for (CG's multigrid), built on the runtime's fine level;
// nullptr: none (implicit heat builds its own on the shifted operator). Defined in
// multigrid.cpp.
std::unique_ptr<Preconditioner> make_preconditioner(const MethodPlan& m, Runtime& rt);

}  // namespace halo3d
