// The numerical problem: right-hand sides, initial data and exact answers.
#pragma once
#include <array>
#include <cmath>
#include <vector>

#include "decomposition.hpp"
#include "kernels.hpp"
#include "problem_spec.hpp"

namespace halo3d {

// The fields a built-in problem defines: its source (Poisson right-hand side or heat initial
// state) and its exact discrete and continuous answers.
enum class ModeField { source, exact_discrete, exact_continuous };

// The 7-point operator -lap_h + shift on a grid of spacing h (one piece of code for the
// problem's stencil and the multigrid plan's).
Stencil operator_stencil(const std::array<double, 3>& h, double shift);
// The spacing of the spec's grid on its box.
std::array<double, 3> spacing(const ProblemSpec& p);

class Problem {
 public:
  // Throws BadInput when an explicit heat problem's --dt is above the stability limit
  // 1/(alpha diag). With a variable coefficient diag is max_diag, the operator's largest
  // diagonal over the grid (coefficient.hpp's max_diagonal, which needs k); without it
  // (0) heat's step is not set yet: dt() is NaN and nothing about it is checked.
  explicit Problem(const ProblemSpec& o, double max_diag = 0);

  // LX/(NX+1), LX/NX if periodic, LX/(NX-1) between Neumann faces (intervals()).
  const std::array<double, 3>& h() const { return h_; }
  // The first point's coordinates: h behind a Dirichlet low face, 0 on a periodic axis
  // (x_i = i L/N) or behind a Neumann low face (the boundary node).
  std::array<double, 3> origin() const {
    return {first_[0] * h_[0], first_[1] * h_[1], first_[2] * h_[2]};
  }
  Stencil stencil() const { return operator_stencil(h_, shift_); }
  // Exact answers: manufactured modes with zero boundary values (and zero fluxes).
  // (Not with a variable coefficient: the modes are the constant operator's eigenvectors.)
  bool has_exact() const { return source_ == FieldSpec::kModes && !boundary_values_ && !variable_; }

  // Eigenvalue of A = -lap_h + shift for mode k: sum_d (4/h_d^2) sin^2(w_d pi / (2 m_d))
  // + shift, m_d the intervals and w_d the mode's frequency (wave_number): K_d between two
  // Dirichlet or two Neumann faces, 2 K_d periodic, K_d - 1/2 between a Neumann and a
  // Dirichlet face. With Neumann faces A u = V lambda u (V the control volumes), and the
  // right-hand side is V f: the same exact answer.
  double lambda(const Int3& k) const;
  // Heat: the time step used (--dt, or 0.9 of the limit when --dt is 0); 0 for Poisson.
  double dt() const { return dt_; }

  // Fills the interior of `out` (backend memory, this rank's box) with field f, from global
  // indices (independent of the decomposition): the source of --rhs/--initial modes|random
  // or an exact answer (modes). fields.hpp's fill_fields handles files, formulas and
  // boundaries.
  void fill(Kernels& k, const Decomposition& d, ModeField f, double* out) const;
  // The source into a padded host array (the host backend's fill).
  void fill_source(const Decomposition& d, std::vector<double>& padded) const;
  // Exact discrete solution (Poisson; heat after `steps` steps with c = alpha dt) and the
  // continuous one (heat at time t = steps*dt), at global point (gi,gj,gk).
  double exact_discrete(int gi, int gj, int gk) const;
  double exact_continuous(int gi, int gj, int gk) const;

  // Discrete L2 (sqrt(h^3 sum e^2)) and max norms of u's error against the exact discrete
  // and continuous answers, over all ranks (has_exact() only). Computed where u lives.
  struct Errors {
    double l2 = NAN, max = NAN;            // against the exact discrete solution
    double l2_cont = NAN, max_cont = NAN;  // against the continuous solution
  };
  // scratch: a vector of u's layout to write (the method's spare()).
  Errors errors(Kernels& k, const Decomposition& d, const double* u, double* scratch,
                MPI_Comm comm) const;

 private:
  // The mode's value at global point g of the axis: sin(w pi x/L), or cos(w pi x/L) behind a
  // Neumann low face (x = (g + first) h; w: wave_number).
  double axis_value(int kd, int g, int axis) const;
  double wave_number(int kd, int axis) const;
  double mode_value(const Int3& k, int gi, int gj, int gk) const;
  double coefficient(const Int3& m, ModeField f) const;
  double step_factor(const Int3& k) const;
  void set_time_step(const ProblemSpec& o, double diag);  // heat: dt_ and its checks
  ProblemKind problem_;
  FieldSpec::Kind source_;
  std::vector<Int3> modes_;
  std::uint64_t seed_;
  Int3 grid_;
  std::array<double, 3> h_;     // spacing: box / (N+1), periodic box / N
  std::array<double, 3> unit_;  // 1 / the intervals: x / L = (g + first) unit at point g
  std::array<int, 3> first_{};  // each axis's ops::axis_first
  std::array<double, 3> box_;
  double shift_ = 0;
  long steps_ = 0;
  double alpha_ = 0, dt_ = 0, theta_ = 0;
  bool boundary_values_ = false;  // --boundary other than 0
  bool variable_ = false;         // --coefficient other than 1, or a variable --shift
  FaceKinds bc_{};  // periodic axes: N intervals, modes sin(2 pi k x/L); Neumann: see lambda
};

// Reproducible value in [-1, 1) for global point index `index` (splitmix64).
double random_value(std::uint64_t seed, std::uint64_t index);

// This rank's box of the random field `seed` (random_value of each point's global index,
// x fastest, so the same values whatever the decomposition) in a padded host array whose
// ghosts hold `ghost`: data for benchmarks and tests, where zeros would hide errors.
std::vector<double> random_box(const Decomposition& d, std::uint64_t seed, double ghost = 0.0);

}  // namespace halo3d
