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
// and run on every rank (docs/PERFORMANCE.md measures the choice).
constexpr long long kDefaultMgGather = 262144;  // 64^3

}  // namespace halo3d
