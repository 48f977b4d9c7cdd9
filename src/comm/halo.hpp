// Halo exchange: the plan (neighbours, face sizes, buffers) is built once; each exchange
// is start() (post receives, pack, send) and finish() (wait, unpack), so interior work can
// run in between.
#pragma once
#include <mpi.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "choices.hpp"
#include "decomposition.hpp"
#include "kernels.hpp"
#include "mpi_env.hpp"

namespace halo3d {

struct HaloFace {
  Face face;
  int neighbor = MPI_PROC_NULL;
  std::size_t points = 0;
};

// A set of axes (bit a: axis a). An exchange of all of them fills the ghosts a sweep
// reads; one axis per round, in axis order, fills edges and corners too
// (DistributedOperator::exchange where the transport has no one-round exchange), each face
// sent once.
using AxisMask = unsigned;
constexpr AxisMask kAllAxes = 7;
inline bool in_axes(AxisMask axes, const HaloFace& f) { return (axes >> f.face.axis) & 1u; }

// One neighbour of the one-round exchange (faces, edges and corners): the rank at offset
// `dir` (Decomposition::around_index), the boundary sub-box sent to it and the ghost
// sub-box its message fills (faces without their rim: n_a x n_b; edges n_a; corners 1).
struct HaloBox {
  int dir = 0;
  int neighbor = MPI_PROC_NULL;
  Region send, recv;
  std::size_t points = 0;
};

struct HaloPlan {
  Layout layout;
  // Messages: faces and neighbours that are other ranks. faces: in (axis, side) order;
  // around: every other rank of Decomposition::around, in dir order.
  std::vector<HaloFace> faces;
  std::vector<HaloBox> around;
  // Local copies: on a periodic axis with one rank along it, the faces and boxes whose
  // neighbour is this rank itself (their `neighbor` is its rank), in the same orders;
  // filled from this rank's own opposite boundary (WrapCopies), never sent.
  std::vector<HaloFace> self_faces;
  std::vector<HaloBox> self_around;
  std::size_t bytes_per_exchange() const;  // sent by this rank per exchange
  std::size_t bytes_all_ghosts() const;    // sent by this rank per one-round exchange
  std::size_t bytes_wrapped() const;       // WrapCopies' buffers (backend memory) for the self ones
  // Whether an exchange fills any ghost (by a message or a local copy).
  bool fills_ghosts() const { return !faces.empty() || !self_faces.empty(); }
  static HaloPlan build(const Decomposition& d);
};

// The ghosts a rank fills from its own box, HaloPlan::self_faces and self_around: the ghost
// layer beyond one face of a periodic axis with one rank along it takes the opposite
// boundary layer, by a pack and an unpack on Lane::boundary, so that it works on every
// backend. Every transport owns one and runs it at the start of finish() (start() takes u
// as const), before it waits for its messages and unpacks them; start() has fenced
// Lane::interior -> Lane::boundary, so the copies read u as it was at start() without
// waiting for the interior sweep an overlapped application runs in between. The
// transports that cannot message their own rank (ipc, nccl) wrap this way too, and serial
// levels (Decomposition::whole, MPI_COMM_SELF) as well.
class WrapCopies {
 public:
  WrapCopies(Kernels& k, const HaloPlan& plan);
  bool empty() const { return faces_.empty() && send_boxes_.count == 0; }
  // The self faces of the axes in `axes`, each with its rim (as a face message): every
  // opposite face packed first, then each unpacked into its ghost layer.
  template <class T>
  void faces(T* u, AxisMask axes);
  // The one round's: every self box (faces without their rim, edges, corners), each ghost
  // box from the boundary box at the opposite offset, one pack_boxes and one unpack_boxes.
  template <class T>
  void all_ghosts(T* u);

 private:
  Kernels& k_;
  Layout layout_;
  std::vector<HaloFace> faces_;
  std::vector<Buffer> face_bufs_;  // one per self face, sized for doubles
  BoxList send_boxes_, recv_boxes_;
  Buffer box_buf_;
};

// A way to move packed faces between ranks: mpi here; mpi-cuda, ipc, nccl and the choice
// among them in transports/. start() and finish() leave their GPU work on Lane::boundary.
class HaloTransport {
 public:
  virtual ~HaloTransport() = default;
  virtual Transport kind() const = 0;
  std::string name() const { return to_string(kind()); }
  // What this rank detected and uses (one line, for the run's report).
  virtual std::string describe() const { return name(); }
  // Send faces of u (interior boundary layers), receive into u's ghost layers: the faces
  // of the axes in `axes` only (bit a: axis a), which finish() completes. Either scalar
  // type (a float multigrid V-cycle exchanges floats): each transport implements both
  // with one template, moving faces of the type's size (face_buffer, mpi_datatype).
  virtual void start(const double* u, AxisMask axes = kAllAxes) = 0;
  virtual void finish(double* u) = 0;
  virtual void start(const float* u, AxisMask axes = kAllAxes) = 0;
  virtual void finish(float* u) = 0;
  // Whether start_all_ghosts() exists: one round in which every neighbour of
  // HaloPlan::around (faces, edges, corners) gets the sub-box it needs, so every ghost point
  // with a neighbour is filled at once. Every transport has it (mpi, staged or mpi-cuda,
  // ipc, nccl); without it DistributedOperator::exchange would run one start(u,
  // axis)/finish(u) round per split axis (the tests still run that path: test_periodic's
  // PerAxisOnly).
  virtual bool fills_corners_in_one_round() const { return false; }
  // The one round's start; finish(u) completes it. Only where fills_corners_in_one_round().
  virtual void start_all_ghosts(const double* u);
  virtual void start_all_ghosts(const float* u);
};

// HaloTransport's scalar overloads forwarded to the transport's one template,
// D::start_t<T> and D::finish_t<T> (private in D, which names this class a friend).
template <class D>
class TypedTransport : public HaloTransport {
 public:
  void start(const double* u, AxisMask axes = kAllAxes) final { self().start_t(u, axes); }
  void start(const float* u, AxisMask axes = kAllAxes) final { self().start_t(u, axes); }
  void finish(double* u) final { self().finish_t(u); }
  void finish(float* u) final { self().finish_t(u); }

 private:
  D& self() { return static_cast<D&>(*this); }
};

// The MPI datatype of a scalar type.
template <class T>
MPI_Datatype mpi_datatype();
template <>
inline MPI_Datatype mpi_datatype<double>() {
  return MPI_DOUBLE;
}
template <>
inline MPI_Datatype mpi_datatype<float>() {
  return MPI_FLOAT;
}
// A transport's face buffers are sized for a face of doubles (the larger type); a face of
// floats uses the first half of the same buffer.
template <class T>
T* face_buffer(Buffer& b) {
  static_assert(sizeof(T) <= sizeof(double), "face buffers hold doubles");
  return reinterpret_cast<T*>(b.data());
}

// Plain MPI: non-blocking point-to-point; with device memory the faces are staged
// through pinned host buffers, unless `device_messages` (mpi-cuda: device buffers handed to
// an MPI that takes device pointers; the caller has checked that it does).
std::unique_ptr<HaloTransport> make_mpi_transport(Kernels& k, const HaloPlan& plan, MPI_Comm comm,
                                                  bool device_messages = false);

}  // namespace halo3d
