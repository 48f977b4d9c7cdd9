// What solve and bench both set up: host map, backend, decomposition, transport, operator.
#pragma once
#include <mpi.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "build_info.hpp"
#include "coefficients.hpp"
#include "decomposition.hpp"
#include "host_copy.hpp"
#include "kernels.hpp"
#include "mpi_env.hpp"
#include "operator.hpp"
#include "parallel_options.hpp"
#include "timers.hpp"
#include "transports/transports.hpp"

namespace halo3d {

// Bytes a run will allocate on this rank beyond the runtime's own: in backend memory
// (the device; host RAM on the host backend) and in host RAM.
struct MemoryNeed {
  double device = 0, host = 0;
};
// The halo buffers' share of MemoryNeed for one operator: the transports' message buffers
// (send and receive, in host memory, staged on the device too where it is remote), and the
// periodic wraps' local copies (backend memory).
MemoryNeed halo_memory(const HaloPlan& plan, bool device_is_remote);

struct RuntimeOptions : ParallelOptions {
  Int3 grid{};
  // Axes whose ghosts wrap (periodic boundaries): the decomposition's (Decomposition::periodic).
  // From --bc (ProblemSpec::periodic); the multigrid hierarchy takes it (mg_plan).
  Periodic periodic{};
  // The Neumann faces (neumann_mask; ProblemSpec::bc): Decomposition::neumann, and the fine
  // level's face weights' factors. A Neumann face needs kappa (the variable path, k = 1 too).
  int neumann = 0;
  Stencil stencil;
  // What the run will allocate, asked once the decomposition and the backend exist (gpu:
  // the kernels run on a GPU; collective over the Cartesian communicator); checked against
  // free memory before anything large is allocated. Unset: no check.
  std::function<MemoryNeed(const Decomposition&, MPI_Comm cart, bool gpu)> memory;
  // A variable coefficient (coefficients.hpp): k over this rank's padded box, every ghost
  // filled (collective over the Cartesian communicator). Unset: the stencil's constant one.
  std::function<std::vector<double>(const Decomposition&, MPI_Comm cart)> kappa;
  // With kappa, a variable shift: sigma the same way. Unset: the stencil's constant shift.
  std::function<std::vector<double>(const Decomposition&, MPI_Comm cart)> sigma;
};

// The parallel settings solve, bench and the tests share, from any options struct that has them.
template <class Options>
RuntimeOptions runtime_options(const Options& o, const Stencil& stencil) {
  RuntimeOptions ro;
  static_cast<ParallelOptions&>(ro) = o;
  ro.grid = o.grid;
  ro.stencil = stencil;
  return ro;
}

struct Runtime {
  HostMap hosts;
  Comm cart;
  Decomposition decomp;
  std::unique_ptr<Kernels> kernels;
  // The fine operator's variable coefficients (null: constant), lent to its stencil.
  std::unique_ptr<LevelCoefficients> coefficients;
  Timers timers;
  std::unique_ptr<DistributedOperator> op;
  std::string warnings;          // printed once by rank 0
  int gpu = -1;                  // device ordinal bound to this rank, -1 on the host backend
  HaloSelection halo_selection;  // what --halo asked for and what was built (auto: timings)
  PeerPolicy peer;               // what coarser grids' transports may use too
  std::string overlap_choice;    // --overlap auto: what was measured and chosen ("" otherwise)
  // The memory check's count (RuntimeOptions::memory plus the halo buffers) and, on a GPU,
  // the device memory free when it was made: a report can set what the run then holds
  // against the count (device_bytes_used).
  MemoryNeed planned;
  double device_free_at_check = -1;
  bool planned_checked = false;  // whether `planned` was made and checked
  // What the kernels had allocated then (their backend memory: bytes and allocations).
  Kernels::MemoryUse counted_at_check;
};

// Device bytes this rank's run holds now beyond what was free at the memory check (-1 on
// the host backend or without a check), from the driver: what the kernels' count cannot
// see shows here (a library's workspace). Ranks sharing a GPU see each other's allocations.
double device_bytes_used(const Runtime& rt);
// Backend memory (the device's, host RAM on the host backend) allocated through the
// kernels since the memory check: held now, and the most held at once (the figure the
// plan counts: set-up's transient buffers included). -1 without a check.
struct CountedMemory {
  double held = -1, peak = -1;
  long long buffers = -1;  // allocations held (the GPU's allocator rounds each up)
};
CountedMemory counted_memory(const Runtime& rt);

// Whether --backend `backend` runs on GPUs when the rank that sees the fewest sees
// `min_visible`: cuda always (make_kernels refuses it where it cannot), auto where CUDA is
// compiled in and every rank sees a GPU (one rank on the host would mix backends).
bool picks_cuda(Backend backend, int min_visible);
// The fewest GPUs any rank of comm sees, each seeing `visible` (collective).
int fewest_gpus(int visible, MPI_Comm comm);

// The backend part of make_runtime (also used by probe): --backend, GPU bound by
// node-local rank. Collective over world.
std::unique_ptr<Kernels> make_kernels(Backend backend, const HostMap& hosts, MPI_Comm world,
                                      int& gpu, std::string& warnings);

// Whether a CUDA MPS control daemon serves this process: its control pipe (or socket) exists in
// $CUDA_MPS_PIPE_DIRECTORY (default /tmp/nvidia-mps), where CUDA clients look for it.
bool cuda_mps_running();
// The start-up line for `ranks` ranks sharing `gpus` GPUs of one host ("" when none share):
// without MPS their contexts time-slice each GPU, which costs several times the run time.
std::string shared_gpu_warning(int ranks, int gpus, bool mps);

// Picks the backend (--backend auto: cuda when compiled and a GPU is visible), binds a
// GPU by node-local rank, decomposes, builds the halo transport and the operator.
// Throws BadInput / Error(kExitUnavailable) collectively.
std::unique_ptr<Runtime> make_runtime(const RuntimeOptions& o, MPI_Comm world);

// An operator with stencil s on box d, with its own halo transport: of the kind the
// runtime's fine operator uses when `distributed` (collective over the Cartesian
// communicator), none when d is a whole grid held by every rank (`distributed` false);
// overlapped as the runtime's operator is, unless `overlap` is false.
// Multigrid levels and implicit time steps make their operators here.
std::unique_ptr<DistributedOperator> make_operator(Runtime& rt, const Decomposition& d,
                                                   const Stencil& s, bool distributed = true,
                                                   bool overlap = true);

}  // namespace halo3d
