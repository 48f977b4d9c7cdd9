// The ipc transport: faces to ranks on the same host move GPU to GPU through CUDA IPC,
// faces to other hosts over mpi (or mpi-cuda where the MPI is CUDA-aware): a composite.
//
// Set-up (once): every rank allocates, per same-host face, an inbox (cudaMalloc) and two
// IPC events (cudaEventInterprocess | cudaEventDisableTiming): `consumed` (recorded after
// it has unpacked its inbox) and `arrived` (recorded after its copy into the neighbour's
// inbox). The handles go to the neighbour over MPI; each end maps the other's inbox and
// events (ipc_channel.cpp: same GPU, P2P with peer access, or driver-staged peer copies
// where peer access is impossible or switched off). A face is IPC only if both ends
// mapped; otherwise it joins the MPI part, and the reason is reported.
//
// One exchange, for a face between sender S (its boundary layer) and receiver R (its
// ghost layer) — each rank is both, once per face and direction:
//   R, start:  Isend credit(e) to S. R recorded `consumed` after its unpack of exchange
//              e-1 (in finish(e-1)), before this message, so the credit means "my inbox
//              is free once my `consumed` fires".
//   S, start:  packs the face into its own send buffer on the boundary stream; once
//              credit(e) has arrived (tested in start, waited for in finish at the
//              latest): cudaStreamWaitEvent(R.consumed), cudaMemcpyAsync into R's inbox,
//              cudaEventRecord(S.arrived), then Isend notice(e).
//   R, finish: waits for notice(e), cudaStreamWaitEvent(S.arrived), unpacks its inbox
//              into u, cudaEventRecord(R.consumed); then waits for its own sends.
// Why it is race-free:
//  - cudaStreamWaitEvent waits for the event's most recent record *at the time of the
//    call* and returns at once for an event never recorded. Every wait is issued only
//    after the MPI message that says the matching record has been made (the message is
//    sent after cudaEventRecord returned), so it waits for the right record; the first
//    exchange's wait on a never-recorded `consumed` is correct, the inbox being unused.
//  - No event is re-recorded before the other end has issued its wait on the previous
//    record: S records `arrived` for e+1 only after credit(e+1), which R sends in
//    start(e+1), after it issued the wait on `arrived`(e) in finish(e); R records
//    `consumed` again, in finish(e+1), only after notice(e+1), which S sends after it
//    issued its wait on R's `consumed` of exchange e.
//  - S never overwrites R's inbox before R's unpack of the previous exchange ran (the
//    wait on `consumed`), and R never unpacks before S's copy ran (the wait on `arrived`).
//  - No deadlock: finish(e) of a rank needs only its neighbours' start(e); start(e) needs
//    nothing of anyone. All messages of exchange e are received in exchange e, so nothing
//    is outstanding between exchanges, and every message carries its exchange number
//    (checked).
//  - The face data never passes through host memory we stage; the host only sees the two
//    8-byte notifications.
// The one-round exchange of every ghost (start_all_ghosts: faces without their rim, edges
// and corners, HaloPlan::around) runs the same protocol over a channel of its own per
// neighbour direction (codes kBoxCode + dir, the neighbour's kBoxCode + 26 - dir, apart
// from the face channels' 0-5): one pack of every sub-box into one send buffer
// (Kernels::pack_boxes), one copy per neighbour of its slice into its slice of that
// neighbour's one inbox buffer, and, once every copy has arrived, one unpack of that buffer
// into the ghost sub-boxes (Kernels::unpack_boxes): two launches, as the mpi transport's
// round. Its neighbours on other hosts, or whose channel could not be mapped, go through
// the mpi part's own one round.
// Teardown: both lanes are synchronized, a "bye" with each IPC neighbour, the imported
// handles are closed, then a "closed" with each, so neither end frees memory or an event
// the other may still use or map (ipc::disconnect).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "errors.hpp"
#include "nvtx.hpp"
#include "transports/transports.hpp"

#ifdef HALO3D_HAVE_CUDA
#include "transports/ipc_channel.hpp"
#endif

