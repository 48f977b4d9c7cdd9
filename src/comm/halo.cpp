#include "halo.hpp"

#include "errors.hpp"
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

class Requests {
 public:
  void clear() { r_.clear(); }
  MPI_Request* add() { return &r_.emplace_back(MPI_REQUEST_NULL); }
  void wait_all() {
    if (!r_.empty()) HALO3D_MPI_CHECK(MPI_Waitall(int(r_.size()), r_.data(), MPI_STATUSES_IGNORE));
    r_.clear();
  }
  ~Requests() {
    // Only reached with requests pending when unwinding from an error; complete them
    // so no MPI operation outlives its buffers.
    for (auto& r : r_)
      if (r != MPI_REQUEST_NULL) MPI_Cancel(&r), MPI_Request_free(&r);
  }

 private:
  std::vector<MPI_Request> r_;
};

class MpiTransport final : public HaloTransport {
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
  std::string name() const override { return "mpi"; }
  std::string describe() const override {
    return "mpi: " + std::to_string(plan_.faces.size()) + " face(s)" +
           (staged_ ? ", staged through pinned host buffers" : ", host memory");
  }

  void start(const double* u) override { start_t(u); }
  void start(const float* u) override { start_t(u); }
  void finish(double* u) override { finish_t(u); }
  void finish(float* u) override { finish_t(u); }

 private:
  template <class T>
  void start_t(const T* u) {
    HALO3D_NVTX_RANGE("mpi start (pack, send)");
    // The previous finish() may still be copying out of the receive buffers.
    if (staged_) k_.synchronize(Lane::boundary);
    // Receives first, so a neighbour's eager send lands in its buffer directly.
    for (std::size_t i = 0; i < plan_.faces.size(); ++i) {
      const auto& f = plan_.faces[i];
      HALO3D_MPI_CHECK(MPI_Irecv(face_buffer<T>(host_recv_[i]), int(f.points), mpi_datatype<T>(),
                                 f.neighbor, tag(f.face.axis, 1 - f.face.side), comm_,
                                 recvs_.add()));
    }
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
    for (std::size_t i = 0; i < plan_.faces.size(); ++i) {
      const auto& f = plan_.faces[i];
      HALO3D_MPI_CHECK(MPI_Isend(face_buffer<T>(host_send_[i]), int(f.points), mpi_datatype<T>(),
                                 f.neighbor, tag(f.face.axis, f.face.side), comm_, sends_.add()));
    }
  }

  template <class T>
  void finish_t(T* u) {
    HALO3D_NVTX_RANGE("mpi finish (wait, unpack)");
    recvs_.wait_all();
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
    sends_.wait_all();
  }

  // A message through face (axis, side) of the sender is tagged with that face.
  static int tag(int axis, int side) { return 100 + 2 * axis + side; }

  Kernels& k_;
  HaloPlan plan_;
  MPI_Comm comm_;
  bool staged_;
  std::vector<Buffer> host_send_, host_recv_, dev_send_, dev_recv_;
  Requests recvs_, sends_;
};

}  // namespace

std::unique_ptr<HaloTransport> make_mpi_transport(Kernels& k, const HaloPlan& plan, MPI_Comm comm) {
  return std::make_unique<MpiTransport>(k, plan, comm);
}

}  // namespace halo3d
