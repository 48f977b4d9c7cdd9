#include "scaling_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "checks.hpp"
#include "errors.hpp"
#include "multigrid.hpp"

namespace halo3d::model {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kCoarseReduction = 1e-3;  // as multigrid.cpp's coarsest solve
constexpr int kCoarseMaxSteps = 100;
constexpr double kSumBytes = 16;  // one double-double partial per rank per sum

double points_of(const Int3& g) { return double(g[0]) * g[1] * g[2]; }

// The points of a box's padded Layout (kernels/layout.hpp: rows of nx + 5 rounded up to 4,
// a ghost layer on y and z): what the IPC gather copies.
double padded_points_of(const Int3& b) {
  return double((b[0] + 8) / 4 * 4) * (b[1] + 2) * (b[2] + 2);
}

// Chebyshev steps of the coarsest solve on an n grid (the 7-point Laplacian there, as
// multigrid.cpp's coarse_steps): a reduction of every mode by kCoarseReduction.
int coarse_step_count(const Int3& n) {
  double lo = 0, hi = 0;
  for (int a = 0; a < 3; ++a) {
    const double c = double(n[a] + 1) * (n[a] + 1), cs = std::cos(kPi / (n[a] + 1));
    lo += 2 * c * (1 - cs);
    hi += 2 * c * (1 + cs);
  }
  const double kappa = hi / lo;
  if (kappa <= 1 + 1e-12) return 1;
  const double per_step = std::acosh((kappa + 1) / (kappa - 1));
  return std::clamp(int(std::ceil(std::acosh(1 / kCoarseReduction) / per_step)), 1,
                    kCoarseMaxSteps);
}

// Multigrid::smooth_bytes for `count` Chebyshev steps (each after the first reads a
// direction) with constant coefficients.
double smooth_bytes(int count, bool from_zero) {
  std::vector<std::array<double, 2>> steps(std::size_t(std::max(count, 1)), {1.0, 1.0});
  steps[0][0] = 0;
  return Multigrid::smooth_bytes(steps, from_zero);
}

// Multigrid::level_bytes for one level of `points`, the next of `next_points`.
double level_bytes(double points, double next_points, int smooth, bool coarsest, int steps) {
  if (coarsest) return points * smooth_bytes(steps, true);
  return points * (smooth_bytes(smooth, true) + smooth_bytes(smooth, false) + 48) +
         16 * next_points;
}

// Where the coarsest level of g is solved exactly (mg_dense_level: it has at most
// kMgDensePoints points; a one-point level, whose Chebyshev solve was one step, too).
bool dense(bool coarsest, const Int3& g) { return coarsest && points_of(g) <= kMgDensePoints; }

int level_launches(const Params& p, bool coarsest, const Int3& g) {
  // A level visit: the smoothing steps down from zero (the first two in one sweep) and up,
  // residual, restriction and prolongation; the coarsest level's steps from zero, or its
  // one dense solve.
  auto from_zero = [](int steps) { return steps >= 2 ? steps - 1 : steps; };
  if (dense(coarsest, g)) return 1;
  return coarsest ? from_zero(coarse_step_count(g)) : from_zero(p.smooth) + p.smooth + 3;
}

}  // namespace

