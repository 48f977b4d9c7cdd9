// Variable coefficients of the 7-point operator -div(k grad u) + shift u on one level (the
// fine operator's, or a multigrid level's): the point values of k and the face weights made
// from them.
//
// Discretisation: the flux through the face between neighbouring points p and q along axis
// a is w_f (u_p - u_q), w_f = kh(k_p, k_q) / h_a^2, kh the harmonic mean 2 k_p k_q /
// (k_p + k_q) (the conductance of two half-cells in series, so a jump in k between p and q
// is seen exactly). Points next to the boundary use the boundary layer's k for their
// boundary face. The weights are computed once, in double, by the backend where they are
// used (Kernels::face_weights; rounded once to float there for a float V-cycle), each face
// by ops::face_weight: host and CUDA runs use the same bits, and each face's weight depends
// only on k at its two points, so not on the ranks.
//
// Coarse levels (multigrid): the faces of each coarser level are the Galerkin product R A P
// of the level above's operator taken one axis at a time and lumped to 7 points
// (kernels/galerkin_ops.hpp says how, and why each face's bits do not depend on the ranks):
// where k jumps between two coarse planes, averaging k and rediscretising smeared the jump,
// and the counts grew with the grid (docs/PERFORMANCE.md, "Galerkin coarse faces"). Made in
// backend memory from the level above's weights; k itself is read on the fine level only.
//
// A variable shift (--shift expr:/file:): sigma at the points, a fourth padded array beside
// the weights (rounded once to float with them), each point's diagonal adding its own
// sigma_c (ops::point_diag). Coarse levels take sigma's restriction-weighted mean (a point
// value: no 1/h^2 to rescale; Multigrid::coarse_points).
#pragma once
#include <mpi.h>

#include <memory>
#include <vector>

#include "decomposition.hpp"
#include "kernels.hpp"
#include "point_ops.hpp"

namespace halo3d {

// The weight of the face between points with k_low (the lower along the axis) and k_high
// (ops::face_weight: the backends' set-up kernels and the host's boundary values alike).
inline double face_weight(double k_low, double k_high, double inv_h2) {
  return ops::face_weight(k_low, k_high, inv_h2);
}

class LevelCoefficients {
 public:
  // From k (and sigma) on the host: the fine level's, whose other users (boundary values,
  // checksums, implicit heat, the multigrid's first coarsening of sigma) read them there; kept.
  // kappa: k over the padded box of layout l, every ghost filled; spacing: the level's
  // constant stencil (its cx, cy, cz are 1/h^2 per axis; its shift is kept); sigma: a
  // variable shift over the same box (ghosts filled as k's), or empty (spacing's shift);
  // np: the Neumann planes the box meets (their factors on the weights, and sigma V_p as
  // each point's shift: sigma itself is the point value, unscaled, kept so).
  LevelCoefficients(Kernels& k, const Layout& l, const Stencil& spacing, std::vector<double> kappa,
                    std::vector<double> sigma = {}, const NeumannPlanes& np = {});
  // A coarse level's, in backend memory: its faces from the Galerkin parts (6 padded arrays
  // of l, Kernels::galerkin_parts, every ghost filled) and sigma (or null); not kept.
  static std::unique_ptr<LevelCoefficients> galerkin(Kernels& k, const Layout& l,
                                                     const Stencil& spacing, const double* parts,
                                                     const double* sigma, const NeumannPlanes& np);
  // D^{-1} (1 / ops::point_diag) at this level's points, 0 in the ghost layer, where
  // multigrid smooths it: its first step from zero scales by it, and the step after reads that
  // step's value at the neighbours without storing it (Kernels::smooth_from_start). Returns
  // the array, whose ghosts the caller exchanges before smoothing reads it and before
  // add_float rounds it. Once per level (a second call returns the same array).
  double* add_inverse_diagonal(Kernels& k);
  // Float copies of the weights and of the inverse diagonal (each value rounded once), for a
  // float V-cycle on this level.
  void add_float(Kernels& k);
  // `spacing` with its face weights pointing at this level's (vd, and vf once added).
  Stencil attach(const Stencil& spacing) const;
  // The three weight arrays in backend memory (padded arrays of the level's layout, one after
  // another): the next level's set-up fills their ghosts (Multigrid::coarse_parts).
  double* weights() { return wd_.data(); }
  // k and sigma on the host (the first constructor's; empty for a coarse level's).
  const std::vector<double>& kappa() const { return kappa_; }
  const std::vector<double>& sigma() const { return sigma_; }
  const std::vector<double>* sigma_or_null() const { return sigma_.empty() ? nullptr : &sigma_; }
  bool variable_shift() const { return with_sigma_; }
  // An upper bound of the spectrum of D^{-1}A on this rank's points (Gershgorin: 1 + the
  // largest ratio of a point's off-diagonal weights, neighbours that are unknowns only, to
  // its diagonal; at most 2), computed by the backend from the weights. d: this level's box
  // on its grid. The maximum of exact words: the same bits in any order, on any process grid.
  double local_spectrum_bound(Kernels& k, const Decomposition& d) const;
  // The largest diagonal of this level's operator on this rank's points, each divided by its
  // control volume's fraction V_p (the diagonal of M^{-1} A; as ::local_max_diagonal below,
  // by the backend from the weights).
  double local_max_diagonal(Kernels& k) const;

 private:
  LevelCoefficients(const Layout& l, const Stencil& spacing, const NeumannPlanes& np, bool sigma)
      : l_(l), spacing_(spacing), np_(np), with_sigma_(sigma) {}
  // The weights from k (face_weights) or from Galerkin parts, then sigma.
  void make_weights(Kernels& k, const double* kappa, const double* parts, const double* sigma);
  Layout l_;
  Stencil spacing_;
  NeumannPlanes np_;
  std::vector<double> kappa_, sigma_;
  bool with_sigma_ = false;
  Buffer wd_, id_;  // the weights (and sigma); the inverse diagonal
  FloatBuffer wf_, idf_;
};

// The largest diagonal of the operator on this rank's points (each point's six face weights
// and spacing's shift, or its own sigma, summed by ops::point_diag as the sweeps sum them),
// each divided by its control volume's fraction V_p under np (1 without Neumann planes: the
// diagonal of M^{-1} A, M = diag V_p, heat's mass), by the host backend's kernels: for
// --dry-run, which makes no backend. kappa: k over the padded box of l, every ghost filled;
// sigma: a point shift (unscaled, as LevelCoefficients takes it) or null. Explicit heat's
// stability limit (heat: 1/(alpha times the maximum over the ranks)).
double local_max_diagonal(const Layout& l, const Stencil& spacing, const std::vector<double>& kappa,
                          const std::vector<double>* sigma = nullptr, const NeumannPlanes& np = {});

// A point field (a variable shift's sigma: k's coarse levels take Galerkin faces instead) at
// the points of t.coarse (a coarse level's box, or the box of a rank's own coarse points)
// from its values at the points of t.fine (every ghost filled), in backend memory: at
// each coarse point the restriction's weights over the fine points it gathers, normalised to
// sum to 1 (Kernels::coarsen_mean). Returns a padded array of t.coarse, ghosts zero.
Buffer coarsen_points(Kernels& k, const Transfer& t, const double* fine);

// Sets the ghosts of such a point field (in backend memory) on the domain's boundary (faces,
// edges and corners) to the nearest point of the box: coarse levels have no boundary layer.
// Periodic axes have no boundary: their ghosts are left to the exchange
// (Multigrid::coarse_points).
void fill_boundary_ghosts(Kernels& k, const Decomposition& d, double* kappa);

}  // namespace halo3d
