// The run's plan, made once from the options at the app boundary: every rule that decides
// which method runs, whether a multigrid hierarchy is built, whether heat steps are
// implicit, and which files a run touches lives here. The library below src/app never sees
// SolveOptions: it takes the pieces (ProblemSpec, MethodPlan, MgOptions, ParallelOptions).
#pragma once
#include <string>
#include <vector>

#include "files.hpp"
#include "method_plan.hpp"
#include "options.hpp"

namespace halo3d {

struct RunPlan {
  ProblemSpec problem;
  ParallelOptions parallel;
  MethodPlan method;
  bool heat = false;
  // The solver's name: --solver for Poisson, the time scheme ("euler" for explicit) for heat.
  std::string solver;
  // The solver as a checkpoint records it (solver_identity).
  std::string identity;
  // "mixed" only where a multigrid V-cycle runs in float, else "double".
  std::string precision;
  // The driver's limits: Poisson's --max-iters and --tol; heat's --steps (tol 0).
  long max_iters = 0;
  double tol = 0;
};

RunPlan make_plan(const SolveOptions& o);

// The multigrid options of the command line (--mg-*, --precision).
MgOptions mg_options(const SolveOptions& o);
// Which method runs and whether it builds a hierarchy: the one place these rules live.
MethodPlan method_plan(const SolveOptions& o);
// The solver as a checkpoint records it (the preconditioner and, for implicit heat, the
// inner solve's tolerance shape the iterates): a restart must match it.
std::string solver_identity(const SolveOptions& o);

// The files `halo3d solve` with these options writes: --output and its XDMF sidecar (unless
// 'none'), --report, --checkpoint.
std::vector<PlannedFile> planned_files(const SolveOptions& o);
// The files `halo3d solve` with these options reads: --config, the file: of --rhs/--initial
// and of --boundary, --restart.
std::vector<PlannedFile> planned_inputs(const SolveOptions& o);

// Collective, before solving: rank 0 adds up what the planned files will take at least
// (--output's fields, --checkpoint's solution, HDF5 metadata; per file system) and compares
// it with statvfs's free space; every rank throws the same IoError (exit 5) when short.
void check_free_space(const SolveOptions& o, MPI_Comm comm);

}  // namespace halo3d
