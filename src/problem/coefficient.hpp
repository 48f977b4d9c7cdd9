// --coefficient: the k of -div(k grad u), read or computed at this rank's points and at every
// ghost around its box (the neighbours' points, and on the domain's boundary the boundary
// layer), where the variable-coefficient operator's face weights are made from it
// (solver/coefficients.hpp).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "decomposition.hpp"
#include "problem_spec.hpp"

namespace halo3d {
class Kernels;
class LevelCoefficients;
}  // namespace halo3d

namespace halo3d {

// Parses the specs (--coefficient, and --shift's field) and compiles their formulas;
// BadInput (exit 2) for a malformed one.
void check_coefficient_option(const ProblemSpec& o);

// Collective: k over this rank's padded box, every ghost filled (the rows' x padding 0).
// Every value must be a finite number > 0: otherwise every rank throws the same BadInput,
// naming the first bad point; a file that cannot be read: IoError (exit 5) or BadInput.
std::vector<double> fill_coefficient(const ProblemSpec& o, const Decomposition& d, MPI_Comm comm);

// Collective: sigma (--shift's field, or its constant everywhere) the same way, every value
// a finite number >= 0 (else the same BadInput, naming --shift and the first bad point).
// Poisson with no Dirichlet face and a variable shift needs sigma > 0 at some point (A is
// singular otherwise): a field that is 0 at every point is refused the same way.
std::vector<double> fill_shift(const ProblemSpec& o, const Decomposition& d, MPI_Comm comm);

// Collective: the largest diagonal of -div(k grad) + shift over the grid (at a point: its
// six face weights plus the shift, summed as ops::point_diag sums them, divided by the
// point's control volume's fraction V_p where d has Neumann faces: the diagonal of M^{-1} A),
// the maximum over all ranks, so every rank has the same bits on any process grid. spacing:
// the constant stencil (1/h^2 per axis, the shift); kappa: fill_coefficient's; sigma:
// fill_shift's for a point shift (a variable one, or any shift with Neumann faces: each
// point's own, in place of spacing's), or null. Explicit heat (M u_t = -alpha A u) is stable
// for alpha dt times it <= 1.
// On the host, from k: --dry-run's (it makes no backend).
double max_diagonal(const Stencil& spacing, const Decomposition& d,
                    const std::vector<double>& kappa, const std::vector<double>* sigma,
                    MPI_Comm comm);
// The same bits from the fine level's weights, by the backend that holds them.
double max_diagonal(Kernels& k, const LevelCoefficients& c, MPI_Comm comm);

// Collective: a checksum of k (or sigma) at every point of the grid and of its boundary
// layer (the same on any process grid; io's field_checksum over the (N+2)^3 grid): a
// checkpoint's data identity, so that a restart whose file: coefficient changed is refused.
std::uint64_t coefficient_checksum(const Decomposition& d, const std::vector<double>& kappa,
                                   MPI_Comm comm);

}  // namespace halo3d
