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
}  // namespace

template <class T>
void post_face_recvs(const HaloPlan& plan, std::vector<Buffer>& bufs, MPI_Comm comm,
                     std::vector<Request>& reqs) {
  for (std::size_t i = 0; i < plan.faces.size(); ++i) {
    const HaloFace& f = plan.faces[i];
    HALO3D_MPI_CHECK(MPI_Irecv(face_buffer<T>(bufs[i]), int(f.points), mpi_datatype<T>(),
                               f.neighbor, face_tag(f.face.axis, 1 - f.face.side), comm,
                               reqs.emplace_back().for_recv()));
  }
}

template <class T>
void post_face_sends(const HaloPlan& plan, std::vector<Buffer>& bufs, MPI_Comm comm,
                     std::vector<Request>& reqs) {
  for (std::size_t i = 0; i < plan.faces.size(); ++i) {
    const HaloFace& f = plan.faces[i];
    HALO3D_MPI_CHECK(MPI_Isend(face_buffer<T>(bufs[i]), int(f.points), mpi_datatype<T>(),
                               f.neighbor, face_tag(f.face.axis, f.face.side), comm,
                               reqs.emplace_back().for_send()));
  }
}

template void post_face_recvs<double>(const HaloPlan&, std::vector<Buffer>&, MPI_Comm,
                                      std::vector<Request>&);
template void post_face_recvs<float>(const HaloPlan&, std::vector<Buffer>&, MPI_Comm,
                                     std::vector<Request>&);
template void post_face_sends<double>(const HaloPlan&, std::vector<Buffer>&, MPI_Comm,
                                      std::vector<Request>&);
template void post_face_sends<float>(const HaloPlan&, std::vector<Buffer>&, MPI_Comm,
                                     std::vector<Request>&);

namespace {

class MpiTransport final : public TypedTransport<MpiTransport> {
 public:
  MpiTransport(Kernels& k, const HaloPlan& plan, MPI_Comm comm)
      : k_(k), plan_(plan), comm_(comm), staged_(k.device_memory_is_remote()) {
    for (const auto& f : plan_.faces) {
      host_send_.emplace_back(k_, f.points, Memory::host_pinned);
      host_recv_.emplace_back(k_, f.points, Memory::host_pinned);
      if (staged_) {
        dev_send_.emplace_back(k_, f.points, Memory::device);
        dev_recv_.emplace_back(k_, f.points, Memory::device);
      }
    }
  }
  Transport kind() const override { return Transport::mpi; }
  std::string describe() const override {
    return "mpi: " + std::to_string(plan_.faces.size()) + " face(s)" +
           (staged_ ? ", staged through pinned host buffers" : ", host memory");
  }

 private:
  friend class TypedTransport<MpiTransport>;
  template <class T>
  void start_t(const T* u) {
    HALO3D_NVTX_RANGE("mpi start (pack, send)");
    // The previous finish() may still be copying out of the receive buffers.
    if (staged_) k_.synchronize(Lane::boundary);
    // Receives first, so a neighbour's eager send lands in its buffer directly.
    post_face_recvs<T>(plan_, host_recv_, comm_, recvs_);
    k_.fence(Lane::interior, Lane::boundary);
    for (std::size_t i = 0; i < plan_.faces.size(); ++i) {
      const auto& f = plan_.faces[i];
      if (staged_) {
        k_.pack(plan_.layout, f.face, u, face_buffer<T>(dev_send_[i]), Lane::boundary);
        k_.copy(face_buffer<T>(host_send_[i]), face_buffer<T>(dev_send_[i]), f.points,
                Lane::boundary);
      } else {
        k_.pack(plan_.layout, f.face, u, face_buffer<T>(host_send_[i]), Lane::boundary);
      }
    }
    k_.synchronize(Lane::boundary);
    post_face_sends<T>(plan_, host_send_, comm_, sends_);
  }

  template <class T>
  void finish_t(T* u) {
    HALO3D_NVTX_RANGE("mpi finish (wait, unpack)");
    wait_all(recvs_);
    recvs_.clear();
    for (std::size_t i = 0; i < plan_.faces.size(); ++i) {
      const auto& f = plan_.faces[i];
      if (staged_) {
        k_.copy(face_buffer<T>(dev_recv_[i]), face_buffer<T>(host_recv_[i]), f.points,
                Lane::boundary);
        k_.unpack(plan_.layout, f.face, face_buffer<T>(dev_recv_[i]), u, Lane::boundary);
      } else {
        k_.unpack(plan_.layout, f.face, face_buffer<T>(host_recv_[i]), u, Lane::boundary);
      }
    }
    wait_all(sends_);
    sends_.clear();
  }

 private:
  Kernels& k_;
  HaloPlan plan_;
  MPI_Comm comm_;
  bool staged_;
  std::vector<Buffer> host_send_, host_recv_, dev_send_, dev_recv_;
  std::vector<Request> recvs_, sends_;  // pending ones released by ~Request
};

}  // namespace

std::unique_ptr<HaloTransport> make_mpi_transport(Kernels& k, const HaloPlan& plan, MPI_Comm comm) {
  return std::make_unique<MpiTransport>(k, plan, comm);
}

}  // namespace halo3d
