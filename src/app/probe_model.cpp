// halo3d probe --model: the scaling model's tables (docs/SCALING_MODEL.md). Rank 0 computes
// and prints; nothing is measured, no GPU is needed.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "app.hpp"
#include "checks.hpp"
#include "errors.hpp"
#include "files.hpp"
#include "mpi_env.hpp"
#include "runtime.hpp"
#include "scaling_model.hpp"

namespace halo3d {
namespace {

using nlohmann::json;
using namespace model;

const int kGpuCounts[] = {1, 2, 8, 64, 512, 4096};
constexpr double kGpuMemoryGb = 141;  // H200; an H100 has 80

// One series: weak (`size` points per GPU) or strong (`size` points in all).
struct Series {
  std::string name;
  bool weak = true;
  Int3 size{};
};

std::vector<Series> series_of(const ProbeOptions& o) {
  std::vector<Series> s = {{"weak-512", true, {512, 512, 512}},
                           {"weak-256", true, {256, 256, 256}},
                           {"strong-1024", false, {1024, 1024, 1024}},
                           {"strong-2048", false, {2048, 2048, 2048}}};
  if (o.grid[0] > 0) s.push_back({"strong-" + to_string(o.grid), false, o.grid});
  return s;
}

// A measured point on one H200 shared by `ranks` ranks under MPS (--halo ipc): solve time of
// `iters` MG-PCG iterations of a `n`^3 random right-hand side to 1e-8 with --mg-gather
// `gather`. Round 2 of bench/gpu_mg_scaling.sh (2026-12-04, the code of 16f7e0b: the IPC
// gather, one face per round, coarse overlap from 2M points): at the default gather the
// mean of two interleaved runs, at the larger gathers one run each; 256^3 on 1 rank at
// e57a10d (a one-rank solve has no exchange, gather or shell: its path did not change, and
// 512^3 on 1 rank measured 86.6 ms at both).
struct MeasuredSolve {
  int n, ranks, iters;
  long long gather;
  double solve_ms;
};
const MeasuredSolve kMeasured[] = {
    {512, 1, 7, 262144, 86.55},  {512, 2, 7, 262144, 98.8},  {512, 4, 7, 262144, 103.45},
    {512, 8, 7, 262144, 131.85}, {512, 2, 7, 2097152, 98.6}, {512, 4, 7, 2097152, 101.9},
    {512, 8, 7, 2097152, 127.8}, {512, 2, 7, 8388608, 99.2}, {512, 4, 7, 8388608, 105.2},
    {512, 8, 7, 8388608, 133.4}, {256, 1, 7, 262144, 12.6},  {256, 4, 7, 262144, 24.9},
    {256, 4, 7, 2097152, 22.2},  {256, 4, 7, 8388608, 25.0}};
constexpr long long kMeasuredGather = 262144;
// `halo3d bench --grid 512,512,512` (--mg-gather 262144) on 2 (1,1,2) and 8 (2,2,2) ranks
// under MPS, same round: the own ms of levels 0-3 (level 3 gathers, over IPC), the
// gathered levels 4-11 together, the V-cycle and one MG-PCG iteration.
struct MeasuredBench {
  int ranks;
  double levels[4], gathered, vcycle, pcg;
};
const MeasuredBench kMeasuredBench[] = {{2, {8.42, 2.46, 0.577, 0.345}, 0.499, 12.30, 15.91},
                                        {8, {9.92, 3.68, 1.68, 1.80}, 0.723, 17.85, 21.51}};

// The report's form of one prediction (docs/SCALING_MODEL.md lists the fields).
json terms_json(const Terms& t) {
  return {{"compute_ms", t.compute * 1e3},
          {"halo_latency_ms", t.halo_latency * 1e3},
          {"halo_launches_ms", t.halo_launches * 1e3},
          {"halo_bandwidth_ms", t.halo_bandwidth * 1e3},
          {"gather_ms", t.gather * 1e3},
          {"global_sums_ms", t.sums * 1e3},
          {"total_ms", t.total() * 1e3}};
}

json to_json(const Prediction& p) {
  json levels = json::array();
  for (const LevelPrediction& l : p.levels)
    levels.push_back({{"grid", l.grid},
                      {"box", l.box},
                      {"distributed", l.distributed},
                      {"gathers", l.gathers},
                      {"overlapped", l.overlapped},
                      {"gather_path", l.gathers ? json(l.gather_path) : json()},
                      {"exchanges", l.exchanges},
                      {"messages", l.messages},
                      {"halo_bytes", l.halo_bytes},
                      {"face_bytes_per_exchange", l.face_bytes},
                      {"faces_sent_in_exchanges", l.faces_sent},
                      {"terms", terms_json(l.t)}});
  return {{"gpus", p.ranks},
          {"grid", p.grid},
          {"procs", p.procs},
          {"ms_per_iteration", p.iteration_s() * 1e3},
          {"terms", terms_json(p.total())},
          {"vcycle", terms_json(p.vcycle)},
          {"cg", terms_json(p.cg)},
          {"limited_by", p.limit()},
          {"memory_gb_per_gpu", p.memory_gb},
          {"levels", levels}};
}

Measurements load_measurements(const ProbeOptions& o) {
  if (o.model_bench.empty()) return default_measurements();
  const std::string shown = printable(o.model_bench);
  std::ifstream in(o.model_bench);
  if (!in) throw BadInput("--model-bench " + shown + ": cannot read the file");
  std::stringstream text;
  text << in.rdbuf();
  json j;
  try {
    j = json::parse(text.str());
  } catch (const json::exception&) {
    throw BadInput("--model-bench " + shown + ": not JSON");
  }
  Measurements m = measurements_from_bench(j, "--model-bench " + shown);
  m.source = "bench report " + shown;
  return m;
}

std::string ms(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", s * 1e3);
  return b;
}

void print_header(const Calibration& c, const std::vector<Link>& links, const Params& p) {
  const Measurements& m = c.m;
  std::printf("halo3d probe --model %s: MG-PCG per iteration on P GPUs (docs/SCALING_MODEL.md)\n",
              version_string().c_str());
  std::printf("inputs: %s (%s), grid %s: MG-PCG iteration %.3f ms, V-cycle %.3f ms, %zu levels\n",
              m.source.c_str(), m.device.c_str(), to_string(m.grid).c_str(), m.pcg_ms, m.vcycle_ms,
              m.levels.size());
  std::printf(
      "calibration: bandwidth-bound levels %.0f GB/s (copy %.0f), launch floor %.2f us, CG "
      "work %.3f ms; %d global sums per iteration, --mg-gather %lld\n",
      c.bandwidth_gbs, m.copy_gbs, c.floor_s * 1e6, c.cg_s * 1e3, p.sums_per_iteration,
      p.gather_points);
  std::printf("links (override: --model-link NAME=LAT_US,GBPS[,COLLECTIVE_LAT_US]):\n");
  for (const Link& l : links)
    std::printf("  %-15s %7.2f us %8.1f GB/s  collective step %6.2f us  %s\n", l.name.c_str(),
                l.latency_s * 1e6, l.gbytes_per_s, l.collective_latency_s * 1e6, l.what.c_str());
}

void print_row(const std::string& system, const Prediction& p, double eff, const char* note) {
  const Terms t = p.total();
  char e[16] = "      -";
  if (eff > 0) std::snprintf(e, sizeof e, "%6.1f%%", eff * 100);
  std::printf("%-15s %5d %-10s %10s %7s %9s %9s %9s %9s %9s  %s%s\n", system.c_str(), p.ranks,
              to_string(p.procs).c_str(), ms(p.iteration_s()).c_str(), e, ms(t.compute).c_str(),
              ms(t.halo_latency).c_str(), ms(t.halo_bandwidth).c_str(), ms(t.gather).c_str(),
              ms(t.sums).c_str(), p.limit().c_str(), note);
}

// One series on one system: every GPU count, its efficiency against the first that fits.
json run_series(const Calibration& c, const std::vector<Link>& links, const System& sys,
                const Series& se, const Params& p) {
  json rows = json::array();
  double base_s = 0;
  int base_p = 0;
  for (int gpus : kGpuCounts) {
    const Int3 grid = se.weak ? weak_grid(se.size, gpus) : se.size;
    Prediction pr;
    try {
      pr = predict(c, links, sys, grid, gpus, p);
    } catch (const BadInput&) {
      continue;  // more ranks than the grid can be split over
    }
    const bool fits = pr.memory_gb <= kGpuMemoryGb;
    if (fits && base_p == 0) base_s = pr.iteration_s(), base_p = gpus;
    const double eff = !fits || base_p == 0 ? 0
                       : se.weak            ? base_s / pr.iteration_s()
                                            : base_s * base_p / (pr.iteration_s() * gpus);
    print_row(sys.name, pr, eff, fits ? "" : " (does not fit)");
    json r = to_json(pr);
    r["efficiency"] = eff > 0 ? json(eff) : json(nullptr);
    r["fits"] = fits;
    rows.push_back(r);
  }
  return rows;
}

json all_series(const ProbeOptions& o, const Calibration& c, const std::vector<Link>& links,
                const Params& p) {
  json out = json::array();
  for (const Series& se : series_of(o)) {
    std::printf("\n%s: %s %s; efficiency %s; ms per iteration\n", se.name.c_str(),
                se.weak ? "weak scaling," : "strong scaling, grid", to_string(se.size).c_str(),
                se.weak ? "points per GPU = T(1) / T(P)"
                        : "= T(P0) P0 / (T(P) P), P0 the fewest GPUs it fits (141 GB)");
    std::printf("%-15s %5s %-10s %10s %7s %9s %9s %9s %9s %9s  %s\n", "system", "GPUs", "procs",
                "ms/iter", "eff", "compute", "halo-lat", "halo-bw", "gather", "sums", "limited by");
    for (const System& sys : default_systems())
      out.push_back({{"series", se.name},
                     {"weak", se.weak},
                     {"size", se.size},
                     {"system", sys.name},
                     {"rows", run_series(c, links, sys, se, p)}});
  }
  return out;
}

// The model against the points measured on one H200 shared under MPS.
// Each prediction takes the --mg-gather the measurement ran with, whatever the option says.
json held_against(const Calibration& c, const std::vector<Link>& links, Params p) {
  const System sys = shared_gpu_system();
  if (c.m.source != default_measurements().source)
    std::printf("\n(the measurements below are of one H200; the model's inputs here are %s)",
                c.m.source.c_str());
  // The runs predate three changes the model follows: the transfers' one round over ipc,
  // the first step's halving of even axes and the first two smoothing steps in one sweep.
  // Said once, so no row passes for a like-for-like.
  std::printf(
      "\n(measured at 16f7e0b: ipc filled the transfers' ghosts one split axis per round, "
      "512^3 coarsened 512 -> 341 -> 170 -> 113, and smoothing from zero took two passes; the "
      "model predicts today's code: one round, 512 -> 255 -> 127 -> 63, one pass)");
  std::printf(
      "\nheld against measurements (one H200 shared by the ranks under MPS, link "
      "mps-shared-gpu; solve = iterations x ms/iter):\n%-12s %5s %-6s %8s %9s %11s %9s %8s "
      "%9s %9s\n",
      "grid", "ranks", "procs", "gather", "ms/iter", "solve pred", "measured", "error", "T/T1 pred",
      "T/T1 meas");
  json out = json::array();
  double t1_pred = 0, t1_meas = 0;
  for (const MeasuredSolve& m : kMeasured) {
    p.gather_points = m.gather;
    const Prediction pr = predict(c, links, sys, {m.n, m.n, m.n}, m.ranks, p);
    const double pred = pr.iteration_s() * 1e3 * m.iters;
    if (m.ranks == 1) t1_pred = pred, t1_meas = m.solve_ms;
    const double err = pred / m.solve_ms - 1;
    std::printf("%-12s %5d %-6s %8lld %9.3f %11.1f %9.1f %+7.1f%% %9.2f %9.2f  %s\n",
                to_string(pr.grid).c_str(), m.ranks, to_string(pr.procs).c_str(), m.gather,
                pr.iteration_s() * 1e3, pred, m.solve_ms, err * 100, pred / t1_pred,
                m.solve_ms / t1_meas, pr.limit().c_str());
    out.push_back({{"grid", pr.grid},
                   {"ranks", m.ranks},
                   {"mg_gather", m.gather},
                   {"iterations", m.iters},
                   {"predicted_solve_ms", pred},
                   {"measured_solve_ms", m.solve_ms},
                   {"relative_error", err},
                   {"predicted_ratio_to_1_rank", pred / t1_pred},
                   {"measured_ratio_to_1_rank", m.solve_ms / t1_meas},
                   {"limited_by", pr.limit()},
                   {"prediction", to_json(pr)}});
  }
  return out;
}

// The benches' level tables against the model's levels.
json held_against_levels(const Calibration& c, const std::vector<Link>& links, Params p) {
  p.gather_points = kMeasuredGather;
  json out = json::array();
  for (const MeasuredBench& m : kMeasuredBench) {
    const Prediction pr = predict(c, links, shared_gpu_system(), {512, 512, 512}, m.ranks, p);
    std::printf(
        "\n%d ranks on one H200 (%s), 512^3, --mg-gather %lld, per V-cycle: level, predicted "
        "ms, measured ms (its levels 1-3 were 341^3, 170^3, 113^3)\n",
        m.ranks, to_string(pr.procs).c_str(), kMeasuredGather);
    json rows = json::array();
    double rest = 0;
    for (std::size_t l = 0; l < pr.levels.size(); ++l) {
      const double pred = pr.levels[l].t.total() * 1e3;
      if (l >= 4) {
        rest += pred;
        continue;
      }
      std::printf("  level %zu %-12s %8.3f %8.3f\n", l, to_string(pr.levels[l].grid).c_str(), pred,
                  m.levels[l]);
      rows.push_back({{"level", l}, {"predicted_ms", pred}, {"measured_ms", m.levels[l]}});
    }
    std::printf("  levels 4+ %-11s %8.3f %8.3f\n", "(gathered)", rest, m.gathered);
    std::printf("  V-cycle %-13s %8.3f %8.3f\n  MG-PCG iteration %-4s %8.3f %8.3f\n", "",
                pr.vcycle.total() * 1e3, m.vcycle, "", pr.iteration_s() * 1e3, m.pcg);
    rows.push_back({{"level", "4+"}, {"predicted_ms", rest}, {"measured_ms", m.gathered}});
    rows.push_back({{"level", "vcycle"},
                    {"predicted_ms", pr.vcycle.total() * 1e3},
                    {"measured_ms", m.vcycle}});
    rows.push_back({{"level", "mg_pcg_iteration"},
                    {"predicted_ms", pr.iteration_s() * 1e3},
                    {"measured_ms", m.pcg}});
    out.push_back({{"ranks", m.ranks}, {"procs", pr.procs}, {"levels", rows}});
  }
  return out;
}

// The model against the host backend on 1-16 cores of one socket (host_cores_system, from
// the one-core bench it is built on: host_measurements), 256^3, 7 iterations everywhere:
// `bench --backend host` (one MG-PCG iteration) and `solve --rhs random --tol 1e-8`
// (set-up, start and solve apart; solve here) on P ranks, --bind-to core, the same call
// as the one-core bench (session 43, d518e93).
struct MeasuredHost {
  int ranks;
  double pcg_ms, solve_s;
};
const MeasuredHost kMeasuredHost[] = {{1, 382.76, 2.4019},
                                      {2, 197.37, 1.2338},
                                      {4, 108.64, 0.6486},
                                      {8, 59.58, 0.3807},
                                      {16, 39.97, 0.2554}};

json held_against_host(const std::vector<Link>& links, Params p) {
  const Calibration c = calibrate(host_measurements(), p);
  const System sys = host_cores_system();
  p.gather_points = kHostMgGather;
  std::printf(
      "\nheld against the host backend on 1-16 cores of one socket (256^3, 7 iterations; "
      "calibrated on the one-core bench, socket memory %.1f GB/s; bench = its MG-PCG "
      "iteration, solve = 7 x ms/iter):\n%5s %-7s %9s %9s %8s %10s %9s %8s  %s\n",
      sys.memory_gbs, "ranks", "procs", "ms/iter", "bench", "error", "solve pred", "measured",
      "error", "limited by");
  json out = json::array();
  for (const MeasuredHost& m : kMeasuredHost) {
    const Prediction pr = predict(c, links, sys, {256, 256, 256}, m.ranks, p);
    const double it = pr.iteration_s() * 1e3, solve = 7 * it * 1e-3;
    std::printf("%5d %-7s %9.2f %9.2f %+7.1f%% %10.3f %9.3f %+7.1f%%  %s\n", m.ranks,
                to_string(pr.procs).c_str(), it, m.pcg_ms, (it / m.pcg_ms - 1) * 100, solve,
                m.solve_s, (solve / m.solve_s - 1) * 100, pr.limit().c_str());
    out.push_back({{"ranks", m.ranks},
                   {"predicted_ms_per_iteration", it},
                   {"measured_bench_ms_per_iteration", m.pcg_ms},
                   {"predicted_solve_s", solve},
                   {"measured_solve_s", m.solve_s},
                   {"prediction", to_json(pr)}});
  }
  return out;
}

json inputs_json(const Calibration& c, const std::vector<Link>& links, const Params& p) {
  json levels = json::array();
  for (const LevelCost& l : c.m.levels)
    levels.push_back({{"grid", l.grid}, {"bytes", l.bytes}, {"median_ms", l.ms}});
  json lk = json::array();
  for (const Link& l : links)
    lk.push_back({{"name", l.name},
                  {"latency_us", l.latency_s * 1e6},
                  {"gbytes_per_s", l.gbytes_per_s},
                  {"collective_latency_us", l.collective_latency_s * 1e6},
                  {"shared_gpu", l.shared_gpu},
                  {"what", l.what}});
  json sys = json::array();
  for (const System& s : default_systems())
    sys.push_back({{"name", s.name},
                   {"intra", s.intra},
                   {"inter", s.inter},
                   {"gpus_per_node", s.gpus_per_node},
                   {"gpus_per_host", s.gpus_per_host},
                   {"halo", to_string(s.halo)},
                   {"what", s.what}});
  return {{"source", c.m.source},
          {"device", c.m.device},
          {"grid", c.m.grid},
          {"copy_gbytes_per_s", c.m.copy_gbs},
          {"mg_pcg_iteration_ms", c.m.pcg_ms},
          {"mg_vcycle_ms", c.m.vcycle_ms},
          {"mg_levels", levels},
          {"calibration",
           {{"bandwidth_gbytes_per_s", c.bandwidth_gbs},
            {"launch_floor_us", c.floor_s * 1e6},
            {"cg_work_ms", c.cg_s * 1e3}}},
          {"params",
           {{"mg_gather", p.gather_points},
            {"global_sums_per_iteration", p.sums_per_iteration},
            {"staging_latency_us", p.staging_latency_s * 1e6},
            {"staging_gbytes_per_s", p.staging_gbytes_per_s},
            {"memory", "backend memory per GPU as solve --dry-run counts it (MG-PCG, double)"},
            {"gpu_memory_gb", kGpuMemoryGb}}},
          {"links", lk},
          {"systems", sys}};
}

}  // namespace

int run_probe_model(const ProbeOptions& o, MPI_Comm world) {
  if (!o.report.empty()) check_planned_files({{"--report", o.report}}, world);
  std::vector<Link> links = default_links();
  for (const std::string& spec : o.model_links) apply_link_override(links, spec);
  Params p;
  p.gather_points = o.mg_gather;
  Calibration c = calibrate(load_measurements(o), p);  // every rank: errors agree
  if (o.model_launch_us >= 0) c.floor_s = o.model_launch_us * 1e-6, c.measured_levels = false;
  if (comm_rank(world) != 0) {
    if (!o.report.empty()) write_file_atomically(o.report, "", world);
    return kExitOk;
  }
  print_header(c, links, p);
  json j;
  j["halo3d_version"] = version_string();
  j["command"] = "probe";
  j["mode"] = "model";
  j["model"] = {{"inputs", inputs_json(c, links, p)}, {"series", all_series(o, c, links, p)}};
  j["model"]["held_against"] = held_against(c, links, p);
  j["model"]["held_against_levels"] = held_against_levels(c, links, p);
  j["model"]["held_against_host"] = held_against_host(links, p);
  std::fflush(stdout);
  if (!o.report.empty()) write_file_atomically(o.report, j.dump(2) + "\n", world);
  return kExitOk;
}

}  // namespace halo3d
