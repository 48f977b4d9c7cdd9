// How a run is spread over ranks and devices, as the library takes it.
#pragma once
#include "choices.hpp"
#include "decomposition.hpp"

namespace halo3d {

// How a run is spread over ranks and devices: set by solve and bench alike (and copied
// into the runtime's options).
struct ParallelOptions {
  Int3 procs{0, 0, 0};
  Backend backend = Backend::auto_;
  Transport halo = Transport::auto_;
  PeerAccess peer_access = PeerAccess::auto_;
  OverlapMode overlap = OverlapMode::auto_;
};

// Multigrid coarse levels of at most this many points leave the process grid: gathered
// and run on every rank (--mg-gather). The default depends on where the kernels run
// (docs/PERFORMANCE.md measures both): a GPU runs a 64^3 level in a fraction of one
// exchange round's latency, while CPU cores share their node's memory bandwidth, so every
// rank's redundant copy of a large gathered level costs as if it were not parallel at all
// (16 ranks on 16 cores at 256^3: the V-cycle 61.7 ms with 64^3, 44.2 ms with 16^3).
constexpr long long kMgGatherAuto = -1;     // the backend's default, below
constexpr long long kGpuMgGather = 262144;  // 64^3
constexpr long long kHostMgGather = 4096;   // 16^3
inline long long mg_gather_points(long long requested, bool gpu) {
  return requested >= 0 ? requested : gpu ? kGpuMgGather : kHostMgGather;
}

}  // namespace halo3d
