#include "halo.hpp"

#include "errors.hpp"
#include "mpi_env.hpp"
#include "nvtx.hpp"
#include "point_ops.hpp"

namespace halo3d {

std::size_t HaloPlan::bytes_per_exchange() const {
  std::size_t b = 0;
  for (const auto& f : faces) b += f.points * sizeof(double);
  return b;
}

HaloPlan HaloPlan::build(const Decomposition& d) {
  HaloPlan p;
  p.layout = d.layout();
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side) {
      if (d.neighbor[axis][side] == MPI_PROC_NULL) continue;
      HaloFace f;
      f.face = {axis, side};
      f.neighbor = d.neighbor[axis][side];
      int na, nb;
      ops::face_dims(p.layout, f.face, na, nb);
      f.points = std::size_t(na) * nb;
      p.faces.push_back(f);
    }
  return p;
}

namespace {

// A message through face (axis, side) of the sender is tagged with that face.
int face_tag(int axis, int side) { return 100 + 2 * axis + side; }

// Face messages through MPI point-to-point: per face of the plan on `axes`, a receive from its
// neighbour into bufs[i] or a send from bufs[i], in T (face_buffer), tagged with the face it
// leaves the sender through, so the two messages between a pair of ranks (periodic, or a
// 2-rank axis) cannot swap. The requests are added to `reqs`.
template <class T>
void post_face_recvs(const HaloPlan& plan, AxisMask axes, std::vector<Buffer>& bufs, MPI_Comm comm,
                     std::vector<Request>& reqs) {
  for (std::size_t i = 0; i < plan.faces.size(); ++i) {
    const HaloFace& f = plan.faces[i];
    if (!in_axes(axes, f)) continue;
    HALO3D_MPI_CHECK(MPI_Irecv(face_buffer<T>(bufs[i]), int(f.points), mpi_datatype<T>(),
                               f.neighbor, face_tag(f.face.axis, 1 - f.face.side), comm,
                               reqs.emplace_back().for_recv()));
  }
}

template <class T>
void post_face_sends(const HaloPlan& plan, AxisMask axes, std::vector<Buffer>& bufs, MPI_Comm comm,
                     std::vector<Request>& reqs) {
  for (std::size_t i = 0; i < plan.faces.size(); ++i) {
    const HaloFace& f = plan.faces[i];
    if (!in_axes(axes, f)) continue;
    HALO3D_MPI_CHECK(MPI_Isend(face_buffer<T>(bufs[i]), int(f.points), mpi_datatype<T>(),
                               f.neighbor, face_tag(f.face.axis, f.face.side), comm,
                               reqs.emplace_back().for_send()));
  }
}

// mpi and mpi-cuda: the face messages MPI sees are in host memory (host backend), in pinned
// host copies of device buffers (mpi on a GPU: staged), or the device buffers themselves
// (mpi-cuda, for an MPI that takes device pointers).
class MpiTransport final : public TypedTransport<MpiTransport> {
 public:
  MpiTransport(Kernels& k, const HaloPlan& plan, MPI_Comm comm, bool device_messages)
      : k_(k),
        plan_(plan),
        comm_(comm),
        device_messages_(device_messages),
        staged_(!device_messages && k.device_memory_is_remote()) {
    const Memory where = device_messages_ ? Memory::device : Memory::host_pinned;
    for (const auto& f : plan_.faces) {
      send_.emplace_back(k_, f.points, where);
      recv_.emplace_back(k_, f.points, where);
      if (staged_) {
        dev_send_.emplace_back(k_, f.points, Memory::device);
        dev_recv_.emplace_back(k_, f.points, Memory::device);
      }
    }
  }
  Transport kind() const override {
    return device_messages_ ? Transport::mpi_cuda : Transport::mpi;
  }
  std::string describe() const override {
    return name() + ": " + std::to_string(plan_.faces.size()) + " face(s)" +
           (device_messages_ ? ", device buffers to a CUDA-aware MPI"
            : staged_        ? ", staged through pinned host buffers"
                             : ", host memory");
  }

 private:
  friend class TypedTransport<MpiTransport>;
  template <class T>
  void start_t(const T* u, AxisMask axes) {
    HALO3D_NVTX_RANGE("mpi start (pack, send)");
    axes_ = axes;
    // The previous finish() may still be unpacking from the receive buffers.
    k_.synchronize(Lane::boundary);
    // Receives first, so a neighbour's eager send lands in its buffer directly.
    post_face_recvs<T>(plan_, axes, recv_, comm_, recvs_);
    k_.fence(Lane::interior, Lane::boundary);
    for (std::size_t i = 0; i < plan_.faces.size(); ++i) {
      const auto& f = plan_.faces[i];
      if (!in_axes(axes, f)) continue;
      k_.pack(plan_.layout, f.face, u, face_buffer<T>(staged_ ? dev_send_[i] : send_[i]),
              Lane::boundary);
      if (staged_)
        k_.copy(face_buffer<T>(send_[i]), face_buffer<T>(dev_send_[i]), f.points, Lane::boundary);
    }
    // MPI reads the buffers from the host's point of view: the packs must be done.
    k_.synchronize(Lane::boundary);
    post_face_sends<T>(plan_, axes, send_, comm_, sends_);
  }

  template <class T>
  void finish_t(T* u) {
    HALO3D_NVTX_RANGE("mpi finish (wait, unpack)");
    wait_all(recvs_);
    recvs_.clear();
    for (std::size_t i = 0; i < plan_.faces.size(); ++i) {
      const auto& f = plan_.faces[i];
      if (!in_axes(axes_, f)) continue;
      if (staged_)
        k_.copy(face_buffer<T>(dev_recv_[i]), face_buffer<T>(recv_[i]), f.points, Lane::boundary);
      k_.unpack(plan_.layout, f.face, face_buffer<T>(staged_ ? dev_recv_[i] : recv_[i]), u,
                Lane::boundary);
    }
    wait_all(sends_);
    sends_.clear();
  }

  Kernels& k_;
  HaloPlan plan_;
  MPI_Comm comm_;
  bool device_messages_, staged_;
  AxisMask axes_ = kAllAxes;                 // of the exchange in flight
  std::vector<Buffer> send_, recv_;          // what MPI sends and receives
  std::vector<Buffer> dev_send_, dev_recv_;  // staged_: the device side of send_ and recv_
  std::vector<Request> recvs_, sends_;       // pending ones released by ~Request
};

}  // namespace

std::unique_ptr<HaloTransport> make_mpi_transport(Kernels& k, const HaloPlan& plan, MPI_Comm comm,
                                                  bool device_messages) {
  return std::make_unique<MpiTransport>(k, plan, comm, device_messages);
}

}  // namespace halo3d
