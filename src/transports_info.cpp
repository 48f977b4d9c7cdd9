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
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
#else
  return "not compiled";
#endif
}

std::string cuda_aware_mpi_string() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() ? "yes" : "no (compiled with CUDA support, not enabled at run time)";
#elif defined(MPIX_CUDA_AWARE_SUPPORT)
  return "no (this MPI was built without CUDA support)";
#else
  return "unknown (this MPI has no MPIX_Query_cuda_support)";
#endif
}

}  // namespace halo3d
