#include "transports/ipc_channel.hpp"
#ifdef HALO3D_HAVE_CUDA

#include <strings.h>

#include <cstring>
#include <stdexcept>

#include "errors.hpp"

namespace halo3d::ipc {
namespace {

// Message tags (a channel's code, 0-32, is added: each kind keeps its 100).
constexpr int kSetup = 7100, kStatus = 7200, kCredit = 7300, kNotice = 7400, kBye = 7500,
              kClosed = 7600;

void clear_error() { (void)cudaGetLastError(); }

std::string error_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

}  // namespace

DeviceGuard::DeviceGuard(int device) {
  HALO3D_CUDA_CHECK(cudaGetDevice(&saved_));
  if (device != saved_) HALO3D_CUDA_CHECK(cudaSetDevice(device));
}
DeviceGuard::~DeviceGuard() {
  int now = -1;
  if (cudaGetDevice(&now) == cudaSuccess && now != saved_)
    HALO3D_CUDA_CHECK_NOTHROW(cudaSetDevice(saved_));
}

std::string bus_id_of(int device) {
  char bus[32] = {};
  HALO3D_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
  return bus;
}

int device_by_bus_id(const std::string& bus) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return clear_error(), -1;
  for (int d = 0; d < n; ++d) {
    char b[32] = {};
    if (cudaDeviceGetPCIBusId(b, sizeof b, d) != cudaSuccess) {
      clear_error();
      continue;
    }
    if (strcasecmp(b, bus.c_str()) == 0) return d;
  }
  return -1;
}

Channel::Channel(Kernels& k, int peer, int my_code, int peer_code, std::size_t capacity,
                 Buffer* shared, std::size_t offset)
    : k_(k),
      peer_(peer),
      my_code_(my_code),
      peer_code_(peer_code),
      capacity_(capacity),
      device_(k.device()) {
  // Its own cudaMalloc, so the IPC handle covers exactly this buffer from its base; or a
  // slice of the caller's (its own cudaMalloc too: the handle is of its base).
  if (shared) {
    if (offset + capacity_ > shared->size())
      throw std::logic_error("ipc::Channel: the inbox slice runs past the shared buffer");
    inbox_base_ = shared->data();
    inbox_offset_ = offset;
  } else {
    inbox_ = Buffer(k_, capacity_, Memory::device);
    inbox_base_ = inbox_.data();
  }
  inbox_ptr_ = const_cast<double*>(inbox_base_) + inbox_offset_;
  auto ipc_event = [] {
    cudaEvent_t e = nullptr;
    HALO3D_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventInterprocess | cudaEventDisableTiming));
    return cuda::Event(e);
  };
  consumed_ = ipc_event();
  arrived_ = ipc_event();
}

Channel::~Channel() {
  // Only an error path leaves requests pending (the job aborts then): ~Request releases
  // them without waiting.
  release_mapping();
}

void Channel::release_mapping() noexcept {
  peer_consumed_.reset();
  peer_arrived_.reset();
  if (peer_mapping_) {
    int saved = -1;
    if (cudaGetDevice(&saved) == cudaSuccess) {
      if (saved != peer_inbox_device_) HALO3D_CUDA_CHECK_NOTHROW(cudaSetDevice(peer_inbox_device_));
      HALO3D_CUDA_CHECK_NOTHROW(cudaIpcCloseMemHandle(peer_mapping_));
      if (saved != peer_inbox_device_) HALO3D_CUDA_CHECK_NOTHROW(cudaSetDevice(saved));
    }
    peer_mapping_ = nullptr;
  }
}

Channel::Record Channel::record() const {
  Record r{};
  std::snprintf(r.bus, sizeof r.bus, "%s", bus_id_of(device_).c_str());
  HALO3D_CUDA_CHECK(cudaIpcGetMemHandle(&r.inbox, const_cast<double*>(inbox_base_)));
  HALO3D_CUDA_CHECK(cudaIpcGetEventHandle(&r.consumed, consumed_.get()));
  HALO3D_CUDA_CHECK(cudaIpcGetEventHandle(&r.arrived, arrived_.get()));
  r.capacity = capacity_;
  r.offset = inbox_offset_;
  return r;
}

