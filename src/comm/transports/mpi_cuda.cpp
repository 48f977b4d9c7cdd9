// The mpi-cuda transport: the MPI transport of halo.cpp with its faces packed into device
// buffers and handed to a CUDA-aware MPI as device pointers (no staging by halo3d). Only
// built after all ranks' MPI said at run time that it takes device pointers: a device
// pointer never reaches an MPI that cannot.
#include "errors.hpp"
#include "transports/transports.hpp"

namespace halo3d {
std::unique_ptr<HaloTransport> make_mpi_cuda_transport_unchecked(Kernels& k, const HaloPlan& plan,
                                                                 MPI_Comm comm) {
  return make_mpi_transport(k, plan, comm, /*device_messages=*/true);
}

std::unique_ptr<HaloTransport> make_mpi_cuda_transport(const TransportContext& c) {
  if (c.k.device() < 0)  // no GPU behind these kernels
    throw Error(kExitUnavailable,
                "--halo mpi-cuda: needs --backend cuda (there is no device memory on the host "
                "backend); use --halo mpi");
  if (!all_cuda_aware_mpi(c.comm))
    throw Error(kExitUnavailable,
                "--halo mpi-cuda: this MPI is not CUDA-aware (MPIX_Query_cuda_support() is 0 on "
                "some rank, or the "
                "MPI has no such query), so it must not be given device pointers; use --halo mpi "
                "or --halo ipc");
  return make_mpi_cuda_transport_unchecked(c.k, c.plan, c.comm);
}

}  // namespace halo3d
