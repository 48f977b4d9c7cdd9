// The all-gather of a grid whose points are spread over the ranks in boxes: every rank
// gives its own box (a padded Layout of it in backend memory) and gets the whole grid (a
// padded Layout of the whole grid, ghosts untouched). Multigrid uses it where the
// hierarchy leaves the process grid, once per V-cycle.
//
// Two ways, the same bits:
//   host  download, MPI_Allgatherv, upload: works everywhere; a host round trip per call
//         (about 1 ms per V-cycle at 512^3 on 2 ranks of an H200, docs/PERFORMANCE.md);
//   ipc   GPU to GPU over CUDA IPC when every rank is on one host and the halo transport
//         is ipc: each rank copies its box into every other rank's inbox (ipc::Channel,
//         the halo transport's protocol), and each places the boxes it received into its
//         whole grid with strided device copies. Nothing passes through host memory.
#pragma once
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "decomposition.hpp"
#include "kernels.hpp"
#include "mpi_env.hpp"

namespace halo3d {

struct PeerPolicy;

class BoxGather {
 public:
  virtual ~BoxGather() = default;
  // own: this rank's box (its Layout), whole: the whole grid; both in backend memory.
  // Queued after the work on Lane::interior before it; work queued on Lane::interior
  // after it sees the whole grid.
  virtual void gather(const double* own, double* whole) = 0;
  virtual void gather(const float* own, float* whole) = 0;
  virtual std::string describe() const = 0;  // "host" or "ipc"
};

// The boxes (offset[3], count[3] per rank, every rank's, in communicator order) of a
// grid of size `grid`. `ipc` asks for the device path (the runtime's transport is ipc); it
// is used when every rank is on one host and every pair of ranks could map each other's
// buffers (agreed collectively), else the host path is. Collective over comm.
std::unique_ptr<BoxGather> make_box_gather(Kernels& k, const std::vector<int>& boxes,
                                           const Int3& grid, MPI_Comm comm, const HostMap& hosts,
                                           const PeerPolicy& peer, bool ipc);

// The device path alone: nullptr (on every rank) when it cannot run here. Collective.
std::unique_ptr<BoxGather> make_ipc_box_gather(Kernels& k, const std::vector<int>& boxes,
                                               const Int3& grid, MPI_Comm comm,
                                               const HostMap& hosts, const PeerPolicy& peer);

// The Layout of rank r's box in `boxes`.
Layout box_layout(const std::vector<int>& boxes, int r);

}  // namespace halo3d
