// Halo transports behind HaloTransport (halo.hpp), and the choice among them.
//
//   mpi       plain MPI; device faces staged through pinned host buffers (halo.cpp)
//   mpi-cuda  device buffers handed to a CUDA-aware MPI (detected at run time)
//   ipc       CUDA IPC between ranks on one host (GPU to GPU copies, no host staging),
//             mpi / mpi-cuda for faces to other hosts: a composite (ipc.cpp)
//   nccl      grouped ncclSend/ncclRecv on the boundary stream (nccl.cpp)
//   auto      the fastest of those possible here, timed at start-up on the real faces
//
// Every "not available" is an Error(kExitUnavailable) decided from data all ranks share
// (all-reduced or all-gathered first), so every rank throws the same one-line error.
#pragma once
#include <mpi.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "halo.hpp"
#include "kernels.hpp"
#include "mpi_env.hpp"

namespace halo3d {

// Whether CUDA peer access may be enabled between different GPUs: `--peer-access off`
// forbids it (to emulate a PCIe box without P2P).
struct PeerPolicy {
  bool allowed = true;
  std::string why_off;  // which switch turned it off, empty when allowed
};
// From --peer-access, the same on every rank.
PeerPolicy peer_policy(PeerAccess option);

struct TransportContext {
  Kernels& k;
  const HaloPlan& plan;
  MPI_Comm comm;  // the Cartesian communicator (its ranks = the HostMap's ranks)
  const HostMap& hosts;
  PeerPolicy peer;
};

// What was asked for, what was built, and (auto) what each candidate took.
struct HaloSelection {
  Transport requested = Transport::auto_, chosen = Transport::auto_;
  std::vector<std::pair<Transport, double>> candidates;    // seconds per exchange
  std::vector<std::pair<Transport, std::string>> skipped;  // why not tried
  std::string reason;                                      // one line, for auto
  std::vector<std::string> details;                        // describe() of every rank (rank 0 only)
};

// Builds the transport `requested` names (auto included). Collective over ctx.comm.
std::unique_ptr<HaloTransport> select_transport(Transport requested, const TransportContext& ctx,
                                                HaloSelection& selection);
// Builds one named transport (not auto). Collective; throws Error(kExitUnavailable).
std::unique_ptr<HaloTransport> make_named_transport(Transport name, const TransportContext& ctx);
// Prints (call on rank 0) what select_transport chose, why, and what ipc detected.
void print_halo_selection(const HaloSelection& s);

// The individual transports (each checks its own preconditions, collectively).
std::unique_ptr<HaloTransport> make_mpi_cuda_transport(const TransportContext& ctx);
std::unique_ptr<HaloTransport> make_ipc_transport(const TransportContext& ctx);
std::unique_ptr<HaloTransport> make_nccl_transport(const TransportContext& ctx);
// mpi-cuda without its checks, for the faces the ipc transport sends over the network.
std::unique_ptr<HaloTransport> make_mpi_cuda_transport_unchecked(Kernels& k, const HaloPlan& plan,
                                                                 MPI_Comm comm);

// True on every rank when every rank's MPI takes device pointers (MPIX_Query_cuda_support
// or MPIX_GPU_query_support at run time). Collective.
bool all_cuda_aware_mpi(MPI_Comm comm);

// Each rank's GPU as (host index, PCI bus id); bus id "" on the host backend. Collective.
struct RankGpu {
  int host = 0;
  std::string bus;
};
std::vector<RankGpu> gather_rank_gpus(Kernels& k, const HostMap& hosts, MPI_Comm comm);
// "" when no two ranks share a GPU, else a description of the first pair that does.
std::string shared_gpu(const std::vector<RankGpu>& g, const HostMap& hosts);

bool nccl_compiled();

// Median of the slowest rank's exchange time (seconds) of transport t on scratch field u:
// `warmup` untimed exchanges, then `reps` timed ones, each after a barrier. Collective.
double time_exchange(HaloTransport& t, Kernels& k, double* u, int warmup, int reps, MPI_Comm comm);

}  // namespace halo3d
