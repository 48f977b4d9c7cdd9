#include "transports_info.hpp"

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#ifdef HALO3D_HAVE_NCCL
#include <nccl.h>
#endif

namespace halo3d {

std::string nccl_version_string() {
#ifdef HALO3D_HAVE_NCCL
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "compiled, version unknown";
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." +
         std::to_string(v % 100);
#else
  return "not compiled";
#endif
}

std::string cuda_aware_mpi_string() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() ? "yes"
                                   : "no (compiled with CUDA support, not enabled at run time)";
#elif defined(MPIX_CUDA_AWARE_SUPPORT)
  return "no (this MPI was built without CUDA support)";
#else
  return "unknown (this MPI has no MPIX_Query_cuda_support)";
#endif
}

bool cuda_aware_mpi_now() {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  // The macro says how the headers were built; the query asks the library loaded now.
  return MPIX_Query_cuda_support() == 1;
#elif defined(MPIX_GPU_SUPPORT_CUDA)
  int yes = 0;  // MPICH >= 4
  return MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &yes) == MPI_SUCCESS && yes == 1;
#else
  return false;
#endif
}

}  // namespace halo3d
