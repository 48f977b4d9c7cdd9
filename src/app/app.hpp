// The subcommands. Each returns the process exit code (see errors.hpp).
#pragma once
#include <mpi.h>

#include <string>

#include "options.hpp"

namespace halo3d {

// The libraries this process runs with, as `info` prints them and reports record them
// (cuda_* and nccl "" or a reason where not compiled or absent).
struct LibraryVersions {
  std::string mpi, hdf5, cuda_runtime, cuda_driver, nccl, cuda_aware_mpi;
};
LibraryVersions library_versions();

int run_solve(const SolveOptions& o, MPI_Comm world);
int run_info(MPI_Comm world);
int run_bench(const BenchOptions& o, MPI_Comm world);
// bench --io (bench_io.cpp): HDF5 output write against a raw write of the same bytes.
int run_bench_io(const BenchOptions& o, MPI_Comm world);
int run_probe(const ProbeOptions& o, MPI_Comm world);
// probe --model (probe_model.cpp): the scaling model, nothing measured.
int run_probe_model(const ProbeOptions& o, MPI_Comm world);

}  // namespace halo3d
