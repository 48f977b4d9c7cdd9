#include <hdf5.h>

#include <cstdio>
#include <string>
#include <vector>

#include "app.hpp"
#include "errors.hpp"
#include "kernels.hpp"
#include "mpi_env.hpp"
#include "runtime.hpp"
#include "threads.hpp"
#include "transports_info.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace halo3d {

int run_info(MPI_Comm world) {
  const int rank = comm_rank(world), size = comm_size(world);
  const HostMap hosts = HostMap::build(world);
  const auto gpus = cuda_devices();

  // One line per rank: host, node-local rank, and the GPU it would bind to.
  std::string line = "rank " + std::to_string(rank) + ": host " + hosts.rank_host[rank] +
                     " (host " + std::to_string(hosts.host_index) + ", local rank " +
                     std::to_string(hosts.local_rank) + " of " + std::to_string(hosts.local_size) +
                     ")";
  if (!gpus.empty()) {
    const GpuInfo& g = gpus[hosts.local_rank % gpus.size()];
    line += ", GPU " + std::to_string(g.ordinal) + " " + g.name + " [" + g.pci_bus_id + "] sm_" +
            std::to_string(g.cc_major) + std::to_string(g.cc_minor);
  } else {
    line += ", no GPU";
  }
  line.resize(256, '\0');
  std::vector<char> all(rank == 0 ? 256 * std::size_t(size) : 0);
  HALO3D_MPI_CHECK(MPI_Gather(line.data(), 256, MPI_CHAR, all.data(), 256, MPI_CHAR, 0, world));
  if (rank != 0) return kExitOk;

  char mpi_version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(mpi_version, &len);
  std::string mpi(mpi_version, len);
  if (auto nl = mpi.find('\n'); nl != std::string::npos) mpi.resize(nl);
  unsigned h5maj = 0, h5min = 0, h5rel = 0;
  H5get_libversion(&h5maj, &h5min, &h5rel);
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  std::printf("halo3d %s\n", version_string().c_str());
  std::printf("MPI: %s\n", mpi.c_str());
  std::printf("HDF5: %u.%u.%u (parallel)\n", h5maj, h5min, h5rel);
  std::printf("CUDA: %s\n", cuda_compiled()
                                ? ("runtime " + cuda_runtime_version() + ", driver " +
                                   (cuda_driver_version().empty() ? "none" : cuda_driver_version()))
                                      .c_str()
                                : "not compiled");
  std::printf("NCCL: %s\n", nccl_version_string().c_str());
  std::printf("CUDA-aware MPI: %s\n", cuda_aware_mpi_string().c_str());
  std::printf("backends: host (OpenMP, %d %s)%s\n", threads, threads == 1 ? "thread" : "threads",
              cuda_compiled()
                  ? (", cuda (" + std::to_string(gpus.size()) + " GPU(s) visible)").c_str()
                  : "");
  const ThreadSetup& th = thread_setup();
  std::printf("threads: %d per rank (%s; %d CPU(s) for %d rank(s) on rank 0's host)\n", th.threads,
              th.from_env ? "OMP_NUM_THREADS" : "auto: CPUs / ranks on the host", th.host_cpus,
              th.ranks_on_host);
  std::printf("ranks: %d on %zu host(s)\n", size, hosts.hosts.size());
  for (int r = 0; r < size; ++r) std::printf("  %s\n", &all[std::size_t(r) * 256]);
  return kExitOk;
}

}  // namespace halo3d
