// The mpi-cuda transport: faces packed into device buffers and handed to a CUDA-aware MPI
// as device pointers (no staging by halo3d). Only built after all ranks' MPI said at run
// time that it takes device pointers: a device pointer never reaches an MPI that cannot.
#include <vector>

#include "errors.hpp"
#include "nvtx.hpp"
#include "transports/transports.hpp"

namespace halo3d {
namespace {

class MpiCudaTransport final : public TypedTransport<MpiCudaTransport> {
 public:
  MpiCudaTransport(Kernels& k, const HaloPlan& plan, MPI_Comm comm)
      : k_(k), plan_(plan), comm_(comm) {
    for (const auto& f : plan_.faces) {
      send_.emplace_back(k_, f.points, Memory::device);
      recv_.emplace_back(k_, f.points, Memory::device);
    }
  }
  Transport kind() const override { return Transport::mpi_cuda; }
  std::string describe() const override {
    return "mpi-cuda: " + std::to_string(plan_.faces.size()) +
           " face(s), device buffers to a CUDA-aware MPI";
  }

 private:
  friend class TypedTransport<MpiCudaTransport>;
  template <class T>
  void start_t(const T* u) {
    HALO3D_NVTX_RANGE("mpi-cuda start");
    // The previous finish() may still be unpacking from the receive buffers.
    k_.synchronize(Lane::boundary);
    recvs_.clear();
    sends_.clear();
    post_face_recvs<T>(plan_, recv_, comm_, recvs_);
    k_.fence(Lane::interior, Lane::boundary);
    for (std::size_t i = 0; i < plan_.faces.size(); ++i)
      k_.pack(plan_.layout, plan_.faces[i].face, u, face_buffer<T>(send_[i]), Lane::boundary);
    // MPI reads the buffers from the host's point of view: the packs must be done.
    k_.synchronize(Lane::boundary);
    post_face_sends<T>(plan_, send_, comm_, sends_);
  }

  template <class T>
  void finish_t(T* u) {
    HALO3D_NVTX_RANGE("mpi-cuda finish");
    wait_all(recvs_);
    for (std::size_t i = 0; i < plan_.faces.size(); ++i)
      k_.unpack(plan_.layout, plan_.faces[i].face, face_buffer<T>(recv_[i]), u, Lane::boundary);
    wait_all(sends_);
  }

 private:
  Kernels& k_;
  HaloPlan plan_;
  MPI_Comm comm_;
  std::vector<Buffer> send_, recv_;
  std::vector<Request> recvs_, sends_;  // pending ones released by ~Request
};

}  // namespace

std::unique_ptr<HaloTransport> make_mpi_cuda_transport_unchecked(Kernels& k, const HaloPlan& plan,
                                                                 MPI_Comm comm) {
  return std::make_unique<MpiCudaTransport>(k, plan, comm);
}

std::unique_ptr<HaloTransport> make_mpi_cuda_transport(const TransportContext& c) {
  if (c.k.name() != "cuda")
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