// Maps the neighbour's inbox and events. Where the two GPUs differ:
//  - peer access possible and allowed: enable it, map into our own context (P2P copies);
//  - otherwise, if the neighbour's GPU is visible here: map it in that GPU's context
//    (the memory is local there, no peer access needed) and copy with
//    cudaMemcpyPeerAsync, which the driver stages through host memory;
//  - the neighbour's GPU not visible: map with lazy peer access if allowed, else fail.
bool Channel::open(const Record& peer, const PeerPolicy& policy) {
  const std::string my_bus = bus_id_of(device_), peer_bus = peer.bus;
  peer_capacity_ = peer.capacity;
  peer_device_ = device_by_bus_id(peer_bus);
  int open_on = device_;
  if (strcasecmp(my_bus.c_str(), peer_bus.c_str()) == 0) {
    copy_ = Copy::same_device;
    how_ = "same GPU " + my_bus + ": CUDA IPC, device-to-device copies";
  } else if (peer_device_ >= 0) {
    int can = 0;
    HALO3D_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, device_, peer_device_));
    const std::string pair = "GPU " + my_bus + " -> GPU " + peer_bus + ": ";
    if (can && policy.allowed) {
      const cudaError_t e = cudaDeviceEnablePeerAccess(peer_device_, 0);
      if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) {
        clear_error();
        how_ = pair + "cudaDeviceEnablePeerAccess failed (" + error_text(e) + ")";
        return false;
      }
      clear_error();
      copy_ = Copy::direct;
      how_ = pair + "peer access enabled, CUDA IPC with P2P copies";
    } else {
      copy_ = Copy::peer_staged;
      open_on = peer_device_;
      how_ = pair +
             (can ? "peer access possible but switched off (" + policy.why_off + ")"
                  : std::string("no peer access (cudaDeviceCanAccessPeer = 0)")) +
             ", CUDA IPC with copies staged through host by the driver";
    }
  } else if (policy.allowed) {
    copy_ = Copy::direct;
    how_ = "GPU " + my_bus + " -> GPU " + peer_bus +
           " (not visible to this process): CUDA IPC with lazy peer access";
  } else {
    how_ = "GPU " + peer_bus + " is not visible to this process and peer access is off (" +
           policy.why_off + ")";
    return false;
  }
  DeviceGuard guard(open_on);
  // The only flag the API accepts; where the memory is opened in its own GPU's context
  // (peer_staged) there is no peer to enable, so it changes nothing there.
  // A handle this process has opened already (another slice of the same buffer) gives the
  // same pointer again, its count raised: each channel closes its own opening.
  cudaError_t e = cudaIpcOpenMemHandle(&peer_mapping_, peer.inbox, cudaIpcMemLazyEnablePeerAccess);
  if (e != cudaSuccess) {
    clear_error();
    peer_mapping_ = nullptr;
    how_ += "; cudaIpcOpenMemHandle failed (" + error_text(e) + ")";
    return false;
  }
  peer_inbox_device_ = open_on;
  peer_offset_ = peer.offset;
  cudaEvent_t ev = nullptr;
  for (auto [handle, into] :
       {std::pair{peer.consumed, &peer_consumed_}, std::pair{peer.arrived, &peer_arrived_}}) {
    e = cudaIpcOpenEventHandle(&ev, handle);
    if (e != cudaSuccess) {
      clear_error();
      how_ += "; cudaIpcOpenEventHandle failed (" + error_text(e) + ")";
      return false;
    }
    *into = cuda::Event(ev);
  }
  return true;
}

void Channel::check(std::uint64_t got, std::uint64_t want, const char* what, int peer) {
  if (got != want)
    throw Error(kExitFailure,
                std::string("ipc transport: protocol error: ") + what + " from rank " +
                    std::to_string(peer) + " is for exchange " + std::to_string(got) +
                    ", expected " + std::to_string(want),
                false);
}

void Channel::post() {
  ++seq_;
  HALO3D_MPI_CHECK(MPI_Irecv(&credit_in_, 1, MPI_UINT64_T, peer_, kCredit + peer_code_, comm_,
                             credit_rx_.for_recv()));
  HALO3D_MPI_CHECK(MPI_Irecv(&notice_in_, 1, MPI_UINT64_T, peer_, kNotice + peer_code_, comm_,
                             notice_rx_.for_recv()));
  credit_out_ = seq_;
  HALO3D_MPI_CHECK(MPI_Isend(&credit_out_, 1, MPI_UINT64_T, peer_, kCredit + my_code_, comm_,
                             credit_tx_.for_send()));
}

void Channel::put(const void* src, std::size_t bytes, cudaStream_t s, std::size_t scalar_bytes) {
  check(credit_in_, seq_, "credit", peer_);
  if (bytes > peer_capacity_ * sizeof(double))
    throw Error(kExitFailure,
                "ipc transport: " + std::to_string(bytes) + " bytes do not fit rank " +
                    std::to_string(peer_) + "'s buffer of " + std::to_string(peer_capacity_) +
                    " doubles",
                false);
  void* dst = static_cast<char*>(peer_mapping_) + peer_offset_ * scalar_bytes;
  // The neighbour's last read of its inbox, recorded before it sent this credit.
  HALO3D_CUDA_CHECK(cudaStreamWaitEvent(s, peer_consumed_.get(), 0));
  if (copy_ == Copy::peer_staged)
    HALO3D_CUDA_CHECK(cudaMemcpyPeerAsync(dst, peer_device_, src, device_, bytes, s));
  else
    HALO3D_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));
  HALO3D_CUDA_CHECK(cudaEventRecord(arrived_.get(), s));
  // Sent only once the record is made, so the neighbour's wait sees this record.
  notice_out_ = seq_;
  HALO3D_MPI_CHECK(MPI_Isend(&notice_out_, 1, MPI_UINT64_T, peer_, kNotice + my_code_, comm_,
                             notice_tx_.for_send()));
}

