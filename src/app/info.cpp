#include <hdf5.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "app.hpp"
#include "build_info.hpp"
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

LibraryVersions library_versions() {
  LibraryVersions v;
  char mpi_version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(mpi_version, &len);
  v.mpi.assign(mpi_version, strnlen(mpi_version, std::size_t(len)));  // len may count the NUL
  if (auto nl = v.mpi.find('\n'); nl != std::string::npos) v.mpi.resize(nl);
  unsigned h5maj = 0, h5min = 0, h5rel = 0;
  H5get_libversion(&h5maj, &h5min, &h5rel);
  v.hdf5 = std::to_string(h5maj) + "." + std::to_string(h5min) + "." + std::to_string(h5rel);
  v.cuda_runtime = cuda_runtime_version();
  v.cuda_driver = cuda_driver_version();
  v.nccl = nccl_version_string();
  v.cuda_aware_mpi = cuda_aware_mpi_string();
  return v;
}

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

  const LibraryVersions lib = library_versions();
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  std::printf("halo3d %s\n", version_string().c_str());
  std::printf("MPI: %s\n", lib.mpi.c_str());
  std::printf("HDF5: %s (parallel)\n", lib.hdf5.c_str());
  std::printf("CUDA: %s\n", cuda_compiled() ? ("runtime " + lib.cuda_runtime + ", driver " +
                                               (lib.cuda_driver.empty() ? "none" : lib.cuda_driver))
                                                  .c_str()
                                            : "not compiled");
  std::printf("NCCL: %s\n", lib.nccl.c_str());
  std::printf("CUDA-aware MPI: %s\n", lib.cuda_aware_mpi.c_str());
  std::printf("backends: host (OpenMP, %d %s, -march %s)%s\n", threads,
              threads == 1 ? "thread" : "threads", host_march().c_str(),
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
