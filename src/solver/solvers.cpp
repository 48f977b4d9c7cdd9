#include "solvers.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "errors.hpp"
#include "host_copy.hpp"
#include "method_support.hpp"
#include "nvtx.hpp"
#include "reduction.hpp"

namespace halo3d {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Scaled as CG is (cg.cpp) when max|f| is outside [2^-256, 2^256], where squares of f or
// of the residual could leave the double range; then a scaled copy of f is kept (one more
// vector, only for such problems).
class Jacobi final : public Method {
 public:
  Jacobi(DistributedOperator& op, MPI_Comm comm, Timers& t, const Buffer& f, double tol)
      : op_(op),
        k_(op.kernels()),
        red_(k_, comm, t),
        f_(f.data()),
        tol_(tol),
        u_(k_, f.size()),
        unew_(k_, f.size()),
        points_(op.global_points()) {
    const double s = norm_scale(k_, op_.layout(), f.data(), comm);
    if (s < 0x1p-256 || s > 0x1p+256) {
      s_ = s;
      fs_ = Buffer(k_, f.size());
      k_.axpby(op_.layout(), s_, f.data(), 0.0, fs_.data());
      f_ = fs_.data();
    }
    k_.dot(op_.layout(), f_, f_, 0);
    ff_ = red_.sum();
    fnorm_ = std::sqrt(ff_);
  }
  std::string name() const override { return "jacobi"; }
  void start() override {}

  Step step() override {
    rescale(k_, op_.layout(), u_, u_scale_, s_);
    // One sweep gives the residual of the current iterate and the next iterate; when the
    // current one is already good enough it is kept and the sweep's output is dropped.
    op_.jacobi(f_, u_.data(), unew_.data(), 0);
    const double rr = red_.sum();
    const double rel = fnorm_ > 0 ? std::sqrt(rr) / fnorm_ : 0.0;
    if (rel <= tol_) return {rel, false, true};
    u_.swap(unew_);
    return {rel, true, false};
  }
  double true_relative_residual() override {       // a sweep into unew_, which is dropped
    rescale(k_, op_.layout(), u_, u_scale_, 1.0);  // u as solution() returns it
    rescale(k_, op_.layout(), u_, u_scale_, s_);
    op_.jacobi(f_, u_.data(), unew_.data(), 0);
    return relative(red_.sum(), ff_);
  }
  std::vector<StateVector> state() override {
    rescale(k_, op_.layout(), u_, u_scale_, s_);
    return {{"u", &u_}};
  }
  std::vector<double> scalars() const override { return {}; }
  void set_scalars(const std::vector<double>&) override {}
  Buffer& solution() override {
    rescale(k_, op_.layout(), u_, u_scale_, 1.0);
    return u_;
  }
  Buffer& spare() override { return unew_; }
  // f, u, unew (and a variable operator's three face weights)
  double bytes_per_iteration() const override { return (3.0 * 8.0 + op_.weight_bytes()) * points_; }