Calibration calibrate(const Measurements& m, const Params& p) {
  if (m.levels.empty()) throw BadInput("model: no multigrid levels measured");
  Calibration c;
  c.m = m;
  c.measured_levels = m.current;
  double best = 0;
  for (const LevelCost& l : m.levels)
    if (l.ms > 0) best = std::max(best, l.bytes / (l.ms * 1e-3));
  double bytes = 0, seconds = 0;
  std::vector<double> per_launch;
  for (std::size_t i = 0; i < m.levels.size(); ++i) {
    const LevelCost& l = m.levels[i];
    if (!(l.ms > 0)) continue;
    const double rate = l.bytes / (l.ms * 1e-3);
    if (rate >= 0.5 * best) bytes += l.bytes, seconds += l.ms * 1e-3;
    const bool coarsest = i + 1 == m.levels.size();
    if (rate < 0.1 * best) per_launch.push_back(l.ms * 1e-3 / level_launches(p, coarsest, l.grid));
  }
  if (!(seconds > 0)) throw BadInput("model: no multigrid level has a measured time");
  c.bandwidth_gbs = bytes / seconds / 1e9;
  if (per_launch.empty()) {  // no level is launch-bound: the smallest level's launches
    const LevelCost& l = m.levels.back();
    per_launch.push_back(l.ms * 1e-3 / level_launches(p, true, l.grid));
  }
  std::sort(per_launch.begin(), per_launch.end());
  const std::size_t n = per_launch.size();
  c.floor_s = n % 2 ? per_launch[n / 2] : 0.5 * (per_launch[n / 2 - 1] + per_launch[n / 2]);
  c.cg_s = (m.pcg_ms > m.vcycle_ms ? m.pcg_ms - m.vcycle_ms : m.cg_ms) * 1e-3;
  return c;
}

Terms Prediction::total() const {
  Terms t = cg;
  t.compute += vcycle.compute;
  t.halo_latency += vcycle.halo_latency;
  t.halo_bandwidth += vcycle.halo_bandwidth;
  t.gather += vcycle.gather;
  t.sums += vcycle.sums;
  t.halo_launches += vcycle.halo_launches;
  return t;
}

std::string Prediction::limit() const {
  const Terms t = total();
  const std::pair<double, const char*> terms[] = {{t.halo_latency, "coarse levels (latency)"},
                                                  {t.halo_bandwidth, "halo bandwidth"},
                                                  {t.gather, "gather"},
                                                  {t.sums, "global sums"}};
  double most = 0;
  const char* name = "-";
  for (const auto& [v, n] : terms)
    if (v > most) most = v, name = n;
  return name;
}

namespace {

// Every rank's box on one level: offset and count of each coordinate along each axis.
struct Boxes {
  std::vector<int> offset[3], count[3];
  Int3 largest() const {
    Int3 b{};
    for (int a = 0; a < 3; ++a) b[a] = *std::max_element(count[a].begin(), count[a].end());
    return b;
  }
  int fewest() const {
    int f = std::numeric_limits<int>::max();
    for (int a = 0; a < 3; ++a)
      f = std::min(f, *std::min_element(count[a].begin(), count[a].end()));
    return f;
  }
};

Boxes fine_boxes(const Int3& grid, const Int3& procs) {
  Boxes b;
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < procs[a]; ++c) {
      const Span s = split_axis(grid[a], procs[a], c, odd_splits(grid[a], false));
      b.offset[a].push_back(s.offset);
      b.count[a].push_back(s.count);
    }
  return b;
}

Boxes coarser_boxes(const Boxes& f, const Int3& nf, const Int3& nc) {
  Boxes b;
  for (int a = 0; a < 3; ++a)
    for (std::size_t c = 0; c < f.offset[a].size(); ++c) {
      const int o = mg_coarse_first(f.offset[a][c], nf[a], nc[a], false);
      b.offset[a].push_back(o);
      b.count[a].push_back(mg_coarse_first(f.offset[a][c] + f.count[a][c], nf[a], nc[a], false) -
                           o);
    }
  return b;
}

// One link as a rank sees it: latency and bandwidth with the sharing applied.
struct Wire {
  double latency = 0, bandwidth = 0, collective_latency = 0;
};
Wire wire(const Link& l, int ranks) {
  const double share = l.shared_gpu ? ranks : 1;
  return {l.latency_s * share, l.gbytes_per_s * 1e9 / share, l.collective_latency_s};
}

