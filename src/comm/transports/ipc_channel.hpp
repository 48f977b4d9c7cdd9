// One CUDA-IPC channel between this rank and a neighbour on the same host, both ways:
// this rank's receive buffer (the inbox, which the neighbour writes into), the
// neighbour's inbox mapped here (which this rank writes into), and four IPC events.
// Used by the ipc transport (one channel per face) and by `halo3d probe` (per pair).
//
// Protocol of one exchange, on both ends (race-free; see ipc.cpp for the whole story):
//   post()      Irecv the neighbour's credit and notice; Isend our credit ("my inbox is
//               free once my `consumed` event, recorded after my last read of it, fires")
//   put()       after the neighbour's credit arrived: the stream waits for the
//               neighbour's `consumed`, copies into its inbox, records our `arrived`,
//               then Isend the notice ("`arrived` is recorded")
//   arrived()   after the neighbour's notice arrived: the stream waits for its `arrived`
//   consumed()  records our `consumed` after we have read our inbox
//   complete()  waits for our two sends
// Every message carries the exchange number and is checked, so a protocol slip is an
// error, not silent corruption. Nothing is outstanding between exchanges.
#pragma once
#ifdef HALO3D_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cuda/cuda_handles.hpp"
#include "kernels.hpp"
#include "transports/transports.hpp"

namespace halo3d::ipc {

// Sets the current device for a scope and restores the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int saved_ = -1;
};

// The ordinal, in this process, of the GPU with this PCI bus id; -1 if not visible.
int device_by_bus_id(const std::string& bus);
std::string bus_id_of(int device);

class Channel {
 public:
  // The local half: allocates the inbox (capacity doubles) and our two IPC events.
  // my_code/peer_code tell this channel's messages apart from others between the same
  // two ranks (the ipc transport uses the face code of each end). With `shared`, the inbox
  // is instead its slice from `offset` (in scalars of the exchange: doubles or floats, see
  // put()), so that one launch can unpack the inboxes of several channels (the ipc
  // transport's one round); the neighbour maps the whole buffer (one handle, counted per
  // opening) and writes at the offset.
  Channel(Kernels& k, int peer, int my_code, int peer_code, std::size_t capacity,
          Buffer* shared = nullptr, std::size_t offset = 0);
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  int peer() const { return peer_; }
  bool ok() const { return ok_; }                  // both ends mapped each other: usable
  const std::string& how() const { return how_; }  // what was detected and used
  double* inbox() { return inbox_ptr_; }           // a double exchange's inbox (floats: its start)
  std::size_t capacity() const { return capacity_; }

  void post();
  Request& credit_request() { return credit_rx_; }
  Request& notice_request() { return notice_rx_; }
  // Copies into the neighbour's inbox. A slice of a shared buffer starts at its offset in
  // units of the exchange's scalar (`scalar_bytes`), so that the slices of one exchange in
  // floats are as contiguous as in doubles.
  void put(const void* src, std::size_t bytes, cudaStream_t s,
           std::size_t scalar_bytes = sizeof(double));
  void arrived(cudaStream_t s);
  void consumed(cudaStream_t s);
  void complete();

 private:
  friend void connect(const std::vector<Channel*>& chans, MPI_Comm comm, const PeerPolicy& policy);
  friend void disconnect(const std::vector<Channel*>& chans, Kernels& k);

  struct Record {
    char bus[32];
    cudaIpcMemHandle_t inbox;
    cudaIpcEventHandle_t consumed, arrived;
    std::uint64_t capacity, offset;  // doubles: the inbox, from the handle's base
  };
  Record record() const;
  bool open(const Record& peer, const PeerPolicy& policy);  // false: how_ says why
  void release_mapping() noexcept;
  static void check(std::uint64_t got, std::uint64_t want, const char* what, int peer);

  enum class Copy { same_device, direct, peer_staged };

  Kernels& k_;
  int peer_, my_code_, peer_code_;
  std::size_t capacity_;
  int device_;  // ours
  MPI_Comm comm_ = MPI_COMM_NULL;
  Buffer inbox_;                        // its own, unless the inbox is a slice of a shared buffer
  const double* inbox_base_ = nullptr;  // the allocation the exported handle covers
  double* inbox_ptr_ = nullptr;         // the inbox itself (of a double exchange)
  std::size_t inbox_offset_ = 0;        // scalars from inbox_base_
  cuda::Event consumed_, arrived_;      // ours, exported
  cuda::Event peer_consumed_, peer_arrived_;  // the neighbour's, imported
  void* peer_mapping_ = nullptr;              // the neighbour's exported buffer, mapped here
  std::size_t peer_offset_ = 0;               // its inbox's start in it, in scalars
  int peer_inbox_device_ = -1;                // the device it was opened on
  int peer_device_ = -1;  // the neighbour's GPU in this process, -1 if not visible
  std::size_t peer_capacity_ = 0;
  Copy copy_ = Copy::same_device;
  bool ok_ = false;
  std::string how_;
  std::uint64_t seq_ = 0;
  std::uint64_t credit_in_ = 0, notice_in_ = 0, credit_out_ = 0, notice_out_ = 0;
  // Declared after the buffers they point into, so released before those go.
  Request credit_rx_, notice_rx_, credit_tx_, notice_tx_;
};

// Connects channels: exchanges the handles, maps them, and agrees per channel whether
// both ends succeeded. Each channel's two ranks must both call it (with any other
// channels, in any order: all messages are non-blocking). Channels that fail stay
// unusable (ok() false) and their faces go elsewhere.
void connect(const std::vector<Channel*>& chans, MPI_Comm comm, const PeerPolicy& policy);
// Clean teardown before destruction (of every channel passed to connect(), usable or
// not): waits for this rank's GPU work, a "bye" with each peer, closes the imported
// handles, then a "closed" with each peer, so nobody frees memory or events that the
// other may still use or map.
void disconnect(const std::vector<Channel*>& chans, Kernels& k);

}  // namespace halo3d::ipc
#endif  // HALO3D_HAVE_CUDA
