#include "halo.hpp"

#include <stdexcept>
#include <utility>

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

std::size_t HaloPlan::bytes_all_ghosts() const {
  std::size_t b = 0;
  for (const auto& x : around) b += x.points * sizeof(double);
  return b;
}

void HaloTransport::start_all_ghosts(const double*) {
  throw std::logic_error(name() + " has no one-round exchange of every ghost");
}
void HaloTransport::start_all_ghosts(const float*) {
  throw std::logic_error(name() + " has no one-round exchange of every ghost");
}

namespace {

// The sub-boxes of the neighbour at offset `dir`: per axis, the whole extent (offset 0), or
// the boundary layer sent and the ghost layer beyond it on that side.
HaloBox around_box(const Layout& l, int dir, int neighbor) {
  HaloBox b;
  b.dir = dir;
  b.neighbor = neighbor;
  const int n[3] = {l.nx, l.ny, l.nz};
  int s0[3], s1[3], r0[3], r1[3];
  for (int a = 0, rest = dir; a < 3; ++a, rest /= 3) {
    const int off = rest % 3 - 1;
    s0[a] = off > 0 ? n[a] - 1 : 0;
    s1[a] = off < 0 ? 1 : n[a];
    r0[a] = off == 0 ? 0 : off < 0 ? -1 : n[a];
    r1[a] = off == 0 ? n[a] : r0[a] + 1;
  }
  b.send = {s0[0], s1[0], s0[1], s1[1], s0[2], s1[2]};
  b.recv = {r0[0], r1[0], r0[1], r1[1], r0[2], r1[2]};
  b.points = b.send.size();
  return b;
}

}  // namespace

HaloPlan HaloPlan::build(const Decomposition& d) {
  HaloPlan p;
  p.layout = d.layout();
  for (int dir = 0; dir < 27; ++dir)
    if (d.around[dir] != MPI_PROC_NULL)
      p.around.push_back(around_box(p.layout, dir, d.around[dir]));
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
      // A decomposition whose `around` was not set (built by hand) would leave the one-round
      // exchange's face ghosts stale: refuse it here rather than compute with them.
      int off[3] = {0, 0, 0};
      off[axis] = 2 * side - 1;
      if (d.around[Decomposition::around_index(off[0], off[1], off[2])] != f.neighbor)
        throw std::logic_error(
            "HaloPlan: Decomposition::around does not match its face neighbours");
    }
  return p;
}

