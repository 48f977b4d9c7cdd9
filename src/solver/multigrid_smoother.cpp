// The multigrid's smoothing steps and its coarsest solve: Chebyshev polynomials in D^{-1}A
// over bounds of its spectrum (exact for constant coefficients, the operator's Gershgorin
// bound for variable ones), shared by the set-up of every level (multigrid.cpp); the low end
// of a nonsingular level without Dirichlet faces; and the inverse a small coarsest level is
// solved with.
#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "errors.hpp"
#include "host_copy.hpp"
#include "multigrid_level.hpp"
#include "point_ops.hpp"
#include "solvers.hpp"

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

// The operator of the coarsest level as a dense matrix (row-major, interior points x
// fastest), from each point's faces (ops::point_faces: the sweeps' own weights and diagonal)
// or the constant stencil's. A neighbour beyond the box is a periodic axis's wrapped point;
// beyond a bounded face the cycle's ghosts are zero, so it adds nothing.
std::vector<double> mg_dense_operator(const Layout& l, const Stencil& s, const Periodic& p) {
  const int n = int(l.interior_size()), N[3] = {l.nx, l.ny, l.nz};
  std::vector<double> a(std::size_t(n) * n, 0.0);
  for (int i = 0; i < n; ++i) {
    const int q[3] = {i % l.nx, i / l.nx % l.ny, i / l.nx / l.ny};
    ops::PointFaces<double> f{};
    if (s.variable()) {
      f = ops::point_faces(s.vd, l.at(q[0], q[1], q[2]), l.sy(), l.sz(), s.shift);
    } else {
      const double c[3] = {s.cx, s.cy, s.cz};
      for (int ax = 0; ax < 3; ++ax) f.w[ax][0] = f.w[ax][1] = c[ax];
      f.diag = s.diag;
    }
    a[std::size_t(i) * n + i] += f.diag;
    for (int ax = 0; ax < 3; ++ax)
      for (int side = 0; side < 2; ++side) {
        int r[3] = {q[0], q[1], q[2]};
        r[ax] += side ? 1 : -1;
        if (r[ax] < 0 || r[ax] >= N[ax]) {
          if (!p[ax]) continue;
          r[ax] = (r[ax] + N[ax]) % N[ax];
        }
        a[std::size_t(i) * n + r[0] + std::size_t(l.nx) * (r[1] + std::size_t(l.ny) * r[2])] -=
            f.w[ax][side];
      }
  }
  return a;
}

// Cholesky factor and inverse, column by column, in a fixed order of plain double operations:
// every rank and backend computes the same bits from the same operator. Singular (its null
// space the constants): the inverse of A + alpha 1 1^T, alpha n the mean diagonal, which
// solves A x = b for b orthogonal to the constants and is symmetric positive definite.
std::vector<double> mg_dense_inverse(std::vector<double> a, int n, bool singular) {
  if (singular) {
    double trace = 0;
    for (int i = 0; i < n; ++i) trace += a[std::size_t(i) * n + i];
    const double alpha = trace > 0 ? trace / (double(n) * n) : 1.0;
    for (double& v : a) v += alpha;
  }
  for (int j = 0; j < n; ++j) {  // a's lower triangle becomes L, a = L L^T
    double* row_j = a.data() + std::size_t(j) * n;
    double d = row_j[j];
    for (int k = 0; k < j; ++k) d -= row_j[k] * row_j[k];
    if (!(d > 0))
      throw std::logic_error("multigrid: the coarsest level's operator is not positive definite");
    d = std::sqrt(d);
    row_j[j] = d;
    for (int i = j + 1; i < n; ++i) {
      double* row_i = a.data() + std::size_t(i) * n;
      double v = row_i[j];
      for (int k = 0; k < j; ++k) v -= row_i[k] * row_j[k];
      row_i[j] = v / d;
    }
  }
  std::vector<double> inv(std::size_t(n) * n), y(n);
  for (int c = 0; c < n; ++c) {  // column c of the inverse: L y = e_c, then L^T x = y
    for (int i = 0; i < n; ++i) {
      double v = i == c ? 1.0 : 0.0;
      for (int k = 0; k < i; ++k) v -= a[std::size_t(i) * n + k] * y[k];
      y[i] = v / a[std::size_t(i) * n + i];
    }
    double* x = inv.data() + std::size_t(c) * n;
    for (int i = n; i-- > 0;) {
      double v = y[i];
      for (int k = i + 1; k < n; ++k) v -= a[std::size_t(k) * n + i] * x[k];
      x[i] = v / a[std::size_t(i) * n + i];
    }
  }
  return inv;
}

