// The multigrid gather over CUDA IPC (box_gather.hpp): every rank copies its box, as the
// padded Layout it is stored in, into an inbox of every other rank (one ipc::Channel per
// pair, the halo transport's credit/notice protocol, race-free for the same reasons as
// ipc.cpp says), and places each box it receives into its whole grid with a strided
// device copy. The whole grid's ghosts are never written (they stay zero, as the host
// path leaves them), so both paths give the same bits.
#include <algorithm>
#include <cstdio>

#include "box_gather.hpp"
#include "errors.hpp"
#include "nvtx.hpp"
#include "transports/transports.hpp"

#ifdef HALO3D_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "transports/ipc_channel.hpp"
#endif

namespace halo3d {

#ifdef HALO3D_HAVE_CUDA
namespace {

// The interior of `from` (at src) into `to` (at dst) at interior offset o, on stream s.
template <class T>
void copy_box(const Layout& from, const T* src, const Layout& to, const int* o, T* dst,
              cudaStream_t s) {
  if (from.interior_size() == 0) return;
  const std::size_t e = sizeof(T);
  cudaMemcpy3DParms p{};  // pitched pointers, positions and extents in bytes along x
  p.srcPtr = {const_cast<T*>(src), std::size_t(from.sy()) * e, std::size_t(from.sy()) * e,
              std::size_t(from.ny) + 2};
  p.dstPtr = {dst, std::size_t(to.sy()) * e, std::size_t(to.sy()) * e, std::size_t(to.ny) + 2};
  p.srcPos = {Layout::kRowOffset * e, 1, 1};
  p.dstPos = {(o[0] + Layout::kRowOffset) * e, std::size_t(o[1]) + 1, std::size_t(o[2]) + 1};
  p.extent = {from.nx * e, std::size_t(from.ny), std::size_t(from.nz)};
  p.kind = cudaMemcpyDeviceToDevice;
  HALO3D_CUDA_CHECK(cudaMemcpy3DAsync(&p, s));
}

class IpcBoxGather final : public BoxGather {
 public:
  IpcBoxGather(Kernels& k, const std::vector<int>& boxes, const Int3& grid, int rank, Comm comm,
               std::vector<std::unique_ptr<ipc::Channel>> chans)
      : k_(k),
        boxes_(boxes),
        whole_{grid[0], grid[1], grid[2]},
        rank_(rank),
        comm_(std::move(comm)),
        chans_(std::move(chans)) {
    stream_ = static_cast<cudaStream_t>(k_.native_stream(Lane::boundary));
  }
  ~IpcBoxGather() override {
    if (!clean_) return;  // an error mid-gather: the job is being aborted; do not wait
    std::vector<ipc::Channel*> c;
    for (auto& ch : chans_) c.push_back(ch.get());
    try {
      ipc::disconnect(c, k_);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "halo3d: ipc gather teardown: %s\n", e.what());
    }
  }
  void gather(const double* own, double* whole) override { run(own, whole); }
  void gather(const float* own, float* whole) override { run(own, whole); }
  std::string describe() const override { return "ipc"; }

 private:
  template <class T>
  void run(const T* own, T* whole) {
    HALO3D_NVTX_RANGE("multigrid gather (ipc)");
    clean_ = false;
    for (auto& c : chans_) c->post();
    k_.fence(Lane::interior, Lane::boundary);  // `own` is written on the interior lane
    const Layout mine = box_layout(boxes_, rank_);
    copy_box(mine, own, whole_, &boxes_[6 * std::size_t(rank_)], whole, stream_);
    const std::size_t bytes = mine.padded_size() * sizeof(T);
    std::vector<char> done(chans_.size(), 0);
    for (std::size_t i = 0; i < chans_.size(); ++i)  // credits already in: copy at once
      if (chans_[i]->credit_request().test()) chans_[i]->put(own, bytes, stream_), done[i] = 1;
    for (std::size_t i = 0; i < chans_.size(); ++i)
      if (!done[i]) chans_[i]->credit_request().wait(), chans_[i]->put(own, bytes, stream_);
    std::fill(done.begin(), done.end(), 0);
    for (std::size_t left = chans_.size(); left > 0;)
      for (std::size_t i = 0; i < chans_.size(); ++i) {
        ipc::Channel& c = *chans_[i];
        if (done[i] || !c.notice_request().test()) continue;
        c.arrived(stream_);
        copy_box(box_layout(boxes_, c.peer()), reinterpret_cast<const T*>(c.inbox()), whole_,
                 &boxes_[6 * std::size_t(c.peer())], whole, stream_);
        c.consumed(stream_);
        done[i] = 1;
        --left;
      }
    for (auto& c : chans_) c->complete();
    k_.fence(Lane::boundary, Lane::interior);
    clean_ = true;
  }

  Kernels& k_;
  std::vector<int> boxes_;
  Layout whole_;
  int rank_;
  Comm comm_;  // a duplicate: the channels' messages meet no others
  std::vector<std::unique_ptr<ipc::Channel>> chans_;
  cudaStream_t stream_ = nullptr;
  bool clean_ = true;
};

}  // namespace
#endif  // HALO3D_HAVE_CUDA

std::unique_ptr<BoxGather> make_ipc_box_gather(Kernels& k, const std::vector<int>& boxes,
                                               const Int3& grid, MPI_Comm comm,
                                               const HostMap& hosts, const PeerPolicy& peer) {
#ifdef HALO3D_HAVE_CUDA
  int usable = k.device() >= 0 && hosts.hosts.size() == 1 ? 1 : 0;
  HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &usable, 1, MPI_INT, MPI_MIN, comm));
  if (!usable) return nullptr;
  int rank = 0, ranks = 1;
  HALO3D_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  HALO3D_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  MPI_Comm dup = MPI_COMM_NULL;
  HALO3D_MPI_CHECK(MPI_Comm_dup(comm, &dup));
  Comm own(dup);
  std::size_t capacity = 1;  // doubles: the largest padded box (floats use half)
  for (int r = 0; r < ranks; ++r) capacity = std::max(capacity, box_layout(boxes, r).padded_size());
  std::vector<std::unique_ptr<ipc::Channel>> chans;
  std::vector<ipc::Channel*> raw;
  for (int p = 0; p < ranks; ++p) {
    if (p == rank) continue;
    chans.push_back(std::make_unique<ipc::Channel>(k, p, 0, 0, capacity));
    raw.push_back(chans.back().get());
  }
  ipc::connect(raw, own.get(), peer);
  int ok = std::all_of(raw.begin(), raw.end(), [](ipc::Channel* c) { return c->ok(); }) ? 1 : 0;
  HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm));
  if (!ok) {
    ipc::disconnect(raw, k);
    return nullptr;
  }
  return std::make_unique<IpcBoxGather>(k, boxes, grid, rank, std::move(own), std::move(chans));
#else
  (void)k, (void)boxes, (void)grid, (void)comm, (void)hosts, (void)peer;
  return nullptr;
#endif
}

}  // namespace halo3d
