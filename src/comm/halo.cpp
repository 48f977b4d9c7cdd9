#include "halo.hpp"

#include <array>
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

std::size_t HaloPlan::bytes_wrapped() const {
  std::size_t b = 0;
  for (const auto& f : self_faces) b += f.points * sizeof(double);
  for (const auto& x : self_around) b += x.points * sizeof(double);
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
      (d.around[dir] == d.rank ? p.self_around : p.around)
          .push_back(around_box(p.layout, dir, d.around[dir]));
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side) {
      if (d.neighbor[axis][side] == MPI_PROC_NULL) continue;
      HaloFace f;
      f.face = {axis, side};
      f.neighbor = d.neighbor[axis][side];
      int na, nb;
      ops::face_dims(p.layout, f.face, na, nb);
      f.points = std::size_t(na) * nb;
      (f.neighbor == d.rank ? p.self_faces : p.faces).push_back(f);
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

WrapCopies::WrapCopies(Kernels& k, const HaloPlan& plan)
    : k_(k), layout_(plan.layout), faces_(plan.self_faces) {
  for (const HaloFace& f : faces_) face_bufs_.emplace_back(k_, f.points);
  // The ghost box at offset dir is the boundary box at the opposite offset, 26 - dir, which
  // is a self box too (a wrapped offset's negation wraps on the same axes).
  for (const HaloBox& b : plan.self_around) {
    const HaloBox opposite = around_box(layout_, 26 - b.dir, b.neighbor);
    send_boxes_.add(opposite.send);
    recv_boxes_.add(b.recv);
  }
  if (send_boxes_.points() > 0) box_buf_ = Buffer(k_, std::size_t(send_boxes_.points()));
}

template <class T>
void WrapCopies::faces(T* u, AxisMask axes) {
  if (faces_.empty()) return;
  // Every pack before any unpack: a pack's rim is ghosts of other axes, never this one's,
  // but the order keeps each face's copy independent of the others'.
  for (std::size_t i = 0; i < faces_.size(); ++i)
    if (in_axes(axes, faces_[i])) {
      const Face f = faces_[i].face;
      k_.pack(layout_, Face{f.axis, 1 - f.side}, u, face_buffer<T>(face_bufs_[i]), Lane::boundary);
    }
  for (std::size_t i = 0; i < faces_.size(); ++i)
    if (in_axes(axes, faces_[i]))
      k_.unpack(layout_, faces_[i].face, face_buffer<T>(face_bufs_[i]), u, Lane::boundary);
}

template <class T>
void WrapCopies::all_ghosts(T* u) {
  if (send_boxes_.count == 0) return;
  k_.pack_boxes(layout_, send_boxes_, u, face_buffer<T>(box_buf_), Lane::boundary);
  k_.unpack_boxes(layout_, recv_boxes_, face_buffer<T>(box_buf_), u, Lane::boundary);
}

template void WrapCopies::faces(double*, AxisMask);
template void WrapCopies::faces(float*, AxisMask);
template void WrapCopies::all_ghosts(double*);
template void WrapCopies::all_ghosts(float*);

namespace {

// A message through face (axis, side) of the sender is tagged with that face.
int face_tag(int axis, int side) { return 100 + 2 * axis + side; }
// A one-round message towards offset `dir` (Decomposition::around_index) of the sender is
// tagged with that offset: apart from the face tags, one tag per direction. The neighbour
// at offset dir sends towards the opposite one, 26 - dir.
int around_tag(int dir) { return 200 + dir; }

// One exchange's messages as persistent requests (made once, started per exchange): the
// receives, started before the packs so that a neighbour's eager send lands in its buffer
// directly, and the sends, started once the packs are done.
struct PersistentExchange {
  PersistentRequests recvs{PersistentRequests::Kind::recv};
  PersistentRequests sends{PersistentRequests::Kind::send};
  bool made = false;
};

// Face messages through MPI point-to-point: per face of the plan on `axes`, a receive from its
// neighbour into recv[i] and a send from send[i], in T (face_buffer), tagged with the face it
// leaves the sender through, so the two messages between a pair of ranks (periodic, or a
// 2-rank axis) cannot swap.
template <class T>
void make_face_requests(const HaloPlan& plan, AxisMask axes, std::vector<Buffer>& recv,
                        std::vector<Buffer>& send, MPI_Comm comm, PersistentExchange& x) {
  for (std::size_t i = 0; i < plan.faces.size(); ++i) {
    const HaloFace& f = plan.faces[i];
    if (!in_axes(axes, f)) continue;
    HALO3D_MPI_CHECK(MPI_Recv_init(face_buffer<T>(recv[i]), int(f.points), mpi_datatype<T>(),
                                   f.neighbor, face_tag(f.face.axis, 1 - f.face.side), comm,
                                   x.recvs.add()));
    HALO3D_MPI_CHECK(MPI_Send_init(face_buffer<T>(send[i]), int(f.points), mpi_datatype<T>(),
                                   f.neighbor, face_tag(f.face.axis, f.face.side), comm,
                                   x.sends.add()));
  }
  x.made = true;
}

// The one round's messages: per neighbour of plan.around, a slice of the one receive buffer
// and of the one send buffer (BoxList starts), tagged with the direction it travels.
template <class T>
void make_around_requests(const HaloPlan& plan, const BoxList& recv_boxes, Buffer& recv,
                          const BoxList& send_boxes, Buffer& send, MPI_Comm comm,
                          PersistentExchange& x) {
  const std::vector<HaloBox>& boxes = plan.around;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    HALO3D_MPI_CHECK(MPI_Recv_init(face_buffer<T>(recv) + recv_boxes.start[i], int(boxes[i].points),
                                   mpi_datatype<T>(), boxes[i].neighbor,
                                   around_tag(26 - boxes[i].dir), comm, x.recvs.add()));
    HALO3D_MPI_CHECK(MPI_Send_init(face_buffer<T>(send) + send_boxes.start[i], int(boxes[i].points),
                                   mpi_datatype<T>(), boxes[i].neighbor, around_tag(boxes[i].dir),
                                   comm, x.sends.add()));
  }
  x.made = true;
}

// 0 for double, 1 for float: which of a transport's request sets a message type uses.
template <class T>
constexpr int type_slot() {
  return sizeof(T) == sizeof(double) ? 0 : 1;
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
        staged_(!device_messages && k.device_memory_is_remote()),
        wraps_(k, plan) {
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
           (wraps_.empty() ? ""
                           : ", " + std::to_string(plan_.self_faces.size()) +
                                 " periodic face(s) copied locally") +
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
    PersistentExchange& x = face_requests<T>(axes);
    // The previous finish() may still be unpacking from the receive buffers.
    k_.synchronize(Lane::boundary);
    x.recvs.start_all();
    in_flight_ = &x;
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
    x.sends.start_all();
  }

  // As start_t, for every neighbour of plan_.around at once: its sub-boxes, packed into one
  // buffer by one launch (BoxList), each message a slice of it.
  template <class T>
  void start_all_ghosts_t(const T* u) {
    HALO3D_NVTX_RANGE("mpi start, every ghost (pack, send)");
    all_ghosts_ = true;
    PersistentExchange& x = around_requests<T>();
    k_.synchronize(Lane::boundary);  // the previous finish() may still be unpacking
    x.recvs.start_all();
    in_flight_ = &x;
    if (plan_.around.empty() && wraps_.empty()) return;  // nothing to pack or copy
    k_.fence(Lane::interior, Lane::boundary);  // for the packs, and for finish's local copies
    if (plan_.around.empty()) return;
    const auto n = std::size_t(send_boxes_.points());
    k_.pack_boxes(plan_.layout, send_boxes_, u, face_buffer<T>(staged_ ? dev_all_send_ : all_send_),
                  Lane::boundary);
    if (staged_)
      k_.copy(face_buffer<T>(all_send_), face_buffer<T>(dev_all_send_), n, Lane::boundary);
    k_.synchronize(Lane::boundary);  // MPI reads the buffer from the host's point of view
    x.sends.start_all();
  }

  // The persistent requests of a face exchange of T on `axes`, made on first use: every
  // exchange of one type and axes moves the same faces between the same buffers (owned
  // here, never reallocated), so the requests made once serve them all.
  template <class T>
  PersistentExchange& face_requests(AxisMask axes) {
    PersistentExchange& x = face_sets_[type_slot<T>()][axes & kAllAxes];
    if (!x.made) make_face_requests<T>(plan_, axes, recv_, send_, comm_, x);
    return x;
  }
  template <class T>
  PersistentExchange& around_requests() {
    PersistentExchange& x = around_sets_[type_slot<T>()];
    if (!x.made)
      make_around_requests<T>(plan_, recv_boxes_, all_recv_, send_boxes_, all_send_, comm_, x);
    return x;
  }

  template <class T>
  void finish_t(T* u) {
    HALO3D_NVTX_RANGE("mpi finish (wait, unpack)");
    // The local copies first: they need no message, so they run while ours are in flight.
    if (all_ghosts_) {
      wraps_.all_ghosts(u);
    } else {
      wraps_.faces(u, axes_);
    }
    PersistentExchange* x = std::exchange(in_flight_, nullptr);
    if (x) x->recvs.wait_all();
    if (std::exchange(all_ghosts_, false)) {
      finish_all_ghosts(u);
    } else {
      finish_faces(u);
    }
    if (x) x->sends.wait_all();
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
  WrapCopies wraps_;                         // ghosts this rank fills from its own box
  // The messages, as persistent requests on send_/recv_ and all_send_/all_recv_ (declared
  // after them: freed first): per type (type_slot) and axis mask for the face exchanges,
  // per type for the one round. MPI_Send_init/MPI_Recv_init fix count and datatype, so a
  // float exchange has requests of its own.
  std::array<std::array<PersistentExchange, kAllAxes + 1>, 2> face_sets_;
  std::array<PersistentExchange, 2> around_sets_;
  PersistentExchange* in_flight_ = nullptr;  // the exchange start() began, finish() completes
};

}  // namespace

std::unique_ptr<HaloTransport> make_mpi_transport(Kernels& k, const HaloPlan& plan, MPI_Comm comm,
                                                  bool device_messages) {
  return std::make_unique<MpiTransport>(k, plan, comm, device_messages);
}

}  // namespace halo3d