// What the model needs besides the calibration, for one configuration.
struct Setup {
  const Calibration& c;
  const Params& p;
  Wire intra, inter;
  int gpus_per_node = 1, ranks = 1;
  bool shared = false;
  bool ipc_gather = false;  // every rank on one host, halo over ipc: the gather goes GPU to GPU
  Int3 procs{};
  // What divides a rank's compute bandwidth: the ranks sharing one GPU, or those sharing one
  // socket's memory beyond what their cores draw alone (System::memory_gbs); else 1.
  double share = 1;
  bool host = false;  // CPU ranks: no staging through host memory
  const Wire& slowest() const { return ranks > gpus_per_node ? inter : intra; }
};

// One exchange of the rank at process coordinates `c` on boxes `b`: (latency, bandwidth)
// seconds, bytes and messages. Kind::faces: a sweep's, every face with the ghost rim of the
// two other axes, 8 (n_a + 2)(n_b + 2) B; Kind::around: a transfer's one round, to
// every neighbour of HaloPlan::around (faces of n_a n_b points, edges of n_a, corners of 1).
// Messages to GPUs of the rank's own node take the intra-node link, the others the
// inter-node one; the two classes go together, so the exchange takes the slower.
struct Exchange {
  double latency = 0, bandwidth = 0, bytes = 0;
  int faces = 0;  // messages
};
enum class Kind { faces, around };
Exchange rank_exchange(const Setup& s, const Boxes& b, const Int3& c, Kind kind) {
  const Int3& p = s.procs;
  const int rank = c[0] + p[0] * (c[1] + p[1] * c[2]);
  const int n[3] = {b.count[0][c[0]], b.count[1][c[1]], b.count[2][c[2]]};
  const int rim = kind == Kind::faces ? 2 : 0;
  double bytes[2] = {0, 0};  // intra, inter
  Exchange e;
  for (int dir = 0; dir < 27; ++dir) {
    const int d[3] = {dir % 3 - 1, dir / 3 % 3 - 1, dir / 9 - 1};
    const int away = (d[0] != 0) + (d[1] != 0) + (d[2] != 0);
    if (away == 0 || (kind == Kind::faces && away > 1)) continue;
    const Int3 nb{c[0] + d[0], c[1] + d[1], c[2] + d[2]};
    if (nb[0] < 0 || nb[0] >= p[0] || nb[1] < 0 || nb[1] >= p[1] || nb[2] < 0 || nb[2] >= p[2])
      continue;
    const int other = nb[0] + p[0] * (nb[1] + p[1] * nb[2]);
    double points = 1;
    for (int a = 0; a < 3; ++a) points *= d[a] ? 1.0 : double(n[a] + rim);
    bytes[rank / s.gpus_per_node == other / s.gpus_per_node ? 0 : 1] += 8 * points;
    e.bytes += 8 * points;
    ++e.faces;
  }
  const Wire* w[2] = {&s.intra, &s.inter};
  double worst = -1;
  for (int k = 0; k < 2; ++k) {
    if (bytes[k] == 0) continue;
    const double t = w[k]->latency + bytes[k] / w[k]->bandwidth;
    if (t > worst) worst = t, e.latency = w[k]->latency, e.bandwidth = bytes[k] / w[k]->bandwidth;
  }
  return e;
}

// The rank whose exchange takes longest (on a tie, the one sending more messages).
Exchange busiest_exchange(const Setup& s, const Boxes& b, Kind kind = Kind::faces) {
  Exchange worst;
  for (int z = 0; z < s.procs[2]; ++z)
    for (int y = 0; y < s.procs[1]; ++y)
      for (int x = 0; x < s.procs[0]; ++x) {
        const Exchange e = rank_exchange(s, b, {x, y, z}, kind);
        if (e.latency + e.bandwidth > worst.latency + worst.bandwidth ||
            (e.latency + e.bandwidth == worst.latency + worst.bandwidth && e.faces > worst.faces))
          worst = e;
      }
  return worst;
}

