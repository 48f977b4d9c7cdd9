#include "solvers.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "errors.hpp"
#include "host_copy.hpp"
#include "nvtx.hpp"
#include "reduction.hpp"

namespace halo3d {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// sqrt(rr / bb): a relative residual from squared norms (b = 0: 0 when r = 0 too).
double relative(double rr, double bb) {
  if (bb == 0) return rr == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return std::sqrt(rr / bb);
}

// v holds a vector times `scale` (a power of two): make it the vector times `target`, in at
// most two exact passes (the problem's units in between, so the factor cannot overflow).
void rescale(Kernels& k, const Layout& l, Buffer& v, double& scale, double target) {
  if (scale == target) return;
  if (scale != 1.0) k.axpby(l, 1.0 / scale, v.data(), 0.0, v.data());
  if (target != 1.0) k.axpby(l, target, v.data(), 0.0, v.data());
  scale = target;
}

// Reads the backend's local partial sums and returns their global values.
class Reducer {
 public:
  Reducer(Kernels& k, MPI_Comm comm, Timers& t) : k_(k), comm_(comm), t_(t) {}
  double sum(int slot = 0) {
    double out[kReductionSlots];
    sums(slot + 1, out);
    return out[slot];
  }
  // Slots 0 .. n-1 in one reduction.
  void sums(int n, double* out) {
    HALO3D_NVTX_RANGE("reduction");
    ScopedTimer timer(t_.reduction);
    DD local[kReductionSlots];
    k_.read_slots(n, local);
    global_sums(comm_, local, n, out);
  }

 private:
  Kernels& k_;
  MPI_Comm comm_;
  Timers& t_;
};

// CG, preconditioned when pc is given (z = M^{-1} r, the textbook PCG recurrences);
// without one, z is r itself and the iterates are plain CG's.
//
// Scaled: the iteration runs on b s and x s, s = norm_scale(b) (a power of two that puts
// max|b s| in [1, 2)), so that squares of b and of the residual neither overflow nor
// underflow whatever the problem's magnitude (b = 1e-170 or 1e300). A power of two is
// exact, so the iterates are the unscaled ones times s bit for bit (in the normal range),
// and relative residuals do not change. x is held scaled while iterating (state() and the
// checkpoints hold the scaled vectors); solution() returns it in the problem's units.
//
// A recurrence that runs out (r.z, p.Ap or r.r exactly 0: the residual has reached the
// underflow floor, or x is exact) is not a breakdown: the residual is recomputed from b - A x
// and CG starts over from there (with --tol 0 this keeps a fixed iteration count going);
// only when the true residual is exactly 0 is x the answer. Negative or NaN curvature is a
// breakdown.
class Cg final : public Method {
 public:
  Cg(DistributedOperator& op, MPI_Comm comm, Timers& t, const Buffer& b, double tol,
     Preconditioner* pc, bool zero_mean)
      : op_(op),
        pc_(pc),
        k_(op.kernels()),
        comm_(comm),
        red_(k_, comm, t),
        t_(t),
        b_(b),
        tol_(tol),
        x_(k_, b.size()),
        r_(k_, b.size()),
        p_(k_, b.size()),
        ap_(k_, b.size()),
        points_(op.global_points()) {
    if (pc_) z_ = Buffer(k_, b.size());
    if (pc_ && zero_mean) ones_ = ones_like(k_, b.size());
  }
  std::string name() const override { return "cg"; }

  void start() override {
    // b may have changed since construction (implicit time steps reuse one CG).
    scale_b();
    // From the x held (0 unless the caller set it), so any x0 is right; or from the
    // preconditioner's first iterate (--fmg), computed from b s (ap_) as x s.
    // z is free until the first precondition(): the preconditioner's scratch.
    const bool fmg = pc_ && bnorm_ != 0 && pc_->first_iterate(ap_.data(), x_.data(), z_.data());
    if (fmg) x_scale_ = s_, x_zero_ = false;
    if (x_zero_) x_scale_ = s_;  // 0 at any scale: no pass over x
    set_x_scale(s_);
    if (bnorm_ == 0) {  // b = 0: x = 0 is exact
      ScopedTimer t(t_.compute);
      k_.axpby(op_.layout(), 0.0, x_.data(), 0.0, x_.data());
      rr_ = rz_ = 0;
      return;
    }
    if (x_zero_) {
      // r = b s - A 0 is b s bit for bit (A 0 is +0 at every point, and f - (+0) = f), which
      // scale_b left in ap_: taken over, not recomputed (two passes over b and a residual
      // sweep fewer), and r.r is b s's square, summed there.
      r_.swap(ap_);
      rr_ = bb_;
      x_zero_ = false;
      first_direction();
      return;
    }
    recompute_residual(!fmg);  // b s is still in ap_ unless the F-cycle used it
  }

