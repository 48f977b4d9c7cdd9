#include "problem.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

#include "errors.hpp"
#include "fields.hpp"
#include "implicit_heat.hpp"

namespace halo3d {

namespace {
constexpr double kPi = 3.14159265358979323846;
// The shortest of %.15g..%.17g that reads back as v: messages show the exact values.
std::string number(double v) {
  char buf[48];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}
}  // namespace

double random_value(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + index + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return double(z >> 11) * 0x1.0p-52 - 1.0;  // 53 random bits in [-1, 1)
}

Problem::Problem(const SolveOptions& o)
    : problem_(o.problem),
      rhs_(source_spec(o)),
      modes_(o.modes),
      seed_(o.seed),
      grid_(o.grid),
      boundary_values_(has_boundary_values(o)) {
  for (int d = 0; d < 3; ++d) h_[d] = 1.0 / (grid_[d] + 1);
  if (problem_ != "heat") return;
  const double limit = dt_limit(o.alpha);
  steps_ = o.steps;
  alpha_ = o.alpha;
  dt_ = o.dt > 0 ? o.dt : 0.9 * limit;
  // alpha*diag overflowing makes the limit 0 (and dt 0: nothing would move); alpha so small
  // that the limit overflows makes dt infinite; a step whose alpha*dt is not a normal number
  // loses all precision. Each would run to a useless (or NaN) answer.
  const double c = alpha_ * stencil().diag;
  if (!std::isfinite(c) || !(limit > 0) || !std::isfinite(limit) || !std::isfinite(dt_))
    throw BadInput("--alpha " + number(o.alpha) + ": alpha*2*(1/hx^2+1/hy^2+1/hz^2) = " +
                   number(c) + " leaves no usable time step (it must be finite and > 0)");
  theta_ = time_scheme_theta(o);
  if (theta_ > 0 && !std::isfinite(alpha_ * dt_ * stencil().diag))
    throw BadInput("--dt " + number(dt_) + " with --alpha " + number(o.alpha) +
                   ": alpha*dt*2*(1/hx^2+1/hy^2+1/hz^2) overflows");
  if (theta_ == 0 && dt_ > limit)
    throw BadInput("--dt " + number(o.dt) + " is above the explicit-Euler stability limit " +
                   number(limit) +
                   " = 1/(alpha*2*(1/hx^2+1/hy^2+1/hz^2)); --time-scheme implicit or "
                   "crank-nicolson take any --dt");
  if (!(std::abs(alpha_ * dt_) >= std::numeric_limits<double>::min()) ||
      !(alpha_ * dt_ * stencil().diag >= std::numeric_limits<double>::epsilon()))
    throw BadInput(
        "--dt " + number(dt_) + " with --alpha " + number(o.alpha) +
        ": alpha*dt*2*(1/hx^2+1/hy^2+1/hz^2) = " + number(alpha_ * dt_ * stencil().diag) +
        " is below the double precision (1 + it rounds to 1); the step would not "
        "change u");
}

double Problem::lambda(const Int3& k) const {
  double l = 0;
  for (int d = 0; d < 3; ++d) {
    const double s = std::sin(k[d] * kPi * h_[d] / 2);
    l += 4.0 / (h_[d] * h_[d]) * s * s;
  }
  return l;
}

double Problem::dt_limit(double alpha) const { return 1.0 / (alpha * stencil().diag); }

double Problem::mode_value(const Int3& k, int gi, int gj, int gk) const {
  return std::sin(k[0] * kPi * (gi + 1) * h_[0]) * std::sin(k[1] * kPi * (gj + 1) * h_[1]) *
         std::sin(k[2] * kPi * (gk + 1) * h_[2]);
}

void Problem::fill_source(const Decomposition& d, std::vector<double>& padded) const {
  const Layout l = d.layout();
  padded.assign(l.padded_size(), 0.0);
  // Every point on its own: the rank's threads share the planes (a 512^3 field is 134 M
  // points of splitmix64 or sines, seconds on one core).
#pragma omp parallel for collapse(2) schedule(static)
  for (int k = 0; k < l.nz; ++k)
    for (int j = 0; j < l.ny; ++j)
      for (int i = 0; i < l.nx; ++i) {
        const int gi = d.offset[0] + i, gj = d.offset[1] + j, gk = d.offset[2] + k;
        double v = 0;
        if (rhs_ == "random") {
          const std::uint64_t index =
              std::uint64_t(gi) + std::uint64_t(grid_[0]) * (gj + std::uint64_t(grid_[1]) * gk);
          v = random_value(seed_, index);
        } else {
          for (const Int3& m : modes_) {
            const double s = mode_value(m, gi, gj, gk);
            v += problem_ == "heat"
                     ? s
                     : kPi * kPi * double(m[0] * m[0] + m[1] * m[1] + m[2] * m[2]) * s;
          }
        }
        padded[l.at(i, j, k)] = v;
      }
}

// One step of the theta scheme multiplies mode k by
// (1 - (1 - theta) alpha dt lambda_k) / (1 + theta alpha dt lambda_k).
double Problem::step_factor(const Int3& k) const {
  const double l = lambda(k);
  return (1.0 - (1.0 - theta_) * alpha_ * dt_ * l) / (1.0 + theta_ * alpha_ * dt_ * l);
}

double Problem::exact_discrete(int gi, int gj, int gk) const {
  double v = 0;
  for (const Int3& m : modes_) {
    const double s = mode_value(m, gi, gj, gk);
    if (problem_ == "heat")
      v += std::pow(step_factor(m), double(steps_)) * s;
    else
      v += kPi * kPi * double(m[0] * m[0] + m[1] * m[1] + m[2] * m[2]) / lambda(m) * s;
  }
  return v;
}

double Problem::exact_continuous(int gi, int gj, int gk) const {
  double v = 0;
  for (const Int3& m : modes_) {
    const double s = mode_value(m, gi, gj, gk);
    const double k2 = double(m[0] * m[0] + m[1] * m[1] + m[2] * m[2]);
    v += problem_ == "heat" ? std::exp(-alpha_ * kPi * kPi * k2 * dt_ * double(steps_)) * s : s;
  }
  return v;
}

}  // namespace halo3d
