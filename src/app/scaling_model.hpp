// The scaling model of `halo3d probe --model` (docs/SCALING_MODEL.md): MG-PCG time per
// iteration on P GPUs, from the per-level costs measured on one GPU and link parameters.
//
// Per V-cycle level on the busiest rank:
//   compute  = max(bytes per rank / B, kernels x floor)  (B, floor: from the measured levels)
//   halo     = rounds x latency + bytes sent / link bandwidth
//              + launches x floor (a pack and an unpack per face sent, one each for a
//              transfer's one round; six shell sweeps per sweep only on the fine level and
//              on coarse boxes of min_overlap_points)
//   (a transfer's ghost fill is one round to up to 26 neighbours where the machine's halo
//   transport has it, mpi and mpi-cuda; one round per split axis over ipc)
// plus the gather of the coarse levels (--mg-gather rule; over CUDA IPC when every rank is
// on one host, else host staging and an all-gather; then the redundant solve on every
// rank), CG's own vector work, CG's halo exchange and its global sums (each an all-gather
// of 16 B per rank: latency x log2 P + 16 P / bandwidth).
// The hierarchy, the process grid, the boxes and the exchange counts follow the rules of
// Multigrid (mg_level_grids, mg_plan, level_bytes, level_traffic) and choose_procs.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "choices.hpp"
#include "decomposition.hpp"
#include "options.hpp"