  Step step() override {
    scale_b_once();
    x_zero_ = false;
    set_x_scale(s_);
    if (bnorm_ == 0) return {0.0, false, true};                        // b = 0: x = 0 is exact
    if (rz_ == 0 && !recompute_residual()) return {0.0, false, true};  // r = 0: x is exact
    double pap = curvature();
    if (pap == 0) {  // p.Ap underflowed: the recurrence is at its floor; start over
      if (!recompute_residual()) return {0.0, false, true};
      pap = curvature();
    }
    if (!(pap > 0))
      throw Error(kExitBreakdown, "CG breakdown: p.Ap = " + std::to_string(pap) +
                                      " (operator not positive definite, or NaN/Inf in the data)");
    const double alpha = rz_ / pap;
    {
      ScopedTimer t(t_.compute);
      k_.cg_update(op_.layout(), alpha, p_.data(), ap_.data(), x_.data(), r_.data(), 0);
    }
    const double rr_new = red_.sum();
    const double rel = std::sqrt(rr_new) / bnorm_;
    const bool done = tol_ > 0 && rel <= tol_;  // --tol 0: a fixed count, never done early
    if (pc_ && done) return {rel, true, true};  // x is the answer: no new direction
    const double rz_old = rz_;
    rr_ = rr_new;
    const double* z = precondition();
    next_direction(z, rz_ / rz_old);  // rz_ 0: the next step starts over
    return {rel, true, done};
  }

  double true_relative_residual() override {
    scale_b_once();
    set_x_scale(1.0);  // x as solution() returns it (exact back up: no bit of it is lost)
    set_x_scale(s_);
    {
      ScopedTimer t(t_.compute);
      k_.axpby(op_.layout(), s_, b_.data(), 0.0, ap_.data());
    }
    op_.residual(ap_.data(), x_.data(), r_.data(), 0);
    rr_ = red_.sum();
    rz_ = 0;  // a further step() starts over from this residual
    return relative(rr_, bb_);
  }

  std::vector<StateVector> state() override {
    scale_b_once();   // a restart's state continues with this scale (the same b gives the same s)
    x_zero_ = false;  // the caller may write x
    set_x_scale(s_);
    return {{"x", &x_}, {"r", &r_}, {"p", &p_}};
  }
  std::vector<double> scalars() const override { return {rz_}; }
  void set_scalars(const std::vector<double>& s) override { rz_ = s.at(0); }
  Buffer& solution() override {
    set_x_scale(1.0);
    x_zero_ = false;  // the caller may write x (implicit heat sets its first guess there)
    return x_;
  }
  Buffer& spare() override { return ap_; }
  // apply: read p, write Ap; update: read p, Ap, x, r, write x, r; axpby: read r (or z), p,
  // write p; preconditioned: the preconditioner's traffic (r.z comes with its last sweep).
  // A variable operator's apply also reads its three face-weight arrays.
  double bytes_per_iteration() const override {
    // The singular case's projection: sum(z) and sum(r) (read 1, z, r), z -= m 1 (read 1 and
    // z, write z).
    const double project = ones_.size() ? 48.0 : 0.0;
    return (11.0 * 8.0 + project + op_.weight_bytes()) * points_ +
           (pc_ ? pc_->bytes_per_apply() : 0.0);
  }

