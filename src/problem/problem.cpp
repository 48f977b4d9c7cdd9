#include "problem.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

#include "checks.hpp"
#include "errors.hpp"
#include "fields.hpp"
#include "point_ops.hpp"
#include "reduction.hpp"

namespace halo3d {

namespace {
constexpr double kPi = 3.14159265358979323846;
std::string number(double v) { return exact_text(v); }  // messages show the exact values
}  // namespace

double random_value(std::uint64_t seed, std::uint64_t index) {
  return ops::random_point(seed, index);
}

std::vector<double> random_box(const Decomposition& d, std::uint64_t seed, double ghost) {
  const Layout l = d.layout();
  std::vector<double> u(l.padded_size(), ghost);
  for (int k = 0; k < l.nz; ++k)
    for (int j = 0; j < l.ny; ++j)
      for (int i = 0; i < l.nx; ++i)
        u[l.at(i, j, k)] = random_value(
            seed, std::uint64_t(d.offset[0] + i) +
                      std::uint64_t(d.grid[0]) *
                          (d.offset[1] + j + std::uint64_t(d.grid[1]) * (d.offset[2] + k)));
  return u;
}

Stencil operator_stencil(const std::array<double, 3>& h, double shift) {
  Stencil s = Stencil::laplacian(h[0], h[1], h[2]);
  s.diag += shift;
  s.shift = shift;
  return s;
}

std::array<double, 3> spacing(const ProblemSpec& p) {
  std::array<double, 3> h{};
  for (int d = 0; d < 3; ++d) h[d] = p.box[d] / intervals(p, d);
  return h;
}

Problem::Problem(const ProblemSpec& o, double max_diag)
    : problem_(o.problem),
      source_(source_field(o).kind),
      modes_(o.modes),
      seed_(o.seed),
      grid_(o.grid),
      h_(spacing(o)),
      box_(o.box),
      shift_(o.shift),
      boundary_values_(has_boundary_values(o)),
      variable_(variable_coefficient(o) || variable_shift(o)),
      bc_(o.bc) {
  check_operator(o);
  for (int d = 0; d < 3; ++d) {
    unit_[d] = 1.0 / intervals(o, d);
    first_[d] = first_point(o, d);
  }
  if (problem_ != ProblemKind::heat) return;
  steps_ = o.steps;
  alpha_ = o.alpha;
  theta_ = time_scheme_theta(o.time_scheme);
  if (variable_ && !(max_diag > 0)) {  // the step waits for k (see the header)
    dt_ = std::numeric_limits<double>::quiet_NaN();
    return;
  }
  set_time_step(o, variable_ ? max_diag : stencil().diag);
}

// diag: the operator's largest diagonal (constant coefficients: every point's), so that
// explicit Euler's u - alpha dt A u is stable for alpha dt diag <= 1 (Gershgorin: every
// row of I - alpha dt A then has a non-negative diagonal and absolute row sum <= 1). With
// Neumann faces the step is u - alpha dt M^{-1} A u (M = diag V_p) and diag is the largest
// of M^{-1} A's (d_p/V_p; for a constant k and shift the constant stencil's: a boundary
// node's halved faces and volume cancel).
void Problem::set_time_step(const ProblemSpec& o, double diag) {
  const std::string what =
      variable_
          ? "diag = the largest over the points of the sum of the six face weights "
            "2 k_p k_q/(k_p+k_q)/h^2 + shift" +
                std::string(has_neumann(o) ? ", over the control volume's fraction V_p" : "") +
                " = " + number(diag)
          : std::string("diag = 2/hx^2+2/hy^2+2/hz^2+shift");
  const double limit = 1.0 / (alpha_ * diag);
  dt_ = o.dt > 0 ? o.dt : 0.9 * limit;
  // alpha*diag overflowing makes the limit 0 (and dt 0: nothing would move); alpha so small
  // that the limit overflows makes dt infinite; a step whose alpha*dt is not a normal number
  // loses all precision. Each would run to a useless (or NaN) answer.
  const double c = alpha_ * diag;
  if (!std::isfinite(c) || !(limit > 0) || !std::isfinite(limit) || !std::isfinite(dt_))
    throw BadInput("--alpha " + number(o.alpha) + ": alpha*diag (" + what + ") = " + number(c) +
                   " leaves no usable time step (it must be finite and > 0)");
  if (theta_ > 0 && !std::isfinite(alpha_ * dt_ * diag))
    throw BadInput("--dt " + number(dt_) + " with --alpha " + number(o.alpha) +
                   ": alpha*dt*diag (" + what + ") overflows");
  if (theta_ == 0 && dt_ > limit)
    throw BadInput("--dt " + number(o.dt) + " is above the explicit-Euler stability limit " +
                   number(limit) + " = 1/(alpha*diag), " + what +
                   "; --time-scheme implicit or crank-nicolson take any --dt");
  if (!(std::abs(alpha_ * dt_) >= std::numeric_limits<double>::min()) ||
      !(alpha_ * dt_ * diag >= std::numeric_limits<double>::epsilon()))
    throw BadInput("--dt " + number(dt_) + " with --alpha " + number(o.alpha) +
                   ": alpha*dt*diag (" + what + ") = " + number(alpha_ * dt_ * diag) +
                   " is below the double precision (1 + it rounds to 1); the step would not "
                   "change u");
}

double Problem::lambda(const Int3& k) const {
  double l = 0;
  for (int d = 0; d < 3; ++d) {
    const double s = std::sin(wave_number(k[d], d) * kPi * unit_[d] / 2);
    l += 4.0 / (h_[d] * h_[d]) * s * s;
  }
  return l + shift_;
}

// Periodic: sin(2 pi k x/L); Dirichlet at both ends sin(pi k x/L), Neumann at both ends
// cos(pi k x/L); one of each: a quarter wave more, cos or sin((k - 1/2) pi x/L), zero on the
// Dirichlet face and flat on the Neumann one.
double Problem::wave_number(int kd, int axis) const {
  const Bc lo = bc_[std::size_t(2 * axis)], hi = bc_[std::size_t(2 * axis + 1)];
  if (lo == Bc::periodic) return 2.0 * kd;
  return lo == hi ? double(kd) : kd - 0.5;
}

double Problem::axis_value(int kd, int g, int axis) const {
  const double arg = wave_number(kd, axis) * kPi * (g + first_[axis]) * unit_[axis];
  return bc_[std::size_t(2 * axis)] == Bc::neumann ? std::cos(arg) : std::sin(arg);
}

double Problem::mode_value(const Int3& k, int gi, int gj, int gk) const {
  return axis_value(k[0], gi, 0) * axis_value(k[1], gj, 1) * axis_value(k[2], gk, 2);
}

// Every built-in field is sum_m coefficient(m) * mode_value(m): the source (f = -lap of the
// Poisson answer, or the heat initial state), and the discrete and continuous answers.
double Problem::coefficient(const Int3& m, ModeField f) const {
  // The mode sin(kx pi x/LX) sin(ky pi y/LY) sin(kz pi z/LZ) is an eigenfunction of
  // -lap + shift with eigenvalue pi^2 ((kx/LX)^2 + (ky/LY)^2 + (kz/LZ)^2) + shift; other
  // boundaries change the frequency (wave_number: (2k/L)^2 on a periodic axis).
  double k2 = 0;
  for (int d = 0; d < 3; ++d) {
    const double w = wave_number(m[d], d) / box_[d];
    k2 += w * w;
  }
  const double rate = kPi * kPi * k2 + shift_;
  const bool heat = problem_ == ProblemKind::heat;
  switch (f) {
    case ModeField::source:
      return heat ? 1.0 : rate;
    case ModeField::exact_discrete:
      return heat ? std::pow(step_factor(m), double(steps_)) : rate / lambda(m);
    default:
      return heat ? std::exp(-alpha_ * rate * dt_ * double(steps_)) : 1.0;
  }
}

void Problem::fill(Kernels& k, const Decomposition& d, ModeField f, double* out) const {
  const Layout l = d.layout();
  FieldGen g;
  g.off[0] = d.offset[0];
  g.off[1] = d.offset[1];
  g.off[2] = d.offset[2];
  if (f == ModeField::source && source_ == FieldSpec::kRandom) {
    g.kind = FieldGen::random;
    g.gnx = grid_[0];
    g.gny = grid_[1];
    g.seed = seed_;
    k.fill(l, g, out);
    return;
  }
  // The sines once per axis and term on the host (the libm's, the same for every backend);
  // the backend multiplies them out.
  const int n[3] = {l.nx, l.ny, l.nz};
  std::vector<double> t;
  for (const Int3& m : modes_) {
    t.push_back(coefficient(m, f));
    for (int a = 0; a < 3; ++a)
      for (int i = 0; i < n[a]; ++i) t.push_back(axis_value(m[a], d.offset[a] + i, a));
  }
  Buffer tables(k, t.size());
  k.copy(tables.data(), t.data(), t.size(), Lane::interior);
  g.kind = FieldGen::separable;
  g.terms = int(modes_.size());
  g.tables = tables.data();
  k.fill(l, g, out);
  k.synchronize(Lane::interior);  // before the tables (and t) go
}

Problem::Errors Problem::errors(Kernels& k, const Decomposition& d, const double* u, double* e,
                                MPI_Comm comm) const {
  const Layout l = d.layout();
  DD sums[2];
  double mx[2];
  const ModeField which[2] = {ModeField::exact_discrete, ModeField::exact_continuous};
  for (int w = 0; w < 2; ++w) {
    fill(k, d, which[w], e);
    k.axpby(l, 1.0, u, -1.0, e);  // e = u - exact
    k.dot(l, e, e, 0);
    k.read_slots(1, &sums[w]);
    mx[w] = k.max_abs(l, e);
  }
  double g[2];
  global_sums(comm, sums, 2, g);
  HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, mx, 2, MPI_DOUBLE, MPI_MAX, comm));
  const double vol = h_[0] * h_[1] * h_[2];
  return {std::sqrt(vol * g[0]), mx[0], std::sqrt(vol * g[1]), mx[1]};
}

void Problem::fill_source(const Decomposition& d, std::vector<double>& padded) const {
  padded.assign(d.layout().padded_size(), 0.0);
  fill(*make_host_kernels(), d, ModeField::source, padded.data());
}

// One step of the theta scheme multiplies mode k by
// (1 - (1 - theta) alpha dt lambda_k) / (1 + theta alpha dt lambda_k).
double Problem::step_factor(const Int3& k) const {
  const double l = lambda(k);
  return (1.0 - (1.0 - theta_) * alpha_ * dt_ * l) / (1.0 + theta_ * alpha_ * dt_ * l);
}

double Problem::exact_discrete(int gi, int gj, int gk) const {
  double v = 0;
  for (const Int3& m : modes_)
    v += coefficient(m, ModeField::exact_discrete) * mode_value(m, gi, gj, gk);
  return v;
}

double Problem::exact_continuous(int gi, int gj, int gk) const {
  double v = 0;
  for (const Int3& m : modes_)
    v += coefficient(m, ModeField::exact_continuous) * mode_value(m, gi, gj, gk);
  return v;
}

}  // namespace halo3d
