// The multigrid's smoothing steps and its coarsest solve: Chebyshev polynomials in D^{-1}A
// over bounds of its spectrum (exact for constant coefficients, the operator's Gershgorin
// bound for variable ones), shared by the set-up of every level (multigrid.cpp).
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "multigrid_level.hpp"

namespace halo3d {

using Steps = MgSteps;

namespace {

constexpr double kPi = 3.14159265358979323846;
// The smoother targets [lambda_max / kSmoothRange, lambda_max] of D^{-1}A: the modes the
// next coarser grid cannot represent (above ~1/3 of lambda_max in 3D for 2:1 coarsening).
constexpr double kSmoothRange = 6.0;
// The coarsest solve: a Chebyshev polynomial reducing every mode by at least this much.
constexpr double kCoarseReduction = 1e-3;
constexpr int kCoarseMaxSteps = 100;

// Bounds of the spectrum of D^{-1}A for the 7-point stencil s on an n grid (exact: the
// eigenvectors are sine modes on Dirichlet axes, Fourier modes on periodic ones). A periodic
// axis adds 2c(1 - cos(2 pi k/n)): 0 for its constants at the low end, 4c at the high end for
// even n (2c(1 + cos(pi/n)) for odd n, 0 for n = 1). With no Dirichlet axis and no shift
// (A 1 = 0) the low end is the smallest nonzero eigenvalue. A node-centred axis (a Neumann
// face; m intervals) has V^{-1} A's cosine modes: between two Neumann faces 2c(1 - cos(pi k/m)),
// k = 0..m (0 for the constants, up to 4c), with a Dirichlet face at the other end
// 2c(1 - cos((k - 1/2) pi/m)), k = 1..m.
std::array<double, 2> spectrum(const Stencil& s, const Int3& n, const Decomposition& d) {
  const Periodic& p = d.periodic;
  const double shift = s.diag - 2.0 * (s.cx + s.cy + s.cz);
  const double c[3] = {s.cx, s.cy, s.cz};
  double lo = shift, hi = shift, nonzero = 0;
  bool dirichlet = false;
  for (int a = 0; a < 3; ++a) {
    const bool lo_n = d.neumann_face(a, 0), hi_n = d.neumann_face(a, 1);
    if (lo_n && hi_n) {
      const int m = n[a] - 1;
      hi += 4.0 * c[a];
      const double first = 2.0 * c[a] * (1.0 - std::cos(kPi / m));
      if (m >= 1 && (nonzero == 0 || first < nonzero)) nonzero = first;
      continue;
    }
    if (lo_n || hi_n) {
      dirichlet = true;
      const double cs = std::cos(kPi / (2.0 * n[a]));
      lo += 2.0 * c[a] * (1.0 - cs);
      hi += 2.0 * c[a] * (1.0 + cs);
      continue;
    }
    if (p[a]) {
      hi += 2.0 * c[a] * (1.0 + std::cos(kPi * (n[a] % 2) / n[a]));
      const double first = 2.0 * c[a] * (1.0 - std::cos(2.0 * kPi / n[a]));
      if (n[a] > 1 && (nonzero == 0 || first < nonzero)) nonzero = first;
      continue;
    }
    dirichlet = true;
    const double cs = std::cos(kPi / (n[a] + 1));
    lo += 2.0 * c[a] * (1.0 - cs);
    hi += 2.0 * c[a] * (1.0 + cs);
  }
  if (!dirichlet && s.shift == 0 && nonzero > 0) lo = nonzero;
  return {lo / s.diag, hi / s.diag};
}

}  // namespace

// Saad, Iterative Methods for Sparse Linear Systems, Alg. 12.1, with D^{-1} as the
// preconditioner.
Steps mg_chebyshev_steps(double a, double b, int count, double diag) {
  const double inv_diag = 1.0 / diag;
  const double theta = (b + a) / 2, delta = (b - a) / 2;
  Steps out{{0.0, inv_diag / theta}};
  if (delta <= 1e-12 * theta) return out;  // one eigenvalue: the first step is exact
  const double sigma = theta / delta;
  double rho = 1.0 / sigma;
  for (int k = 1; k < count; ++k) {
    const double next = 1.0 / (2.0 * sigma - rho);
    out.push_back({next * rho, 2.0 * next / delta * inv_diag});
    rho = next;
  }
  return out;
}

namespace {

// The interval of D^{-1}A the steps target and the diagonal they divide by. Constant
// coefficients: the exact bounds, and 1/diag folded into the steps. Variable ones
// (bound > 0: the operator's own Gershgorin bound of D^{-1}A, coefficients.hpp): that
// bound on top, the constant stencil's ratio of the ends below it (the coarsest solve's
// low end; the coarsest grid is usually one point, where it is exact), and each point
// divides by its own diagonal.
struct Interval {
  double lo, hi, diag;
};
Interval interval(const Stencil& s, const Int3& n, const Decomposition& p, double bound) {
  const auto [lo, hi] = spectrum(s, n, p);
  if (bound > 0) return {bound * (lo / hi), bound, 1.0};
  return {lo, hi, s.diag};
}

}  // namespace

Steps smoother_steps(const MgOptions& o, const Stencil& s, const Int3& n, const Decomposition& p,
                     double bound) {
  const Interval in = interval(s, n, p, bound);
  const double b = in.hi, a = b / kSmoothRange;
  if (o.smoother == Smoother::jacobi) {
    Steps one = mg_chebyshev_steps(a, b, 1, in.diag);
    return Steps(std::size_t(o.smooth), one[0]);
  }
  return mg_chebyshev_steps(a, b, o.smooth, in.diag);
}

Steps coarse_steps(const Stencil& s, const Int3& n, const Decomposition& p, double bound,
                   double low) {
  // A = 0 (one point, every axis periodic, no shift: the singular case's coarsest level):
  // the correction of the constants, A's null space, is 0. Not so with a variable shift
  // (low > 0: A = V sigma there).
  if (!(low > 0) && !(spectrum(s, n, p)[1] > 0)) return Steps{{0.0, 0.0}};
  const Interval in = interval(s, n, p, bound);
  // With a variable shift and no Dirichlet face the constant stencil's low end is its
  // Laplacian's smallest nonzero eigenvalue (NaN on one periodic point), above the
  // near-constant mode's: the lower of it and `low`.
  const double a = low > 0 ? std::fmin(low, in.lo) : in.lo, b = in.hi;
  const double kappa = b / a;
  int m = 1;
  if (kappa > 1 + 1e-12) {
    const double per_step = std::acosh((kappa + 1) / (kappa - 1));
    m = std::clamp(int(std::ceil(std::acosh(1 / kCoarseReduction) / per_step)), 1, kCoarseMaxSteps);
  }
  return mg_chebyshev_steps(a, b, m, in.diag);
}

}  // namespace halo3d
