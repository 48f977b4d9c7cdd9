// OpenMP threads per rank: without OMP_NUM_THREADS, each rank gets its share of the CPUs
// its host lets the ranks on it use; oversubscription is detected and warned about.
#pragma once
#include <mpi.h>

#include <string>

namespace halo3d {

struct ThreadSetup {
  int threads = 1;              // OpenMP threads of this rank
  bool from_env = false;        // OMP_NUM_THREADS was set (and is honoured as given)
  int host_cpus = 1;            // CPUs the ranks on this host may run on (union of their affinity)
  int ranks_on_host = 1;        // ranks sharing this rank's host
  bool oversubscribed = false;  // on some host, ranks x threads > CPUs
  std::string warning;          // the one line rank 0 prints when oversubscribed, else empty
};

// Collective over world; call before any OpenMP parallel region. Sets the thread count
// with omp_set_num_threads when OMP_NUM_THREADS is not set. Does not bind threads: the
// OpenMP runtime reads OMP_PROC_BIND / OMP_PLACES when the program is loaded, before main.
const ThreadSetup& configure_threads(MPI_Comm world);

// The setup configure_threads made (defaults before it ran).
const ThreadSetup& thread_setup();

}  // namespace halo3d