namespace {

// Whether some axis has a Dirichlet face (neither periodic nor Neumann at both ends): where
// none has and there is no shift, A 1 = 0.
bool has_dirichlet_face(const Decomposition& d) {
  for (int a = 0; a < 3; ++a)
    if (!d.periodic[a] && !(d.neumann_face(a, 0) && d.neumann_face(a, 1))) return true;
  return false;
}

}  // namespace

// The coarsest level's inverse (mg_dense_inverse) in the cycle's precision, from its operator
// as the sweeps see it: a variable one's weights (and sigma) are brought to the host first.
// Singular where A 1 = 0: no Dirichlet face and no shift, constant or variable.
void Multigrid::make_dense(Level& L) {
  L.dense = mg_dense_level(levels_.size() - 1, levels_.size(), L.grid);
  if (!L.dense) return;
  Kernels& k = *rt_.kernels;
  const Layout l = L.decomp.layout();
  Stencil s = L.A->stencil();
  std::vector<double> host[4];
  if (s.variable()) {
    for (int a = 0; a < 3; ++a) {
      download_to(k, s.vd.w[a], l.padded_size(), host[a]);
      s.vd.w[a] = host[a].data();
    }
    if (s.vd.sigma) {
      download_to(k, s.vd.sigma, l.padded_size(), host[3]);
      s.vd.sigma = host[3].data();
    }
  }
  const bool singular = s.shift == 0 && !s.vd.sigma && !has_dirichlet_face(L.decomp);
  const std::vector<double> inv = mg_dense_inverse(mg_dense_operator(l, s, L.decomp.periodic),
                                                   int(l.interior_size()), singular);
  if (mixed_)
    L.dense_f = upload(k, std::vector<float>(inv.begin(), inv.end()));  // each rounded once
  else
    L.dense_d = upload(k, inv);
}

// No Dirichlet face, no constant shift and a variable one (A = L + V sigma, L 1 = 0,
// nonsingular): a low end for the coarsest solve's D^{-1}A, whose smallest eigenvalue is
// near the constants' Rayleigh quotient sum(sigma_p V_p) / sum(d_p), not L's smallest
// nonzero one. Taken as sum(sigma_p V_p) / (max_p (d_p/V_p) sum(V_p)), which is at most that
// quotient (sum d_p <= max(d/V) sum V); sum V_p = the product over the axes of n less 1/2
// per Neumann face. The sum is global_dot's (double-double: the same bits on every process
// grid and backend), the maximum an exact word's. 0 (not this case) otherwise.
double Multigrid::shifted_low(const Level& L, const LevelCoefficients& c) {
  const Decomposition& d = L.decomp;
  const Stencil& s = L.A->stencil();
  if (has_dirichlet_face(d) || !c.variable_shift() || s.shift != 0) return 0.0;
  Kernels& k = *rt_.kernels;
  MPI_Comm comm = L.distributed ? rt_.cart.get() : MPI_COMM_SELF;
  const Layout l = d.layout();
  const Buffer ones = ones_like(k, l.padded_size());
  const double sum_sv = global_dot(k, l, ones.data(), s.vd.sigma, comm);
  double dmax = c.local_max_diagonal(k);
  HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &dmax, 1, MPI_DOUBLE, MPI_MAX, comm));
  double volume = 1;
  for (int a = 0; a < 3; ++a)
    volume *= L.grid[a] - 0.5 * (d.neumann_face(a, 0) + d.neumann_face(a, 1));
  return sum_sv / (dmax * volume);
}

}  // namespace halo3d
