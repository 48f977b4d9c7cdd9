// --coefficient: the k of -div(k grad u), read or computed at this rank's points and at every
// ghost around its box (the neighbours' points, and on the domain's boundary the boundary
// layer), where the variable-coefficient operator's face weights are made from it
// (solver/coefficients.hpp).
#pragma once
#include <mpi.h>

#include <vector>

#include "decomposition.hpp"
#include "problem_spec.hpp"

namespace halo3d {

// Parses the spec and compiles its formula; BadInput (exit 2) for a malformed one.
void check_coefficient_option(const ProblemSpec& o);

// Collective: k over this rank's padded box, every ghost filled (the rows' x padding 0).
// Every value must be a finite number > 0: otherwise every rank throws the same BadInput,
// naming the first bad point; a file that cannot be read: IoError (exit 5) or BadInput.
std::vector<double> fill_coefficient(const ProblemSpec& o, const Decomposition& d, MPI_Comm comm);

}  // namespace halo3d