// A level visit's messages and bytes (`sweeps` face exchanges, `transfers` ghost fills),
// each the most any rank sends, as bench reports Multigrid::level_traffic.
void level_traffic(const Setup& s, const Boxes& b, int sweeps, int transfers,
                   LevelPrediction& out) {
  for (int z = 0; z < s.procs[2]; ++z)
    for (int y = 0; y < s.procs[1]; ++y)
      for (int x = 0; x < s.procs[0]; ++x) {
        const Exchange f = rank_exchange(s, b, {x, y, z}, Kind::faces);
        const Exchange t = rank_exchange(s, b, {x, y, z}, Kind::around);
        out.messages =
            std::max(out.messages, double(sweeps) * f.faces + double(transfers) * t.faces);
        out.halo_bytes = std::max(out.halo_bytes, sweeps * f.bytes + transfers * t.bytes);
      }
}

// Compute seconds of `bytes` per rank in `launches` launches; a measured level of the same
// grid on one GPU gives its time directly when this is that level's whole work.
double compute_s(const Setup& s, double bytes, int launches, const Int3& whole, bool whole_work) {
  const double moved = s.share * bytes / (s.c.bandwidth_gbs * 1e9);
  if (whole_work && s.c.measured_levels)
    for (const LevelCost& l : s.c.m.levels)
      if (l.grid == whole) return s.share > 1 ? std::max(l.ms * 1e-3, moved) : l.ms * 1e-3;
  return std::max(moved, launches * s.c.floor_s);
}

// The halo terms of `rounds` rounds that send `sent` whole exchanges' worth of `e`, with
// `launches` launches (packs, unpacks, shells) at the floor.
void add_halo(const Setup& s, const Exchange& e, int rounds, double sent, double launches,
              Terms& t) {
  t.halo_latency += rounds * e.latency + launches * s.c.floor_s;
  t.halo_launches += launches * s.c.floor_s;
  t.halo_bandwidth += sent * e.bandwidth;
}

// The gather below a level over CUDA IPC (ipc_gather.cpp; every rank on one host): one
// round of credit and notice messages (the link's latency once: the channels to the P-1
// other ranks go together, as a halo round's faces do); this rank's padded box (`padded`
// points) put into each of the other P-1 ranks' inboxes, one copy after the other on one
// stream, over the link; and P strided device copies placing every box (its own and the
// P-1 received) into the whole coarse level of `points`, each point read and written once
// at the device's bandwidth (shared by the ranks on a shared GPU). Every copy is a launch.
double ipc_gather_s(const Setup& s, double points, double padded) {
  const Wire& w = s.intra;
  const double launches = 2.0 * (s.ranks - 1) + 1;
  return w.latency + launches * s.c.floor_s + (s.ranks - 1) * 8 * padded / w.bandwidth +
         s.share * 16 * points / (s.c.bandwidth_gbs * 1e9);
}

// The gather below a level through host memory (box_gather.cpp's host path, used across
// hosts): its coarse points (the next level's `points`, this rank's own `local` of them)
// staged down, all-gathered through host memory, and the whole coarse level staged up
// (the correction is interpolated on the device, with no copy back). Ranks sharing a GPU
// stage concurrently (small copies on a full-duplex link), so staging is not multiplied
// by them.
double host_gather_s(const Setup& s, double points, double local) {
  const double staging =
      s.host ? 0
             : 2 * s.p.staging_latency_s + 8 * (points + local) / (s.p.staging_gbytes_per_s * 1e9);
  const Wire& w = s.slowest();
  const double bw = std::min(s.p.staging_gbytes_per_s * 1e9, w.bandwidth);
  const double steps = std::ceil(std::log2(double(s.ranks)));
  return staging + steps * w.collective_latency + (s.ranks - 1.0) / s.ranks * 8 * points / bw;
}

struct Level {
  Int3 grid{};
  Boxes boxes;
  bool distributed = true;
};