 private:
  // s and ||b s|| (ap_ holds b s until the next operator application).
  void scale_b() {
    s_ = norm_scale(k_, op_.layout(), b_.data(), comm_);
    {
      ScopedTimer t(t_.compute);
      k_.axpby(op_.layout(), s_, b_.data(), 0.0, ap_.data());
    }
    k_.dot(op_.layout(), ap_.data(), ap_.data(), 0);
    bb_ = red_.sum();
    bnorm_ = std::sqrt(bb_);
    scaled_ = true;
  }
  // Where start() has not run (a restart's state, read before the first step): b's scale
  // from b as it is. Not in the constructor: start() makes it again (b may have changed
  // since), and three passes over b are wasted on every fresh solve.
  void scale_b_once() {
    if (!scaled_) scale_b();
  }
  // x_ holds x times x_scale_: make it x times `target` (exact: powers of two).
  void set_x_scale(double target) {
    ScopedTimer t(t_.compute);
    rescale(k_, op_.layout(), x_, x_scale_, target);
  }
  // p.Ap, into ap_.
  double curvature() {
    op_.apply(p_.data(), ap_.data(), 0);
    return red_.sum();
  }
  // r = b s - A x s from scratch (b s into ap_ first, unless it is there already), then
  // first_direction(); false when r is exactly 0 (x exact).
  bool recompute_residual(bool ap_holds_bs = false) {
    if (!ap_holds_bs) {
      ScopedTimer t(t_.compute);
      k_.axpby(op_.layout(), s_, b_.data(), 0.0, ap_.data());
    }
    op_.residual(ap_.data(), x_.data(), r_.data(), 0);
    rr_ = red_.sum();
    return first_direction();
  }
  // z = M^{-1} r, p = z; false when r is exactly 0.
  bool first_direction() {
    next_direction(precondition(), 0.0);
    return rz_ > 0;
  }
  void next_direction(const double* z, double beta) {
    ScopedTimer t(t_.compute);
    k_.axpby(op_.layout(), 1.0, z, beta, p_.data());
  }
  // z = M^{-1} r and rz_ = r.z; without a preconditioner z is r and r.z the r.r just summed.
  const double* precondition() {
    if (!(rr_ >= 0) || !std::isfinite(rr_))
      throw Error(kExitBreakdown, "CG breakdown: r.r = " + std::to_string(rr_) +
                                      " (NaN/Inf in the data, or the solve diverged)");
    if (!pc_ || rr_ == 0) {  // r = 0 (b = 0, or x exact): z = M^{-1} r = 0 = r
      rz_ = rr_;
      return r_.data();
    }
    {
      ScopedTimer t(t_.compute);
      // and r.z into slot 0; A p is dead here (the next step recomputes it): the
      // preconditioner's scratch, so the V-cycle needs no fine vector of its own for it.
      pc_->apply(r_.data(), z_.data(), 0, ap_.data());
    }
    if (ones_.size())
      project_z();
    else
      rz_ = red_.sum();
    // 0: z underflowed (r at the floor of the preconditioner's precision); not a breakdown.
    if (!(rz_ >= 0) || !std::isfinite(rz_))
      throw Error(kExitBreakdown, "PCG breakdown: r.z = " + std::to_string(rz_) +
                                      " (preconditioner not positive definite, or NaN/Inf)");
    return z_.data();
  }

  // The singular case (A 1 = 0, b of zero sum): z = M^{-1} r loses its mean, so the
  // directions stay among the zero-sum vectors, where A is definite; sum(z) and sum(r) come
  // in r.z's reduction, and r.z follows the projection: r.(z - m 1) = r.z - m sum(r).
  void project_z() {
    k_.dot(op_.layout(), ones_.data(), z_.data(), 1);
    k_.dot(op_.layout(), ones_.data(), r_.data(), 2);
    double s[3];
    red_.sums(3, s);
    const double m = s[1] / points_;
    ScopedTimer t(t_.compute);
    k_.axpby(op_.layout(), -m, ones_.data(), 1.0, z_.data());
    rz_ = s[0] - m * s[2];
  }

  DistributedOperator& op_;
  Preconditioner* pc_;
  Kernels& k_;
  MPI_Comm comm_;
  Reducer red_;
  Timers& t_;
  const Buffer& b_;
  double tol_;
  Buffer x_, r_, p_, ap_, z_;
  Buffer ones_;  // the singular case's: 1 at every point (see project_z)
  double points_, bb_ = 0, bnorm_ = 0, rr_ = 0, rz_ = 0;
  bool scaled_ = false;  // s_, bb_ and bnorm_ made from b (scale_b)
  bool x_zero_ = true;   // x_ is still the allocation's zeros (nothing wrote it)
  double s_ = 1;         // the scale of b, r, p, z, and of x while iterating
  double x_scale_ = 1;   // x_ holds x times this: s_ while iterating, 1 in the problem's units
};

// Scaled as CG is (see there) when max|f| is outside [2^-256, 2^256], where squares of f or
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

std::unique_ptr<Method> make_cg(DistributedOperator& op, MPI_Comm comm, Timers& t, const Buffer& b,
                                double tol, Preconditioner* pc, bool zero_mean) {
  return std::make_unique<Cg>(op, comm, t, b, tol, pc, zero_mean);
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

double remove_mean(Kernels& k, const Layout& l, double* v, const Buffer& ones, double points,
                   MPI_Comm comm) {
  const double m = global_dot(k, l, ones.data(), v, comm) / points;
  k.axpby(l, -m, ones.data(), 1.0, v);
  return m;
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
