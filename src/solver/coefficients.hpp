// Variable coefficients of the 7-point operator -div(k grad u) + shift u on one level (the
// fine operator's, or a multigrid level's): the point values of k and the face weights made
// from them.
//
// Discretisation: the flux through the face between neighbouring points p and q along axis
// a is w_f (u_p - u_q), w_f = kh(k_p, k_q) / h_a^2, kh the harmonic mean 2 k_p k_q /
// (k_p + k_q) (the conductance of two half-cells in series, so a jump in k between p and q
// is seen exactly). Points next to the boundary use the boundary layer's k for their
// boundary face. The weights are computed once on the host, in double, and copied to the
// backend (and rounded once to float for a float V-cycle): host and CUDA runs use the same
// bits, and each face's weight depends only on k at its two points, so not on the ranks.
//
// Coarse levels (multigrid): k at a coarse point is the mean of the fine values the
// restriction gathers there, weighted by the restriction's weights (normalised); the coarse
// operator is the same discretisation of that k on the coarse grid (rediscretisation), and
// its boundary faces take the nearest interior value (coarse levels have no boundary layer
// of their own). docs/ALGORITHMS.md says why this averaging.
//
// A variable shift (--shift expr:/file:): sigma at the points, a fourth padded array beside
// the weights (rounded once to float with them), each point's diagonal adding its own
// sigma_c (ops::point_diag). Coarse levels take sigma's restriction-weighted mean, as k's
// (sigma is a point value: no 1/h^2 to rescale).
#pragma once
#include <mpi.h>

#include <vector>

#include "decomposition.hpp"
#include "kernels.hpp"

namespace halo3d {

// The weight of the face between points with k_low (the lower along the axis) and k_high:
// their harmonic mean times inv_h2 (1/h^2 of the axis), written so that equal values give
// exactly that value and no product overflows.
inline double face_weight(double k_low, double k_high, double inv_h2) {
  return 2.0 * k_low * (k_high / (k_low + k_high)) * inv_h2;
}

class LevelCoefficients {
 public:
  // kappa: k over the padded box of layout l, every ghost filled; spacing: the level's
  // constant stencil (its cx, cy, cz are 1/h^2 per axis; its shift is kept); sigma: a
  // variable shift over the same box (ghosts filled as k's), or empty (spacing's shift).
  LevelCoefficients(Kernels& k, const Layout& l, const Stencil& spacing, std::vector<double> kappa,
                    std::vector<double> sigma = {});
  // Float copies of the weights (each rounded once), for a float V-cycle on this level.
  void add_float(Kernels& k);
  // `spacing` with its face weights pointing at this level's (vd, and vf once added).
  Stencil attach(const Stencil& spacing) const;
  const std::vector<double>& kappa() const { return kappa_; }
  // sigma at the points (empty: a constant shift).
  const std::vector<double>& sigma() const { return sigma_; }
  const std::vector<double>* sigma_or_null() const { return sigma_.empty() ? nullptr : &sigma_; }
  // An upper bound of the spectrum of D^{-1}A on this rank's points (Gershgorin: 1 + the
  // largest ratio of a point's off-diagonal weights, neighbours that are unknowns only, to
  // its diagonal; at most 2). d: this level's box on its grid.
  double local_spectrum_bound(const Decomposition& d) const;
  // Backend bytes of one level's weights: three padded arrays in double (and in float), and
  // sigma's fourth with a variable shift.
  static double device_bytes(const Layout& l, bool with_float, bool with_sigma = false);

 private:
  Layout l_;
  Stencil spacing_;
  std::vector<double> kappa_, sigma_;
  Buffer wd_;
  FloatBuffer wf_;
};

// The largest diagonal of the operator on this rank's points (each point's six face weights
// and spacing's shift, or its own sigma, summed by ops::point_diag as the sweeps sum them).
// kappa: k over the padded box of l, every ghost filled; sigma: a variable shift or null.
// Explicit heat's stability limit (heat: 1/(alpha times the maximum over the ranks)).
double local_max_diagonal(const Layout& l, const Stencil& spacing, const std::vector<double>& kappa,
                          const std::vector<double>* sigma = nullptr);

// k (or sigma) at the points of t.coarse (a coarse level's box, or the box of a rank's own coarse
// points) from k at the points of t.fine (every ghost filled): at each coarse point the
// restriction's weights over the fine points it gathers, normalised to sum to 1. Host only
// (t's integer fields; its backend tables are not read).
std::vector<double> coarsen_kappa(const Transfer& t, const std::vector<double>& fine);

// Sets the ghosts of k (or sigma) on the domain's boundary (faces, edges and corners) to the
// nearest point of the box: coarse levels have no boundary layer of their own. Periodic axes
// have no boundary: their ghosts are left to the exchange (Multigrid::fill_kappa_ghosts).
void fill_boundary_ghosts(const Decomposition& d, std::vector<double>& kappa);

}  // namespace halo3d