namespace halo3d {

#ifdef HALO3D_HAVE_CUDA
namespace {

const char* face_name(Face f) {
  static const char* names[3][2] = {{"x-", "x+"}, {"y-", "y+"}, {"z-", "z+"}};
  return names[f.axis][f.side];
}

class IpcTransport final : public TypedTransport<IpcTransport> {
 public:
  explicit IpcTransport(const TransportContext& c)
      : k_(c.k), layout_(c.plan.layout), wraps_(c.k, c.plan) {
    MPI_Comm dup = MPI_COMM_NULL;
    HALO3D_MPI_CHECK(MPI_Comm_dup(c.comm, &dup));
    comm_ = Comm(dup);
    stream_ = static_cast<cudaStream_t>(k_.native_stream(Lane::boundary));
    std::vector<ipc::Channel*> chans;
    open_face_channels(c, chans);
    open_box_channels(c, chans);
    ipc::connect(chans, comm_.get(), c.peer);

    HaloPlan net = c.plan;
    net.faces.clear();
    net.around.clear();
    net.self_faces.clear();  // copied here (wraps_), not by the network part too
    net.self_around.clear();
    std::string d = route_faces(c.plan, net);
    for (const HaloBox& b : c.plan.around) {
      auto it = std::find_if(boxes_.begin(), boxes_.end(),
                             [&](const BoxSlot& s) { return s.box.dir == b.dir; });
      if (it == boxes_.end() || !it->chan->ok()) net.around.push_back(b);
    }
    // Unusable channels (both ends agree in connect()) carry no faces, but live until the
    // teardown handshake: the neighbour may not have closed its mapping of them yet.
    drop_unusable(slots_);
    drop_unusable(boxes_);
    plan_box_copies();
    // Collective: every rank takes part, whether or not it has network faces.
    const bool cuda_aware = all_cuda_aware_mpi(c.comm);
    const std::string net_name = cuda_aware ? "mpi-cuda" : "mpi";
    for (std::size_t p; (p = d.find("%NET%")) != std::string::npos;) d.replace(p, 5, net_name);
    if (!net.faces.empty() || !net.around.empty())
      net_ = cuda_aware ? make_mpi_cuda_transport_unchecked(k_, net, c.comm)
                        : make_mpi_transport(k_, net, c.comm);
    describe_ = "ipc: " + (d.empty() ? std::string("no neighbours") : d) +
                "; one round: " + std::to_string(boxes_.size()) + " neighbour(s) over ipc, " +
                std::to_string(net.around.size()) + " over " + net_name;
  }

  ~IpcTransport() override {
    if (!clean_) return;  // an error mid-exchange: the job is being aborted; do not wait
    std::vector<ipc::Channel*> chans;
    for (Slot& s : slots_) chans.push_back(s.chan.get());
    for (BoxSlot& s : boxes_) chans.push_back(s.chan.get());
    for (auto& c : unused_) chans.push_back(c.get());
    try {
      ipc::disconnect(chans, k_);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "halo3d: ipc transport teardown: %s\n", e.what());
    }
  }

  Transport kind() const override { return Transport::ipc; }
  std::string describe() const override { return describe_; }
  bool fills_corners_in_one_round() const override { return true; }
  void start_all_ghosts(const double* u) override { start_all_ghosts_t(u); }
  void start_all_ghosts(const float* u) override { start_all_ghosts_t(u); }