// The hierarchy as mg_plan builds it: boxes while every rank owns points and the level has
// more than gather_points points; from there on gathered.
std::vector<Level> plan_levels(const Setup& s, const Int3& grid) {
  std::vector<Level> out;
  const std::vector<Int3> grids = mg_level_grids(grid, 0);
  for (const Int3& g : grids) {
    Level L;
    L.grid = g;
    if (out.empty()) {
      L.boxes = fine_boxes(g, s.procs);
    } else if (out.back().distributed) {
      L.boxes = coarser_boxes(out.back().boxes, out.back().grid, g);
      L.distributed =
          s.ranks == 1 || (L.boxes.fewest() >= 1 && points_of(g) > double(s.p.gather_points) &&
                           !mg_dense_level(out.size(), grids.size(), g));
    } else {
      L.distributed = false;
    }
    out.push_back(std::move(L));
  }
  return out;
}

LevelPrediction predict_level(const Setup& s, const std::vector<Level>& plan, std::size_t l) {
  const Level& L = plan[l];
  const bool coarsest = l + 1 == plan.size();
  LevelPrediction out;
  out.grid = L.grid;
  out.distributed = L.distributed;
  out.gathers = L.distributed && !coarsest && !plan[l + 1].distributed;
  out.box = L.distributed ? L.boxes.largest() : L.grid;
  double next = 0;
  if (!coarsest)
    next = plan[l + 1].distributed ? points_of(plan[l + 1].boxes.largest())
                                   : points_of(plan[l + 1].grid);
  const int steps = coarsest ? coarse_step_count(L.grid) : s.p.smooth;
  const double n = points_of(L.grid);  // a dense solve reads its inverse, b and x
  const double bytes = dense(coarsest, L.grid)
                           ? 8 * n * n + 16 * n
                           : level_bytes(points_of(out.box), next, s.p.smooth, coarsest, steps);
  const bool whole = !L.distributed || s.ranks == 1;
  out.t.compute = compute_s(s, bytes, level_launches(s.p, coarsest, L.grid), L.grid, whole);
  if (L.distributed && s.ranks > 1) {
    const int sweeps = coarsest ? steps - 1 : 2 * s.p.smooth;
    // Below min_overlap_points a coarse level's sweep is one launch over the whole box
    // (Multigrid's make_operator); the fine level overlaps whatever its size.
    out.overlapped = l == 0 || points_of(out.box) >= s.p.min_overlap_points;
    // The transfers: w before the restriction (gathering levels too), e before prolongation
    // (unless the level above gathers, which makes this one gathered: not here). Their ghost
    // fill (DistributedOperator::exchange) is one round to every neighbour, with one pack and
    // one unpack launch (mpi, mpi-cuda and ipc alike).
    const int transfers = int(!coarsest) + int(l > 0);
    const int shells = s.p.shell_kernels * (out.overlapped ? sweeps : 0);
    const Exchange e = busiest_exchange(s, L.boxes);
    out.face_bytes = e.bytes;
    level_traffic(s, L.boxes, sweeps, transfers, out);
    out.exchanges = sweeps + transfers;
    out.faces_sent = sweeps;
    add_halo(s, e, sweeps, sweeps, 2.0 * e.faces * sweeps + shells, out.t);
    add_halo(s, busiest_exchange(s, L.boxes, Kind::around), transfers, transfers, 2.0 * transfers,
             out.t);
  }
  if (out.gathers) {
    const Int3 own = coarser_boxes(L.boxes, L.grid, plan[l + 1].grid).largest();
    const double whole = points_of(plan[l + 1].grid);
    out.gather_path = s.ipc_gather ? "ipc" : "host";
    out.t.gather = s.ipc_gather ? ipc_gather_s(s, whole, padded_points_of(own))
                                : host_gather_s(s, whole, points_of(own));
  }
  return out;
}