void Channel::arrived(cudaStream_t s) {
  check(notice_in_, seq_, "notice", peer_);
  HALO3D_CUDA_CHECK(cudaStreamWaitEvent(s, peer_arrived_.get(), 0));
}

void Channel::consumed(cudaStream_t s) { HALO3D_CUDA_CHECK(cudaEventRecord(consumed_.get(), s)); }

void Channel::complete() {
  credit_tx_.wait();
  notice_tx_.wait();
}

void connect(const std::vector<Channel*>& chans, MPI_Comm comm, const PeerPolicy& policy) {
  const std::size_t n = chans.size();
  std::vector<Channel::Record> mine(n), theirs(n);
  std::vector<Request> req;
  req.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    Channel& c = *chans[i];
    c.comm_ = comm;
    mine[i] = c.record();
    HALO3D_MPI_CHECK(MPI_Irecv(&theirs[i], int(sizeof(Channel::Record)), MPI_BYTE, c.peer_,
                               kSetup + c.peer_code_, comm, req.emplace_back().for_recv()));
    HALO3D_MPI_CHECK(MPI_Isend(&mine[i], int(sizeof(Channel::Record)), MPI_BYTE, c.peer_,
                               kSetup + c.my_code_, comm, req.emplace_back().for_send()));
  }
  wait_all(req);
  req.clear();
  // Each end maps the other's handles, then both learn whether the other end succeeded:
  // a channel is used only when both did.
  std::vector<int> ok(n), peer_ok(n);
  for (std::size_t i = 0; i < n; ++i) ok[i] = chans[i]->open(theirs[i], policy) ? 1 : 0;
  for (std::size_t i = 0; i < n; ++i) {
    Channel& c = *chans[i];
    HALO3D_MPI_CHECK(MPI_Irecv(&peer_ok[i], 1, MPI_INT, c.peer_, kStatus + c.peer_code_, comm,
                               req.emplace_back().for_recv()));
    HALO3D_MPI_CHECK(MPI_Isend(&ok[i], 1, MPI_INT, c.peer_, kStatus + c.my_code_, comm,
                               req.emplace_back().for_send()));
  }
  wait_all(req);
  for (std::size_t i = 0; i < n; ++i) {
    Channel& c = *chans[i];
    c.ok_ = ok[i] && peer_ok[i];
    if (ok[i] && !peer_ok[i])
      c.how_ += "; but rank " + std::to_string(c.peer_) + " could not map this rank's buffers";
    if (!c.ok_) c.release_mapping();
  }
}

void disconnect(const std::vector<Channel*>& chans, Kernels& k) {
  // A one-int handshake with the peer of each channel (only the usable ones, or all).
  auto handshake = [&](int tag, bool only_usable) {
    std::vector<int> out(chans.size()), in(chans.size());
    std::vector<Request> req;
    for (std::size_t i = 0; i < chans.size(); ++i) {
      Channel& c = *chans[i];
      if (c.comm_ == MPI_COMM_NULL || (only_usable && !c.ok_)) continue;
      HALO3D_MPI_CHECK(MPI_Irecv(&in[i], 1, MPI_INT, c.peer_, tag + c.peer_code_, c.comm_,
                                 req.emplace_back().for_recv()));
      HALO3D_MPI_CHECK(MPI_Isend(&out[i], 1, MPI_INT, c.peer_, tag + c.my_code_, c.comm_,
                                 req.emplace_back().for_send()));
    }
    wait_all(req);
  };
  // 1. After our synchronize, none of our copies into a neighbour's inbox and none of our
  //    streams' waits on its events is pending; after its bye, none of its on ours.
  k.synchronize();
  handshake(kBye, true);
  // 2. Close what we imported; after the neighbour's "closed", nothing of ours is mapped
  //    elsewhere, so our inbox and events may be freed (freeing exported memory that
  //    another process still maps is undefined behaviour).
  for (Channel* c : chans) c->release_mapping();
  handshake(kClosed, false);
}

}  // namespace halo3d::ipc
#endif  // HALO3D_HAVE_CUDA
