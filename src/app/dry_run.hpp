// halo3d solve --dry-run: what a run would do, without allocating the fields or solving.
#pragma once
#include <mpi.h>

#include "options.hpp"
#include "runtime.hpp"

namespace halo3d {

// What run_solve allocates beyond the runtime on this rank (defined in plan.cpp), its
// kernels on a GPU or not. Collective over cart when `o` asks for a multigrid
// preconditioner.
MemoryNeed solve_memory(const SolveOptions& o, const Decomposition& d, MPI_Comm cart, bool gpu);
// Whether the kernels of a run with `backend` would run on GPUs, decided as the runtime
// decides (picks_cuda: auto on GPUs when every rank sees one), for --dry-run, which makes no
// runtime. Collective over comm for auto.
bool runs_on_gpu(Backend backend, MPI_Comm comm);

// Prints (rank 0) the effective configuration with each value's source, the decomposition,
// the multigrid hierarchy, the memory each rank needs and the files a run would write.
// Checks the options and the files as a run does (same errors, same exit codes); returns
// kExitOk. Collective over world.
int run_dry_run(const SolveOptions& o, MPI_Comm world);

}  // namespace halo3d