// The backend memory of the rank that needs the most, as `solve --dry-run` counts it for
// MG-PCG in double (solve_memory, src/app/plan.cpp): 6 fields on the padded fine box (the
// source and CG's five vectors: x, r, p, A p, z) and mg_memory_bytes of this rank's boxes.
double memory_bytes(const Setup& s, const std::vector<Level>& plan) {
  double most = 0;
  std::vector<MgLevelPlan> mine(plan.size());
  for (int z = 0; z < s.procs[2]; ++z)
    for (int y = 0; y < s.procs[1]; ++y)
      for (int x = 0; x < s.procs[0]; ++x) {
        const int c[3] = {x, y, z};
        for (std::size_t l = 0; l < plan.size(); ++l) {
          MgLevelPlan& q = mine[l];
          q.grid = plan[l].grid;
          q.distributed = plan[l].distributed;
          q.decomp = Decomposition::whole(q.grid);
          if (!q.distributed) continue;
          for (int a = 0; a < 3; ++a)
            q.decomp.offset[a] = plan[l].boxes.offset[a][c[a]],
            q.decomp.count[a] = plan[l].boxes.count[a][c[a]];
        }
        const double fine = 8.0 * double(mine[0].decomp.layout().padded_size());
        most = std::max(most, 6 * fine + mg_memory_bytes(mine));
      }
  return most;
}

}  // namespace

Prediction predict(const Calibration& c, const std::vector<Link>& links, const System& sys,
                   const Int3& grid, int ranks, const Params& p) {
  const Link& intra = find_link(links, sys.intra);
  Setup s{c,
          p,
          wire(intra, ranks),
          wire(find_link(links, sys.inter), ranks),
          sys.gpus_per_node,
          ranks,
          intra.shared_gpu,
          sys.ipc_gather(ranks),
          choose_procs(grid, ranks, {0, 0, 0})};
  s.host = sys.memory_gbs > 0;
  s.share = s.shared ? ranks : s.host ? std::max(1.0, ranks * c.m.copy_gbs / sys.memory_gbs) : 1;
  Prediction out;
  out.grid = grid;
  out.procs = s.procs;
  out.ranks = ranks;
  const std::vector<Level> plan = plan_levels(s, grid);
  for (std::size_t l = 0; l < plan.size(); ++l) {
    out.levels.push_back(predict_level(s, plan, l));
    const Terms& t = out.levels.back().t;
    out.vcycle.compute += t.compute;
    out.vcycle.halo_latency += t.halo_latency;
    out.vcycle.halo_bandwidth += t.halo_bandwidth;
    out.vcycle.gather += t.gather;
    out.vcycle.halo_launches += t.halo_launches;
  }
  // CG: its vector work (scaled from the measured grid), one exchange (A p), the sums.
  const double local = points_of(out.levels[0].box);
  out.cg.compute =
      std::max(s.share * c.cg_s * local / points_of(c.m.grid), p.cg_kernels * c.floor_s);
  if (ranks > 1) {
    const Exchange e = busiest_exchange(s, plan[0].boxes);
    add_halo(s, e, 1, 1.0, 2.0 * e.faces + s.p.shell_kernels, out.cg);
    const Wire& w = s.slowest();
    const double one = std::ceil(std::log2(double(ranks))) * w.collective_latency +
                       kSumBytes * (ranks - 1) / w.bandwidth;
    out.cg.sums = p.sums_per_iteration * one;
  }
  out.memory_gb = memory_bytes(s, plan) / 1e9;
  return out;
}

Int3 weak_grid(const Int3& per_gpu, int ranks) {
  int dims[3] = {0, 0, 0};
  HALO3D_MPI_CHECK(MPI_Dims_create(ranks, 3, dims));
  std::sort(dims, dims + 3);  // the largest factor on z (halo3d splits z first on a tie)
  return {per_gpu[0] * dims[0], per_gpu[1] * dims[1], per_gpu[2] * dims[2]};
}

}  // namespace halo3d::model
