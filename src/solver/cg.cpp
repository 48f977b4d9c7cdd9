// Conjugate gradients, plain or preconditioned (solvers.hpp's make_cg).
#include <cmath>
#include <string>
#include <vector>

#include "errors.hpp"
#include "method_support.hpp"
#include "precond.hpp"
#include "solvers.hpp"

namespace halo3d {
namespace {

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
    // A float V-cycle takes r in float from the update and gives z in float, which the next
    // direction widens as it reads it: no double z (8 B a point) and no conversion passes.
    // Not in the singular case, whose projection works on a double z.
    if (pc_ && !zero_mean) z_float_in_ = pc_->float_input();
    if (pc_ && !z_float_in_) z_ = Buffer(k_, b.size());
    if (pc_ && zero_mean) ones_ = ones_like(k_, b.size());
  }
  std::string name() const override { return "cg"; }

  void start() override {
    // b may have changed since construction (implicit time steps reuse one CG).
    scale_b();
    // From the x held (0 unless the caller set it), so any x0 is right; or from the
    // preconditioner's first iterate (--fmg), computed from b s (ap_) as x s.
    // z is free until the first precondition(): the preconditioner's scratch (null where
    // there is no double z: the preconditioner's own).
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
      k_.cg_update(op_.layout(), alpha, p_.data(), ap_.data(), x_.data(), r_.data(), 0,
                   z_float_in_);
    }
    const double rr_new = red_.sum();
    const double rel = std::sqrt(rr_new) / bnorm_;
    const bool done = tol_ > 0 && rel <= tol_;  // --tol 0: a fixed count, never done early
    if (pc_ && done) return {rel, true, true};  // x is the answer: no new direction
    const double rz_old = rz_;
    rr_ = rr_new;
    const Direction z = precondition(true);  // rz_ the new r.z from here on
    next_direction(z, rz_ / rz_old);         // rz_ 0: the next step starts over
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
  // With z in float the update also writes r in float (4 B) and the direction reads z in
  // float (4 B less): the same 88 B. A variable operator's apply also reads its three
  // face-weight arrays.
  double bytes_per_iteration() const override {
    // The singular case's projection: sum(z) and sum(r) (read 1, z, r), z -= m 1 (read 1 and
    // z, write z).
    const double project = ones_.size() ? 48.0 : 0.0;
    return (11.0 * 8.0 + project + op_.weight_bytes()) * points_ +
           (!pc_          ? 0.0
            : z_float_in_ ? pc_->bytes_per_float_apply()
                          : pc_->bytes_per_apply());
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
    next_direction(precondition(false), 0.0);
    return rz_ > 0;
  }
  // p = z + beta p, z in double or in float.
  struct Direction {
    const double* z;
    const float* z_float;
  };
  void next_direction(Direction d, double beta) {
    ScopedTimer t(t_.compute);
    if (d.z_float)
      k_.axpby(op_.layout(), 1.0, d.z_float, beta, p_.data());
    else
      k_.axpby(op_.layout(), 1.0, d.z, beta, p_.data());
  }
  // z = M^{-1} r and rz_ = r.z; without a preconditioner z is r and r.z the r.r just summed.
  // r_in_float: the update wrote r rounded to float to z_float_in_ (else it is rounded here).
  Direction precondition(bool r_in_float) {
    if (!(rr_ >= 0) || !std::isfinite(rr_))
      throw Error(kExitBreakdown, "CG breakdown: r.r = " + std::to_string(rr_) +
                                      " (NaN/Inf in the data, or the solve diverged)");
    if (!pc_ || rr_ == 0) {  // r = 0 (b = 0, or x exact): z = M^{-1} r = 0 = r
      rz_ = rr_;
      return {r_.data(), nullptr};
    }
    Direction d{z_.data(), nullptr};
    {
      ScopedTimer t(t_.compute);
      // and r.z into slot 0; A p is dead here (the next step recomputes it): the
      // preconditioner's scratch, so the V-cycle needs no fine vector of its own for it.
      if (!z_float_in_) {
        pc_->apply(r_.data(), z_.data(), 0, ap_.data());
      } else {
        if (!r_in_float) k_.convert(op_.layout(), r_.data(), z_float_in_);
        d.z_float = pc_->apply_float(r_.data(), 0, ap_.data());
      }
    }
    if (ones_.size())
      project_z();
    else
      rz_ = red_.sum();
    // 0: z underflowed (r at the floor of the preconditioner's precision); not a breakdown.
    if (!(rz_ >= 0) || !std::isfinite(rz_))
      throw Error(kExitBreakdown, "PCG breakdown: r.z = " + std::to_string(rz_) +
                                      " (preconditioner not positive definite, or NaN/Inf)");
    return d;
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
  Buffer ones_;                  // the singular case's: 1 at every point (see project_z)
  float* z_float_in_ = nullptr;  // the preconditioner's float input (r in float), or null
  double points_, bb_ = 0, bnorm_ = 0, rr_ = 0, rz_ = 0;
  bool scaled_ = false;  // s_, bb_ and bnorm_ made from b (scale_b)
  bool x_zero_ = true;   // x_ is still the allocation's zeros (nothing wrote it)
  double s_ = 1;         // the scale of b, r, p, z, and of x while iterating
  double x_scale_ = 1;   // x_ holds x times this: s_ while iterating, 1 in the problem's units
};

}  // namespace

std::unique_ptr<Method> make_cg(DistributedOperator& op, MPI_Comm comm, Timers& t, const Buffer& b,
                                double tol, Preconditioner* pc, bool zero_mean) {
  return std::make_unique<Cg>(op, comm, t, b, tol, pc, zero_mean);
}

}  // namespace halo3d