 private:
  friend class TypedTransport<IpcTransport>;
  bool same_host(const TransportContext& c, int rank) const {
    return c.hosts.rank_host_index.at(rank) == c.hosts.host_index;
  }
  // A channel and a send buffer per face whose neighbour is on this host.
  void open_face_channels(const TransportContext& c, std::vector<ipc::Channel*>& chans) {
    for (const HaloFace& f : c.plan.faces) {
      if (!same_host(c, f.neighbor)) continue;
      Slot s;
      s.face = f;
      s.chan = std::make_unique<ipc::Channel>(k_, f.neighbor, code(f.face.axis, f.face.side),
                                              code(f.face.axis, 1 - f.face.side), f.points);
      s.send = Buffer(k_, f.points, Memory::device);
      chans.push_back(s.chan.get());
      slots_.push_back(std::move(s));
    }
  }
  // The one round's channels: their inboxes are slices of one buffer, in the plan's order,
  // so that one launch unpacks them all.
  void open_box_channels(const TransportContext& c, std::vector<ipc::Channel*>& chans) {
    std::size_t points = 0;
    for (const HaloBox& b : c.plan.around)
      if (same_host(c, b.neighbor)) points += b.points;
    if (points > 0) box_inbox_ = Buffer(k_, points, Memory::device);
    std::size_t off = 0;
    for (const HaloBox& b : c.plan.around) {
      if (!same_host(c, b.neighbor)) continue;
      BoxSlot s;
      s.box = b;
      s.offset = off;
      s.chan = std::make_unique<ipc::Channel>(k_, b.neighbor, kBoxCode + b.dir,
                                              kBoxCode + 26 - b.dir, b.points, &box_inbox_, off);
      off += b.points;
      chans.push_back(s.chan.get());
      boxes_.push_back(std::move(s));
    }
  }
  // Faces without a usable channel go to `net`; returns what each face uses, for describe().
  std::string route_faces(const HaloPlan& plan, HaloPlan& net) {
    std::string d;
    for (const HaloFace& f : plan.faces) {
      auto it = std::find_if(slots_.begin(), slots_.end(),
                             [&](const Slot& s) { return s.face.face.index() == f.face.index(); });
      const bool ok = it != slots_.end() && it->chan->ok();
      if (!ok) net.faces.push_back(f);
      d += std::string(d.empty() ? "" : "; ") + face_name(f.face) + " rank " +
           std::to_string(f.neighbor) + ": " +
           (it == slots_.end() ? std::string("other host") : it->chan->how()) +
           (ok ? "" : ", over %NET%");
    }
    return d;
  }
  // The one pack of the usable boxes and the unpacks: a run of consecutive inbox slices (all
  // of them, unless a channel failed) is one unpack.
  void plan_box_copies() {
    for (const BoxSlot& s : boxes_) {
      send_boxes_.add(s.box.send);
      if (unpacks_.empty() ||
          unpacks_.back().first + std::size_t(unpacks_.back().second.points()) != s.offset)
        unpacks_.push_back({s.offset, BoxList{}});
      unpacks_.back().second.add(s.box.recv);
    }
    if (const auto n = std::size_t(send_boxes_.points())) box_send_ = Buffer(k_, n, Memory::device);
  }
  template <class T>
  void start_t(const T* u, AxisMask axes) {
    clean_ = false;
    all_ghosts_ = false;
    axes_ = axes;
    if (!wraps_.empty()) k_.fence(Lane::interior, Lane::boundary);  // for finish's wraps_
    if (net_) net_->start(u, axes);
    for (Slot& s : slots_) s.active = in_axes(axes, s.face);
    if (slots_.empty()) return;
    {
      HALO3D_NVTX_RANGE("ipc post");
      for (Slot& s : slots_)
        if (s.active) s.chan->post(), s.put = false;
    }
    k_.fence(Lane::interior, Lane::boundary);
    {
      HALO3D_NVTX_RANGE("ipc pack");
      for (Slot& s : slots_)
        if (s.active) k_.pack(layout_, s.face.face, u, face_buffer<T>(s.send), Lane::boundary);
    }
    HALO3D_NVTX_RANGE("ipc send");
    for (Slot& s : slots_) {
      if (s.active && s.chan->credit_request().test()) put<T>(s);
    }
  }

  // As start_t, for every neighbour of the plan's `around` (faces without their rim, edges,
  // corners): one pack of every sub-box, then each slice copied to its neighbour's inbox
  // once its credit is in.
  template <class T>
  void start_all_ghosts_t(const T* u) {
    clean_ = false;
    all_ghosts_ = true;
    if (!wraps_.empty()) k_.fence(Lane::interior, Lane::boundary);  // for finish's wraps_
    if (net_) net_->start_all_ghosts(u);
    if (boxes_.empty()) return;
    {
      HALO3D_NVTX_RANGE("ipc post (every ghost)");
      for (BoxSlot& s : boxes_) s.chan->post(), s.put = false;
    }
    k_.fence(Lane::interior, Lane::boundary);
    k_.pack_boxes(layout_, send_boxes_, u, face_buffer<T>(box_send_), Lane::boundary);
    HALO3D_NVTX_RANGE("ipc send (every ghost)");
    for (std::size_t i = 0; i < boxes_.size(); ++i)
      if (boxes_[i].chan->credit_request().test()) put_box<T>(i);
  }

  template <class T>
  void finish_t(T* u) {
    // The local copies first, as the mpi transport's: no message to wait for.
    if (all_ghosts_) {
      wraps_.all_ghosts(u);
      finish_boxes(u);
    } else {
      wraps_.faces(u, axes_);
      finish_faces(u);
    }
    if (net_) net_->finish(u);
    clean_ = true;
  }

  template <class T>
  void finish_boxes(T* u) {
    if (boxes_.empty()) return;
    {
      HALO3D_NVTX_RANGE("ipc send (late credits, every ghost)");
      for (std::size_t i = 0; i < boxes_.size(); ++i)
        if (!boxes_[i].put) {
          boxes_[i].chan->credit_request().wait();
          put_box<T>(i);
        }
    }
    HALO3D_NVTX_RANGE("ipc wait+unpack (every ghost)");
    // Every neighbour's copy first (the stream waits for each as its notice comes), then
    // one unpack of the inbox slices.
    for (BoxSlot& s : boxes_) s.arrived = false;
    for (std::size_t left = boxes_.size(); left > 0;)
      for (BoxSlot& s : boxes_) {
        if (s.arrived || !s.chan->notice_request().test()) continue;
        s.chan->arrived(stream_);
        s.arrived = true;
        --left;
      }
    for (const auto& [offset, list] : unpacks_)
      k_.unpack_boxes(layout_, list, face_buffer<T>(box_inbox_) + offset, u, Lane::boundary);
    for (BoxSlot& s : boxes_) s.chan->consumed(stream_), s.chan->complete();
  }

