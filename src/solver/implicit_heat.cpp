#include "implicit_heat.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include "errors.hpp"
#include "multigrid.hpp"

namespace halo3d {

namespace {

// I + c A: the 7-point operator's stencil scaled by c, with 1 added on the diagonal (its
// constant part: a variable operator's face weights are made for it, see ImplicitHeat).
Stencil shifted(const Stencil& s, double c) {
  Stencil out;
  out.cx = c * s.cx, out.cy = c * s.cy, out.cz = c * s.cz, out.diag = 1.0 + c * s.diag;
  out.shift = 1.0 + c * s.shift;
  return out;
}

class ImplicitHeat final : public Method {
 public:
  ImplicitHeat(Runtime& rt, const MethodPlan& o, double dt, const Buffer& u0,
               const Buffer* boundary)
      : op_(*rt.op),
        k_(*rt.kernels),
        t_(rt.timers),
        theta_(o.theta),
        explicit_c_((1.0 - theta_) * o.alpha * dt),
        boundary_c_(o.alpha * dt),
        u0_(u0),
        boundary_(boundary),
        u_(k_, u0.size()),
        rhs_(k_, u0.size()),
        max_iters_(o.max_iters),
        tol_(o.tol),
        name_(to_string(o.time_scheme)) {
    const double c = theta_ * o.alpha * dt;
    const Stencil s = shifted(op_.stencil(), c);
    // A variable k: the same face weights times c (the shifted stencil's 1/h^2 are c/h^2),
    // the shift 1 + c sigma (a variable shift: 1 + c sigma_p at each point, rounded as the
    // constant one is); the multigrid coarsens k and it from them on every level.
    // With Neumann planes M + c A: the per-point shift V_p (1 + c sigma_p), sigma 1 + c shift
    // where the shift is constant (LevelCoefficients multiplies it by V_p).
    if (rt.coefficients) {
      std::vector<double> sigma = rt.coefficients->sigma();
      for (double& v : sigma) v = 1.0 + c * v;
      if (sigma.empty() && op_.neumann_planes().faces)
        sigma.assign(rt.decomp.layout().padded_size(), s.shift);
      coef_ =
          std::make_unique<LevelCoefficients>(k_, rt.decomp.layout(), s, rt.coefficients->kappa(),
                                              std::move(sigma), neumann_planes(rt.decomp));
    }
    opm_ = make_operator(rt, rt.decomp, coef_ ? coef_->attach(s) : s);
    if (o.multigrid) mg_ = std::make_unique<Multigrid>(rt, o.mg, opm_.get(), coef_.get());
    cg_ = make_cg(*opm_, rt.cart.get(), t_, rhs_, o.tol, mg_.get());
    pcg_bytes_ = cg_->bytes_per_iteration();
  }
  std::string name() const override { return name_; }
  bool has_residual() const override { return false; }
  void start() override {
    ScopedTimer t(t_.compute);
    k_.axpby(op_.layout(), 1.0, u0_.data(), 0.0, u_.data());
  }

  Step step() override {
    // rhs = u - (1 - theta) alpha dt A u (one sweep; a copy for backward Euler)
    if (explicit_c_ > 0) {
      op_.heat(explicit_c_, u_.data(), rhs_.data());
    } else {
      ScopedTimer t(t_.compute);
      k_.axpby(op_.layout(), 1.0, u_.data(), 0.0, rhs_.data());
    }
    const NeumannPlanes& np = op_.neumann_planes();
    if (np.faces) {  // the mass: rhs += (V - 1) u, through the CG's solution (set below)
      ScopedTimer t(t_.compute);
      double* vu = cg_->solution().data();
      k_.axpby(op_.layout(), 1.0, u_.data(), 0.0, vu);
      k_.volume_scale(op_.layout(), np, false, vu);
      k_.axpby(op_.layout(), 1.0, vu, 1.0, rhs_.data());
      k_.axpby(op_.layout(), -1.0, u_.data(), 1.0, rhs_.data());
    }
    if (boundary_) {  // + alpha dt B g: theta of it from u_new's side, 1 - theta from u's
      ScopedTimer t(t_.compute);
      k_.axpby(op_.layout(), boundary_c_, boundary_->data(), 1.0, rhs_.data());
    }
    {
      ScopedTimer t(t_.compute);  // the previous state is the first guess
      k_.axpby(op_.layout(), 1.0, u_.data(), 0.0, cg_->solution().data());
    }
    cg_->start();
    long its = 0;
    for (;;) {
      if (its >= max_iters_)
        throw Error(kExitNotConverged, "implicit step " + std::to_string(steps_ + 1) +
                                           ": CG did not reach --tol within " +
                                           std::to_string(max_iters_) +
                                           " iterations (--max-iters); nothing written");
      const Step s = cg_->step();
      if (s.advanced) ++its;
      if (s.converged) break;
    }
    confirm_step(its);
    inner_ += its;
    ++steps_;
    bytes_ += (boundary_ ? 64.0 : 40.0) * op_.global_points() + double(its) * pcg_bytes_;
    u_.swap(cg_->solution());
    return {std::numeric_limits<double>::quiet_NaN(), true, false};
  }

  // A step is done when the true residual of its answer meets --tol (with the slack of
  // solve's convergence), not only CG's recurrence: else the run ends, as at --max-iters.
  void confirm_step(long its) {
    const double rel = cg_->true_relative_residual();
    if (!std::isfinite(rel))
      throw Error(kExitBreakdown, "implicit step " + std::to_string(steps_ + 1) +
                                      ": the true residual is " + std::to_string(rel) +
                                      " (NaN/Inf in the data); nothing written");
    if (rel > 2.0 * tol_) {
      char line[200];
      std::snprintf(line, sizeof line,
                    "implicit step %ld: CG's recurrence met --tol %.3e after %ld iterations but "
                    "the true residual %.3e is above 2 x --tol; nothing written",
                    steps_ + 1, tol_, its, rel);
      throw Error(kExitNotConverged, line);
    }
  }

  std::vector<StateVector> state() override { return {{"u", &u_}}; }
  std::vector<double> scalars() const override { return {}; }
  void set_scalars(const std::vector<double>&) override {}
  Buffer& solution() override { return u_; }
  Buffer& spare() override { return rhs_; }
  // The average over the steps so far: the explicit part and copies (40 B/point; 64 with
  // the boundary values' term) and the inner iterations.
  double bytes_per_iteration() const override { return steps_ ? bytes_ / double(steps_) : 0.0; }
  long inner_iterations() const override { return inner_; }

 private:
  DistributedOperator& op_;
  Kernels& k_;
  Timers& t_;
  double theta_, explicit_c_, boundary_c_;
  const Buffer& u0_;
  const Buffer* boundary_;  // B g, or null for zero boundary values
  Buffer u_, rhs_;
  long max_iters_;
  double tol_;
  std::string name_;
  std::unique_ptr<LevelCoefficients> coef_;  // I + c A's face weights (variable k), or null
  std::unique_ptr<DistributedOperator> opm_;
  std::unique_ptr<Multigrid> mg_;
  std::unique_ptr<Method> cg_;
  double pcg_bytes_ = 0, bytes_ = 0;
  long inner_ = 0, steps_ = 0;
};

}  // namespace

std::unique_ptr<Method> make_implicit_heat(Runtime& rt, const MethodPlan& o, double dt,
                                           const Buffer& u0, const Buffer* boundary) {
  return std::make_unique<ImplicitHeat>(rt, o, dt, u0, boundary);
}

}  // namespace halo3d