 private:
  DistributedOperator& op_;
  Kernels& k_;
  Reducer red_;
  const double* f_;  // f, or its scaled copy fs_
  double tol_;
  Buffer u_, unew_, fs_;
  double points_, ff_ = 0, fnorm_ = 0, s_ = 1;
  double u_scale_ = 1;  // u_ holds u times this (s_ while iterating)
};

class Heat final : public Method {
 public:
  Heat(DistributedOperator& op, Timers& t, const Buffer& u0, double alpha_dt,
       const Buffer* boundary)
      : op_(op),
        k_(op.kernels()),
        t_(t),
        u0_(u0),
        boundary_(boundary),
        c_(alpha_dt),
        u_(k_, u0.size()),
        unew_(k_, u0.size()),
        points_(op.global_points()) {}
  std::string name() const override { return "euler"; }
  bool has_residual() const override { return false; }
  void start() override {
    ScopedTimer t(t_.compute);
    k_.axpby(op_.layout(), 1.0, u0_.data(), 0.0, u_.data());
  }
  Step step() override {
    op_.heat(c_, u_.data(), unew_.data());
    if (boundary_) {  // u_new = u - alpha dt (A u - B g): the boundary values' source term
      ScopedTimer t(t_.compute);
      k_.axpby(op_.layout(), c_, boundary_->data(), 1.0, unew_.data());
    }
    const NeumannPlanes& np = op_.neumann_planes();
    if (np.faces) {  // the mass V_p (Neumann planes): u_new = u + V^{-1} (u_new - u)
      ScopedTimer t(t_.compute);
      k_.axpby(op_.layout(), -1.0, u_.data(), 1.0, unew_.data());
      k_.volume_scale(op_.layout(), np, true, unew_.data());
      k_.axpby(op_.layout(), 1.0, u_.data(), 1.0, unew_.data());
    }
    u_.swap(unew_);
    return {kNaN, true, false};
  }
  std::vector<StateVector> state() override { return {{"u", &u_}}; }
  std::vector<double> scalars() const override { return {}; }
  void set_scalars(const std::vector<double>&) override {}
  Buffer& solution() override { return u_; }
  Buffer& spare() override { return unew_; }
  double bytes_per_iteration() const override { return (boundary_ ? 5.0 : 2.0) * 8.0 * points_; }

 private:
  DistributedOperator& op_;
  Kernels& k_;
  Timers& t_;
  const Buffer& u0_;
  const Buffer* boundary_;  // B g, or null for zero boundary values
  double c_;
  Buffer u_, unew_;
  double points_;
};

}  // namespace

double norm_scale(Kernels& k, const Layout& l, const double* b, MPI_Comm comm) {
  double m = k.max_abs(l, b);
  if (std::isnan(m)) m = std::numeric_limits<double>::infinity();
  HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &m, 1, MPI_DOUBLE, MPI_MAX, comm));
  if (!std::isfinite(m))
    throw Error(kExitBreakdown, "the right-hand side holds NaN or Inf (it overflowed?)");
  if (m == 0) return 1.0;
  int e = 0;
  std::frexp(m, &e);                              // m = f 2^e, f in [0.5, 1)
  return std::ldexp(1.0, std::min(1 - e, 1022));  // m s in [1, 2) (subnormal m: up to 2^1022)
}

Buffer ones_like(Kernels& k, std::size_t n) { return upload(k, std::vector<double>(n, 1.0)); }

double global_dot(Kernels& k, const Layout& l, const double* x, const double* y, MPI_Comm comm) {
  k.dot(l, x, y, 0);
  DD part[1];
  k.read_slots(1, part);
  double sum = 0;
  global_sums(comm, part, 1, &sum);
  return sum;
}

std::unique_ptr<Method> make_jacobi(DistributedOperator& op, MPI_Comm comm, Timers& t,
                                    const Buffer& f, double tol) {
  return std::make_unique<Jacobi>(op, comm, t, f, tol);
}
std::unique_ptr<Method> make_heat(DistributedOperator& op, Timers& t, const Buffer& u0,
                                  double alpha_dt, const Buffer* boundary) {
  return std::make_unique<Heat>(op, t, u0, alpha_dt, boundary);
}

std::unique_ptr<Method> make_method(const MethodPlan& m, double dt, DistributedOperator& op,
                                    MPI_Comm comm, Timers& t, const Buffer& source,
                                    Preconditioner* pc, const Buffer* boundary, bool zero_mean) {
  switch (m.kind) {
    case MethodKind::euler:
      return make_heat(op, t, source, m.alpha * dt, boundary);
    case MethodKind::jacobi:
      return make_jacobi(op, comm, t, source, m.tol);
    case MethodKind::cg:
      break;
    case MethodKind::implicit_heat:
      throw std::logic_error("make_method: implicit heat is make_implicit_heat's");
  }
  return make_cg(op, comm, t, source, m.tol, pc, zero_mean);
}

}  // namespace halo3d