  template <class T>
  void finish_faces(T* u) {
    if (!slots_.empty()) {
      {
        HALO3D_NVTX_RANGE("ipc send (late credits)");
        for (Slot& s : slots_)
          if (s.active && !s.put) {
            s.chan->credit_request().wait();
            put<T>(s);
          }
      }
      HALO3D_NVTX_RANGE("ipc wait+unpack");
      std::size_t left = 0;
      for (Slot& s : slots_) s.unpacked = !s.active, left += s.active;
      while (left > 0)
        for (Slot& s : slots_) {
          if (s.unpacked) continue;
          if (!s.chan->notice_request().test()) continue;
          s.chan->arrived(stream_);
          k_.unpack(layout_, s.face.face, reinterpret_cast<const T*>(s.chan->inbox()), u,
                    Lane::boundary);
          s.chan->consumed(stream_);
          s.unpacked = true;
          --left;
        }
      for (Slot& s : slots_)
        if (s.active) s.chan->complete();
    }
  }

  struct Slot {
    HaloFace face;
    std::unique_ptr<ipc::Channel> chan;
    Buffer send;
    bool active = false;  // its axis is in the exchange in flight
    bool put = false, unpacked = false;
  };
  // A neighbour of the one round: its channel, whose inbox is box_inbox_ from `offset`.
  struct BoxSlot {
    HaloBox box;
    std::size_t offset = 0;
    std::unique_ptr<ipc::Channel> chan;
    bool put = false, arrived = false;
  };
  static int code(int axis, int side) { return 2 * axis + side; }
  static constexpr int kBoxCode = 6;  // one-round channels: kBoxCode + dir, after the faces'
  template <class T>
  void put(Slot& s) {
    s.chan->put(s.send.data(), s.face.points * sizeof(T), stream_);
    s.put = true;
  }
  template <class T>
  void put_box(std::size_t i) {
    BoxSlot& s = boxes_[i];
    s.chan->put(face_buffer<T>(box_send_) + send_boxes_.start[i], s.box.points * sizeof(T), stream_,
                sizeof(T));
    s.put = true;
  }
  template <class S>
  void drop_unusable(std::vector<S>& slots) {
    for (auto it = slots.begin(); it != slots.end();)
      if (!it->chan->ok()) {
        unused_.push_back(std::move(it->chan));
        it = slots.erase(it);
      } else {
        ++it;
      }
  }

  Kernels& k_;
  Layout layout_;
  WrapCopies wraps_;          // periodic ghosts whose neighbour is this rank (no channel to itself)
  AxisMask axes_ = kAllAxes;  // of the exchange in flight
  bool all_ghosts_ = false;   // the exchange in flight is start_all_ghosts'
  Comm comm_;                 // a duplicate: the notifications never meet other messages
  cudaStream_t stream_ = nullptr;
  std::vector<Slot> slots_;
  // The one round: the inboxes (one buffer, declared before the channels that export it),
  // its neighbours over ipc, their sub-boxes in that order and the one pack of them, and
  // the unpacks (a start in box_inbox_ and the ghost boxes from there). Buffers sized for
  // doubles; offsets count scalars, so a float exchange packs its slices into the first half.
  Buffer box_inbox_;
  std::vector<BoxSlot> boxes_;
  BoxList send_boxes_;
  Buffer box_send_;
  std::vector<std::pair<std::size_t, BoxList>> unpacks_;
  std::vector<std::unique_ptr<ipc::Channel>> unused_;  // failed to map: no faces, kept for teardown
  std::unique_ptr<HaloTransport> net_;
  std::string describe_;
  bool clean_ = true;
};

}  // namespace
#endif  // HALO3D_HAVE_CUDA

std::unique_ptr<HaloTransport> make_ipc_transport(const TransportContext& c) {
  if (c.k.device() < 0)  // no GPU behind these kernels
    throw Error(kExitUnavailable,
                "--halo ipc: needs --backend cuda (CUDA IPC moves GPU memory; the host backend has "
                "none); use --halo mpi");
#ifdef HALO3D_HAVE_CUDA
  return std::make_unique<IpcTransport>(c);
#else
  throw Error(kExitUnavailable, "--halo ipc: this halo3d was built without CUDA; use --halo mpi");
#endif
}

}  // namespace halo3d
