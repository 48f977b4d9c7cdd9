// Fields a run starts from: the Poisson right-hand side or the heat initial state
// (--rhs / --initial: modes, random, file:PATH.h5:/DATASET, expr:FORMULA) and the Dirichlet
// boundary values (--boundary: VALUE, x0=..,x1=..,y0=.., expr:FORMULA, file:PATH.h5:/DATASET).
// Non-zero boundary values are lifted onto the points next to the boundary (B g: each such
// point gets w g of each boundary neighbour, w the boundary face's weight: c_d, or with a
// variable coefficient the face's own; on a Neumann face --boundary is the outward flux
// k du/dn, a source of area/h: docs/ARCHITECTURE.md, "Boundaries"): into the right-hand
// side at set-up for Poisson (b = f + B g), as a source term of every step for heat. The
// solvers and the multigrid preconditioner keep solving the homogeneous problem.
#pragma once
#include <mpi.h>

#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "decomposition.hpp"
#include "field_spec.hpp"
#include "kernels.hpp"
#include "problem_spec.hpp"

namespace halo3d {

class Problem;

// Whether the run has non-zero boundary values.
bool has_boundary_values(const ProblemSpec& o);

// Checks the specs (and compiles their formulas) when the options are read; BadInput.
void check_field_options(const ProblemSpec& o);

// Collective: fills the interior of `padded` with the right-hand side (Poisson, plus the
// boundary values lifted into it) or the initial state (heat; its boundary values are
// boundary_source's). File and formula errors, shape mismatches and NaN/Inf values throw
// the same error on every rank (BadInput, exit 2; a file that cannot be opened: IoError,
// exit 5).
// With a variable coefficient, kappa (k over the padded box) weights the boundary faces.
void fill_fields(const ProblemSpec& o, const Problem& p, const Decomposition& d, MPI_Comm comm,
                 std::vector<double>& padded, const std::vector<double>* kappa = nullptr);

// The same field in backend memory. A built-in source (modes, random) with nothing to add
// (heat, or Poisson without boundary values) is filled where the backend computes (no host
// pass, no upload); the others go through fill_fields and are copied over.
Buffer fill_fields(Kernels& k, const ProblemSpec& o, const Problem& p, const Decomposition& d,
                   MPI_Comm comm, const std::vector<double>* kappa = nullptr);

// Multiplies each point of the box by its control volume's fraction V_p (ops::neumann_volume:
// 1/2 per Neumann plane it lies in); nothing without Neumann faces (d.neumann = 0).
void scale_by_volume(const Decomposition& d, std::vector<double>& padded);

// Collective: adds B g (the --boundary values lifted, see above) to the interior of
// `padded`, point by point in a fixed order (x, y, z; low side first), so the sums do not
// depend on the ranks; nothing for zero boundary values. Errors as fill_fields.
void add_boundary_values(const ProblemSpec& o, const Problem& p, const Decomposition& d,
                         MPI_Comm comm, std::vector<double>& padded,
                         const std::vector<double>* kappa = nullptr);
// Collective: B g alone, a padded array (heat's source term); empty for zero boundary values.
// kappa as for add_boundary_values: each boundary face's own weight.
std::vector<double> boundary_source(const ProblemSpec& o, const Problem& p, const Decomposition& d,
                                    MPI_Comm comm, const std::vector<double>* kappa = nullptr);

// Collective: the checks of reading the file: fields (--rhs/--initial, --boundary) without
// reading them: the file, the dataset, its type and shape (--dry-run). Same errors as a run.
void check_file_fields(const ProblemSpec& o, const Decomposition& d, MPI_Comm comm);

// Where each field came from, for the JSON report.
nlohmann::json fields_json(const ProblemSpec& o);

}  // namespace halo3d