namespace {

// A message through face (axis, side) of the sender is tagged with that face.
int face_tag(int axis, int side) { return 100 + 2 * axis + side; }
// A one-round message towards offset `dir` (Decomposition::around_index) of the sender is
// tagged with that offset: apart from the face tags, one tag per direction. The neighbour
// at offset dir sends towards the opposite one, 26 - dir.
int around_tag(int dir) { return 200 + dir; }

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
    for (const auto& b : plan_.around) {
      send_boxes_.add(b.send);
      recv_boxes_.add(b.recv);
    }
    // One buffer each way for the one-round exchange (sized for doubles, as the faces').
    if (const auto n = std::size_t(send_boxes_.points())) {
      all_send_ = Buffer(k_, n, where);
      all_recv_ = Buffer(k_, n, where);
      if (staged_) {
        dev_all_send_ = Buffer(k_, n, Memory::device);
        dev_all_recv_ = Buffer(k_, n, Memory::device);
      }
    }
  }
  Transport kind() const override {
    return device_messages_ ? Transport::mpi_cuda : Transport::mpi;
  }
  bool fills_corners_in_one_round() const override { return true; }
  void start_all_ghosts(const double* u) override { start_all_ghosts_t(u); }
  void start_all_ghosts(const float* u) override { start_all_ghosts_t(u); }
  std::string describe() const override {
    return name() + ": " + std::to_string(plan_.faces.size()) + " face(s), " +
           std::to_string(plan_.around.size()) + " neighbour(s) for the one-round ghost exchange" +
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

  // As start_t, for every neighbour of plan_.around at once: its sub-boxes, packed into one
  // buffer by one launch (BoxList), each message a slice of it.
  template <class T>
  void start_all_ghosts_t(const T* u) {
    HALO3D_NVTX_RANGE("mpi start, every ghost (pack, send)");
    all_ghosts_ = true;
    k_.synchronize(Lane::boundary);  // the previous finish() may still be unpacking
    const std::vector<HaloBox>& boxes = plan_.around;
    for (std::size_t i = 0; i < boxes.size(); ++i)
      HALO3D_MPI_CHECK(MPI_Irecv(face_buffer<T>(all_recv_) + recv_boxes_.start[i],
                                 int(boxes[i].points), mpi_datatype<T>(), boxes[i].neighbor,
                                 around_tag(26 - boxes[i].dir), comm_,
                                 recvs_.emplace_back().for_recv()));
    if (boxes.empty()) return;
    k_.fence(Lane::interior, Lane::boundary);
    const auto n = std::size_t(send_boxes_.points());
    k_.pack_boxes(plan_.layout, send_boxes_, u, face_buffer<T>(staged_ ? dev_all_send_ : all_send_),
                  Lane::boundary);
    if (staged_)
      k_.copy(face_buffer<T>(all_send_), face_buffer<T>(dev_all_send_), n, Lane::boundary);
    k_.synchronize(Lane::boundary);  // MPI reads the buffer from the host's point of view
    for (std::size_t i = 0; i < boxes.size(); ++i)
      HALO3D_MPI_CHECK(MPI_Isend(
          face_buffer<T>(all_send_) + send_boxes_.start[i], int(boxes[i].points), mpi_datatype<T>(),
          boxes[i].neighbor, around_tag(boxes[i].dir), comm_, sends_.emplace_back().for_send()));
  }

  template <class T>
  void finish_t(T* u) {
    HALO3D_NVTX_RANGE("mpi finish (wait, unpack)");
    wait_all(recvs_);
    recvs_.clear();
    if (std::exchange(all_ghosts_, false)) {
      finish_all_ghosts(u);
    } else {
      finish_faces(u);
    }
    wait_all(sends_);
    sends_.clear();
  }
  template <class T>
  void finish_all_ghosts(T* u) {
    if (plan_.around.empty()) return;
    if (staged_)
      k_.copy(face_buffer<T>(dev_all_recv_), face_buffer<T>(all_recv_),
              std::size_t(recv_boxes_.points()), Lane::boundary);
    k_.unpack_boxes(plan_.layout, recv_boxes_, face_buffer<T>(staged_ ? dev_all_recv_ : all_recv_),
                    u, Lane::boundary);
  }
  template <class T>
  void finish_faces(T* u) {
    for (std::size_t i = 0; i < plan_.faces.size(); ++i) {
      const auto& f = plan_.faces[i];
      if (!in_axes(axes_, f)) continue;
      if (staged_)
        k_.copy(face_buffer<T>(dev_recv_[i]), face_buffer<T>(recv_[i]), f.points, Lane::boundary);
      k_.unpack(plan_.layout, f.face, face_buffer<T>(staged_ ? dev_recv_[i] : recv_[i]), u,
                Lane::boundary);
    }
  }

  Kernels& k_;
  HaloPlan plan_;
  MPI_Comm comm_;
  bool device_messages_, staged_;
  AxisMask axes_ = kAllAxes;                 // of the exchange in flight
  bool all_ghosts_ = false;                  // the exchange in flight is start_all_ghosts'
  std::vector<Buffer> send_, recv_;          // what MPI sends and receives
  std::vector<Buffer> dev_send_, dev_recv_;  // staged_: the device side of send_ and recv_
  BoxList send_boxes_, recv_boxes_;          // plan_.around's sub-boxes, in its order
  Buffer all_send_, all_recv_;               // the one-round exchange's, as send_ and recv_
  Buffer dev_all_send_, dev_all_recv_;       // staged_: their device side
  std::vector<Request> recvs_, sends_;       // pending ones released by ~Request
};

}  // namespace

std::unique_ptr<HaloTransport> make_mpi_transport(Kernels& k, const HaloPlan& plan, MPI_Comm comm,
                                                  bool device_messages) {
  return std::make_unique<MpiTransport>(k, plan, comm, device_messages);
}

}  // namespace halo3d
