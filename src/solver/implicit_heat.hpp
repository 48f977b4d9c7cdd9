// Implicit time steps for u_t = alpha lap u (the theta scheme): each step solves
//   (I + theta alpha dt A) u_new = (I - (1 - theta) alpha dt A) u
// with CG (multigrid-preconditioned unless --precond none) to --tol, from u as the first
// guess. theta = 1: backward Euler, 1/2: Crank-Nicolson; stable for any dt. The hierarchy
// is built once per run. Boundary values g (A u there is A_0 u - B g, A_0 the operator with
// zero ghosts) move to the right-hand side: (I + theta alpha dt A_0) u_new =
// (I - (1 - theta) alpha dt A_0) u + alpha dt B g, so CG and the multigrid stay homogeneous.
// A is -div(k grad) + sigma: with a variable k (Runtime::coefficients) I + c A has k's face
// weights times c and the shift 1 + c sigma on every multigrid level.
#pragma once
#include <memory>

#include "method_plan.hpp"
#include "runtime.hpp"
#include "solvers.hpp"

namespace halo3d {

// boundary: B g of non-zero boundary values (fields.hpp's boundary_source), or null; it
// must outlive the method.
std::unique_ptr<Method> make_implicit_heat(Runtime& rt, const MethodPlan& o, double dt,
                                           const Buffer& u0, const Buffer* boundary = nullptr);

}  // namespace halo3d