namespace halo3d::model {

// One level of a one-GPU `halo3d bench` (its "mg_levels" rows): global grid, bytes moved
// per V-cycle and own milliseconds per V-cycle.
struct LevelCost {
  Int3 grid{};
  double bytes = 0, ms = 0;
};

// What the model is calibrated on: one GPU, one rank.
struct Measurements {
  std::string source, device;
  Int3 grid{};
  double copy_gbs = 0;   // device copy rate measured in the same run (reported only)
  double pcg_ms = 0;     // one MG-PCG iteration
  double vcycle_ms = 0;  // one V-cycle
  double cg_ms = 0;      // one plain CG iteration (reported only)
  std::vector<LevelCost> levels;
  // The levels were timed on today's kernels, so a level's own time may stand for one GPU's
  // (Calibration::measured_levels); false for runs of older code, whose times the model
  // then uses only for its rates (a bench report read in is taken for today's).
  bool current = true;
};

// One H200 (CUDA 13.0), 512^3, `halo3d bench --grid 512,512,512`, one rank.
Measurements default_measurements();
// From a `halo3d bench --report FILE` document (one rank); BadInput naming `what` if a
// field is missing or the bench ran on several ranks.
Measurements measurements_from_bench(const nlohmann::json& bench, const std::string& what);

// A link between two GPUs as MPI sees it: one-way latency per message, bandwidth per
// direction of one GPU, and the latency of one step of a small collective.
// shared_gpu: the ranks share one GPU (MPS): latency is per rank sharing it (it grows with
// their number), and the GPU's bandwidth, for compute and messages, is divided among them.
struct Link {
  std::string name;
  double latency_s = 0, gbytes_per_s = 0, collective_latency_s = 0;
  bool shared_gpu = false;
  std::string what;
};
std::vector<Link> default_links();
const Link& find_link(const std::vector<Link>& links, const std::string& name);
// "NAME=LAT_US,GBPS[,COLLECTIVE_LAT_US]" replaces that link's numbers; BadInput if malformed
// or NAME is not a link.
void apply_link_override(std::vector<Link>& links, const std::string& spec);

// A machine: GPUs on nodes of `gpus_per_node`, `intra` between GPUs of a node, `inter`
// between nodes. `gpus_per_host`: the GPUs one operating system holds (an NVLink domain can
// span hosts); the multigrid gather runs over CUDA IPC only when every rank is on one host
// (BoxGather), so up to this many GPUs.
// `halo`: the transport halo3d runs on it (an assumption: --halo auto picks by timing). The
// transfers' ghost fill is one round to up to 26 neighbours, one pack and one unpack launch,
// on every one of them (HaloTransport::fills_corners_in_one_round); the halo decides whether
// the gather can go over CUDA IPC (BoxGather: only when the halo goes over ipc).
struct System {
  std::string name, intra, inter;
  int gpus_per_node = 8;
  std::string what;
  int gpus_per_host = 8;
  Transport halo = Transport::ipc;
  // > 0: the ranks are CPU cores of one socket (the host backend), sharing its memory, whose
  // rate this is (GB/s, a copy on every core at once). Each rank then moves its bytes at the
  // calibration's one-core rate until the ranks together would pass this: compute is scaled
  // by max(1, ranks x the calibration's copy rate / memory_gbs). No staging through host
  // memory: the fields are there.
  double memory_gbs = 0;
  bool one_host(int ranks) const { return ranks <= gpus_per_host; }
  bool ipc_gather(int ranks) const { return halo == Transport::ipc && one_host(ranks); }
};
std::vector<System> default_systems();  // nvlink, pcie, ib-hdr, ib-ndr
System shared_gpu_system();             // mps-shared-gpu: every rank on one GPU
// host-cores: every rank a core of the 16-core socket of the lent GPU machines (Intel Xeon,
// 2026-12-06), halo over mpi (shared memory), the host's --mg-gather (4096).
System host_cores_system();
// `halo3d bench --backend host --grid 256,256,256` on one core of that machine (session 43).
Measurements host_measurements();

struct Params {
  long long gather_points = kGpuMgGather;
  int smooth = 2;              // --mg-smooth
  int sums_per_iteration = 3;  // PCG: p.Ap, r.r, r.z
  int cg_kernels = 4;          // CG's own launches per iteration
  int shell_kernels = 6;       // a sweep with overlap: the boundary shell's launches
  // A coarse level overlaps (and launches the shell) only from this many points per rank
  // (multigrid.cpp's kMinOverlapPoints); below, a sweep is one launch. The fine level is
  // the solver's operator: it always overlaps (--overlap, on by default).
  double min_overlap_points = double(1 << 21);
  double staging_latency_s = 10e-6, staging_gbytes_per_s = 20;  // device <-> host copies
};

// The numbers the model takes from the measurements.
struct Calibration {
  Measurements m;
  double bandwidth_gbs = 0;  // bytes / time of the bandwidth-bound levels
  double floor_s = 0;        // one launch, median over the launch-bound levels
  double cg_s = 0;           // CG's work per iteration at m.grid (pcg - vcycle)
  // A measured level's own time stands for a level of its grid on one GPU (false when the
  // floor is replaced, or the measurements ran older kernels: then every level takes the
  // formula).
  bool measured_levels = true;
};
Calibration calibrate(const Measurements& m, const Params& p);

// Seconds per iteration, by term.
struct Terms {
  double compute = 0, halo_latency = 0, halo_bandwidth = 0, gather = 0, sums = 0;
  double halo_launches = 0;  // the part of halo_latency spent launching pack/unpack/shells
  double total() const { return compute + halo_latency + halo_bandwidth + gather + sums; }
};
struct LevelPrediction {
  Int3 grid{}, box{};
  bool distributed = true, gathers = false;
  bool overlapped = false;  // its sweeps launch the boundary shell (distributed levels)
  std::string gather_path;  // on the gathering level: "ipc" or "host"
  int exchanges = 0;        // rounds of messages, each waiting for the one before
  double faces_sent = 0;    // the faces they send, in whole face exchanges (each face once)
  double face_bytes = 0;    // per whole face exchange, busiest rank
  // Per V-cycle, each the most any rank sends (as bench's "msgs" and "halo B":
  // Multigrid::level_traffic): face exchanges and the transfers' one rounds.
  double messages = 0, halo_bytes = 0;
  Terms t;
};
struct Prediction {
  Int3 grid{}, procs{};
  int ranks = 1;
  std::vector<LevelPrediction> levels;
  Terms vcycle, cg;  // the V-cycle's share of an iteration and CG's
  // Backend memory of the rank that needs the most, as `solve --dry-run` counts it for
  // MG-PCG in double (solve_memory: the source, the solution, CG's five vectors and
  // mg_memory_bytes of the hierarchy, on the padded boxes).
  double memory_gb = 0;
  Terms total() const;
  double iteration_s() const { return total().total(); }
  // The largest non-compute term: "coarse levels (latency)", "halo bandwidth", "gather",
  // "global sums"; "-" on one rank.
  std::string limit() const;
};
Prediction predict(const Calibration& c, const std::vector<Link>& links, const System& s,
                   const Int3& grid, int ranks, const Params& p);

// The global grid of a weak-scaling run: `per_gpu` points on each of the ranks, the
// process grid's factors along the axes halo3d would give them.
Int3 weak_grid(const Int3& per_gpu, int ranks);

}  // namespace halo3d::model
