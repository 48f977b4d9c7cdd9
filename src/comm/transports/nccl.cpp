// The nccl transport: one NCCL communicator over the Cartesian communicator's ranks
// (ncclUniqueId broadcast over MPI), faces packed on the boundary stream and sent with
// grouped ncclSend/ncclRecv on that same stream; nothing waits on the host.
//
// Only the halo goes over NCCL. CG's dot products stay on halo3d's double-double MPI
// reduction (reduction.cpp): ncclAllReduce sums in an order that depends on the ring or
// tree NCCL picks for the rank count and topology, in plain double, so the scalars (and
// hence iterates and iteration counts) would change with the decomposition, breaking the
// README's promise of decomposition-independent sums. The reductions are two scalars per
// iteration; they are latency-, not bandwidth-bound, and NCCL would not make them cheaper.
#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "errors.hpp"
#include "nvtx.hpp"
#include "transports/transports.hpp"

#ifdef HALO3D_HAVE_NCCL
#include <cuda_runtime_api.h>
#include <nccl.h>

#include "cuda/cuda_check.hpp"
#include "transports/nccl_check.hpp"
#endif

namespace halo3d {

bool nccl_compiled() {
#ifdef HALO3D_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

#ifdef HALO3D_HAVE_NCCL
namespace {

class NcclTransport final : public TypedTransport<NcclTransport> {
 public:
  NcclTransport(Kernels& k, const HaloPlan& plan, MPI_Comm comm)
      : k_(k), plan_(plan), wraps_(k, plan) {
    stream_ = static_cast<cudaStream_t>(k_.native_stream(Lane::boundary));
    const int rank = comm_rank(comm), size = comm_size(comm);
    ncclUniqueId id{};
    if (rank == 0) HALO3D_NCCL_CHECK(ncclGetUniqueId(&id));
    HALO3D_MPI_CHECK(MPI_Bcast(&id, int(sizeof id), MPI_BYTE, 0, comm));
    HALO3D_CUDA_CHECK(cudaSetDevice(k_.device()));
    HALO3D_NCCL_CHECK(ncclCommInitRank(&comm_, size, id, rank));
    for (const auto& f : plan_.faces) {
      send_.emplace_back(k_, f.points, Memory::device);
      recv_.emplace_back(k_, f.points, Memory::device);
    }
    // The one round's sub-boxes (plan_.around, in direction order) and one buffer each way.
    for (const auto& b : plan_.around) {
      send_boxes_.add(b.send);
      recv_boxes_.add(b.recv);
    }
    if (const auto n = std::size_t(send_boxes_.points())) {
      all_send_ = Buffer(k_, n, Memory::device);
      all_recv_ = Buffer(k_, n, Memory::device);
    }
    // Faces in (axis, side) order, the high side of an axis received before its low side.
    for (std::size_t i = 0; i < plan_.faces.size(); ++i) receive_order_.push_back(i);
    std::stable_sort(receive_order_.begin(), receive_order_.end(),
                     [&](std::size_t a, std::size_t b) {
                       const Face fa = plan_.faces[a].face, fb = plan_.faces[b].face;
                       return fa.axis != fb.axis ? fa.axis < fb.axis : fa.side > fb.side;
                     });
  }
  ~NcclTransport() override {
    if (!comm_) return;
    if (clean_) {
      HALO3D_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(stream_));
      ncclCommDestroy(comm_);
    } else {
      ncclCommAbort(comm_);  // an error mid-exchange: the peers may never arrive
    }
  }
  Transport kind() const override { return Transport::nccl; }
  std::string describe() const override {
    return "nccl: " + std::to_string(plan_.faces.size()) + " face(s), " +
           std::to_string(plan_.around.size()) +
           " neighbour(s) for the one-round ghost exchange, grouped ncclSend/ncclRecv on the "
           "boundary stream";
  }
  bool fills_corners_in_one_round() const override { return true; }
  void start_all_ghosts(const double* u) override { start_all_ghosts_t(u); }
  void start_all_ghosts(const float* u) override { start_all_ghosts_t(u); }

 private:
  friend class TypedTransport<NcclTransport>;
  template <class T>
  static ncclDataType_t nccl_type() {
    return sizeof(T) == sizeof(double) ? ncclDouble : ncclFloat;
  }

  template <class T>
  void start_t(const T* u, AxisMask axes) {
    clean_ = false;
    axes_ = axes;
    HALO3D_NVTX_RANGE("nccl start");
    k_.fence(Lane::interior, Lane::boundary);
    for (std::size_t i = 0; i < plan_.faces.size(); ++i)
      if (in_axes(axes, plan_.faces[i]))
        k_.pack(plan_.layout, plan_.faces[i].face, u, face_buffer<T>(send_[i]), Lane::boundary);
    if (plan_.faces.empty()) return;
    // Stream order protects the buffers: the next pack comes after these sends, the
    // unpack after these receives, and the next receives after that unpack.
    // NCCL matches the sends and receives between two ranks in the order they are posted,
    // with no tags. A periodic axis with two ranks along it has one neighbour on both sides:
    // its send through face (a, s) lands in our ghost (a, 1 - s), so the receives go in the
    // order of the sender's faces, (a, 1) before (a, 0). Different neighbours do not mind.
    HALO3D_NCCL_CHECK(ncclGroupStart());
    for (std::size_t i = 0; i < plan_.faces.size(); ++i) {
      const auto& f = plan_.faces[i];
      if (!in_axes(axes, f)) continue;
      HALO3D_NCCL_CHECK(
          ncclSend(face_buffer<T>(send_[i]), f.points, nccl_type<T>(), f.neighbor, comm_, stream_));
    }
    for (std::size_t i = 0; i < plan_.faces.size(); ++i) {
      const std::size_t r = receive_order_[i];
      const auto& f = plan_.faces[r];
      if (!in_axes(axes, f)) continue;
      HALO3D_NCCL_CHECK(
          ncclRecv(face_buffer<T>(recv_[r]), f.points, nccl_type<T>(), f.neighbor, comm_, stream_));
    }
    HALO3D_NCCL_CHECK(ncclGroupEnd());
  }

  // As start_t, for every neighbour of plan_.around at once (DistributedOperator::exchange's
  // one round): one pack_boxes, a slice of the buffer to each neighbour. Between two ranks
  // NCCL pairs sends and receives in the order they are posted: the neighbour sends its
  // boxes in its direction order, and its box for direction d' lands in our ghost box of
  // direction 26 - d', so the receives go in decreasing direction (the faces' rule above,
  // for every direction: a periodic axis with two ranks along it makes one rank the
  // neighbour in several).
  template <class T>
  void start_all_ghosts_t(const T* u) {
    clean_ = false;
    all_ghosts_ = true;
    HALO3D_NVTX_RANGE("nccl start, every ghost");
    k_.fence(Lane::interior, Lane::boundary);  // for the pack, and for finish's local copies
    if (plan_.around.empty()) return;
    k_.pack_boxes(plan_.layout, send_boxes_, u, face_buffer<T>(all_send_), Lane::boundary);
    HALO3D_NCCL_CHECK(ncclGroupStart());
    const std::vector<HaloBox>& boxes = plan_.around;
    for (std::size_t i = 0; i < boxes.size(); ++i)
      HALO3D_NCCL_CHECK(ncclSend(face_buffer<T>(all_send_) + send_boxes_.start[i], boxes[i].points,
                                 nccl_type<T>(), boxes[i].neighbor, comm_, stream_));
    for (std::size_t i = boxes.size(); i-- > 0;)
      HALO3D_NCCL_CHECK(ncclRecv(face_buffer<T>(all_recv_) + recv_boxes_.start[i], boxes[i].points,
                                 nccl_type<T>(), boxes[i].neighbor, comm_, stream_));
    HALO3D_NCCL_CHECK(ncclGroupEnd());
  }

  template <class T>
  void finish_t(T* u) {
    HALO3D_NVTX_RANGE("nccl finish");
    // The local copies first, as the mpi transport's: before the received boxes or faces.
    if (std::exchange(all_ghosts_, false)) {
      wraps_.all_ghosts(u);
      if (!plan_.around.empty())
        k_.unpack_boxes(plan_.layout, recv_boxes_, face_buffer<T>(all_recv_), u, Lane::boundary);
      clean_ = true;
      return;
    }
    wraps_.faces(u, axes_);
    for (std::size_t i = 0; i < plan_.faces.size(); ++i)
      if (in_axes(axes_, plan_.faces[i]))
        k_.unpack(plan_.layout, plan_.faces[i].face, face_buffer<T>(recv_[i]), u, Lane::boundary);
    clean_ = true;
  }

  Kernels& k_;
  HaloPlan plan_;
  WrapCopies wraps_;  // periodic ghosts whose neighbour is this rank (NCCL cannot send to it)
  std::vector<std::size_t> receive_order_;  // indices of plan_.faces: see start_t
  cudaStream_t stream_ = nullptr;
  ncclComm_t comm_ = nullptr;
  std::vector<Buffer> send_, recv_;
  BoxList send_boxes_, recv_boxes_;  // plan_.around's sub-boxes, in its order
  Buffer all_send_, all_recv_;       // the one round's, sized for doubles
  AxisMask axes_ = kAllAxes;         // of the face exchange in flight
  bool all_ghosts_ = false;          // the exchange in flight is start_all_ghosts'
  bool clean_ = true;
};

}  // namespace
#endif  // HALO3D_HAVE_NCCL

std::unique_ptr<HaloTransport> make_nccl_transport(const TransportContext& c) {
  if (!nccl_compiled())
    throw Error(kExitUnavailable,
                "--halo nccl: this halo3d was built without NCCL (install NCCL and reconfigure "
                "with CUDA); use "
                "--halo mpi or --halo ipc");
  if (c.k.device() < 0)  // no GPU behind these kernels
    throw Error(kExitUnavailable,
                "--halo nccl: needs --backend cuda (NCCL moves GPU memory; the host backend has "
                "none); use --halo mpi");
  // Checked before any NCCL call: NCCL refuses, or hangs in init, with two ranks on a GPU.
  const std::string shared = shared_gpu(gather_rank_gpus(c.k, c.hosts, c.comm), c.hosts);
  if (!shared.empty())
    throw Error(kExitUnavailable,
                "--halo nccl: " + shared +
                    "; NCCL cannot put two ranks on one GPU; use --halo ipc or --halo mpi (both "
                    "work with shared GPUs), or run one rank per GPU");
#ifdef HALO3D_HAVE_NCCL
  return std::make_unique<NcclTransport>(c.k, c.plan, c.comm);
#else
  throw Error(kExitUnavailable, "--halo nccl: not compiled");
#endif
}

}  // namespace halo3d
