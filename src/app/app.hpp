// The subcommands. Each returns the process exit code (see errors.hpp).
#pragma once
#include <mpi.h>

#include "options.hpp"

namespace halo3d {

int run_solve(const SolveOptions& o, MPI_Comm world);
int run_info(MPI_Comm world);
int run_bench(const BenchOptions& o, MPI_Comm world);
int run_probe(const ProbeOptions& o, MPI_Comm world);

}  // namespace halo3d
