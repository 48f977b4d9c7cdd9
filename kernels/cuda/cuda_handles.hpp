// Move-only owners of CUDA streams, events and allocations, so that every exit path,
// including exceptions thrown half-way through construction, releases them.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "cuda_check.hpp"

namespace halo3d::cuda {

template <class Handle, class Traits>
class Owned {
 public:
  Owned() = default;
  explicit Owned(Handle h) : h_(h) {}
  Owned(Owned&& o) noexcept : h_(std::exchange(o.h_, Handle{})) {}
  Owned& operator=(Owned&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, Handle{});
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { reset(); }

  Handle get() const { return h_; }
  // Gives up ownership (for memory handed to a caller that frees it explicitly).
  Handle release() noexcept { return std::exchange(h_, Handle{}); }
  explicit operator bool() const { return h_ != Handle{}; }
  void reset() noexcept {
    if (h_ != Handle{}) Traits::release(h_);
    h_ = Handle{};
  }

 private:
  Handle h_{};
};

struct StreamTraits {
  static void release(cudaStream_t s) noexcept { HALO3D_CUDA_CHECK_NOTHROW(cudaStreamDestroy(s)); }
};
struct EventTraits {
  static void release(cudaEvent_t e) noexcept { HALO3D_CUDA_CHECK_NOTHROW(cudaEventDestroy(e)); }
};
struct DeviceMemoryTraits {
  static void release(void* p) noexcept { HALO3D_CUDA_CHECK_NOTHROW(cudaFree(p)); }
};
struct PinnedMemoryTraits {
  static void release(void* p) noexcept { HALO3D_CUDA_CHECK_NOTHROW(cudaFreeHost(p)); }
};

struct GraphTraits {
  static void release(cudaGraph_t g) noexcept { HALO3D_CUDA_CHECK_NOTHROW(cudaGraphDestroy(g)); }
};
struct GraphExecTraits {
  static void release(cudaGraphExec_t g) noexcept {
    HALO3D_CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(g));
  }
};

using Stream = Owned<cudaStream_t, StreamTraits>;
using Graph = Owned<cudaGraph_t, GraphTraits>;
using GraphExec = Owned<cudaGraphExec_t, GraphExecTraits>;
using Event = Owned<cudaEvent_t, EventTraits>;
using DeviceMemory = Owned<void*, DeviceMemoryTraits>;
using PinnedMemory = Owned<void*, PinnedMemoryTraits>;

// Non-blocking, so neither lane serialises against the legacy default stream (which
// libraries such as MPI's CUDA support may use).
inline Stream make_stream(int priority) {
  cudaStream_t s = nullptr;
  HALO3D_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority));
  return Stream(s);
}

inline Event make_event(bool timing) {
  cudaEvent_t e = nullptr;
  HALO3D_CUDA_CHECK(
      cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
  return Event(e);
}

inline DeviceMemory make_device_memory(std::size_t bytes) {
  void* p = nullptr;
  HALO3D_CUDA_CHECK(cudaMalloc(&p, bytes));
  return DeviceMemory(p);
}

// Mapped, so kernels can write results straight into it (no separate copy).
inline PinnedMemory make_pinned_memory(std::size_t bytes) {
  void* p = nullptr;
  HALO3D_CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  return PinnedMemory(p);
}

}  // namespace halo3d::cuda
