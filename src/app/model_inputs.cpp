// The model's inputs (scaling_model.hpp): the built-in one-GPU measurements, a bench report
// read instead, the link table with its overrides, and the machines built from the links.
#include <cmath>
#include <cstdlib>
#include <initializer_list>

#include "checks.hpp"
#include "errors.hpp"
#include "scaling_model.hpp"

namespace halo3d::model {

namespace {

// A built-in bench's level rows, each an n^3 grid: bytes per V-cycle and milliseconds.
struct CubeLevel {
  int n;
  double bytes, ms;
};
void add_cube_levels(Measurements& m, std::initializer_list<CubeLevel> rows) {
  for (const CubeLevel& r : rows) m.levels.push_back({{r.n, r.n, r.n}, r.bytes, r.ms});
}

}  // namespace

Measurements default_measurements() {
  Measurements m;
  // `halo3d bench --grid 512,512,512` on one rank of one H200 (CUDA 13.0), as commit 996524c
  // (the model's first, 2026-12-04) recorded it. A one-rank bench has no exchange,
  // gather or shell, so the changes since (one face per round, the IPC gather, the coarse
  // overlap threshold) leave it as it was; the 1-rank solve at 512^3 measured 86.6 ms
  // before and after them (docs/SCALING_MODEL.md).
  m.source = "built in: one H200, CUDA 13.0, halo3d bench --grid 512,512,512, 1 rank (996524c)";
  // Its levels ran the hierarchy and smoothing of then (512 -> 341 -> 170 ..., smoothing
  // from zero in two passes): their rates calibrate the model, their times do not stand for
  // today's levels.
  m.current = false;
  m.device = "NVIDIA H200";
  m.grid = {512, 512, 512};
  m.copy_gbs = 4173.7;
  m.pcg_ms = 13.93;
  m.vcycle_ms = 10.38;
  m.cg_ms = 3.04;
  add_cube_levels(m, {{512, 2.211e10, 7.6130},
                      {341, 6.423e9, 2.1270},
                      {170, 8.092e8, 0.2441},
                      {113, 2.337e8, 0.0911},
                      {56, 2.891e7, 0.0618},
                      {37, 8.198e6, 0.0714},
                      {18, 9.683e5, 0.0299},
                      {13, 3.55e5, 0.0252},
                      {6, 3.656e4, 0.0455},
                      {5, 2.013e4, 0.0352},
                      {2, 1296, 0.0396},
                      {1, 24, 0.0081}});
  return m;
}

Measurements host_measurements() {
  Measurements m;
  // `halo3d bench --backend host --grid 256,256,256 --reps 3 --warmup 1` on one core of the
  // lent H100 machine (16-core Intel Xeon, one socket; OMP_NUM_THREADS=1, --bind-to core),
  // the binary of d518e93 (2026-12-06, session 43, performance-log.md).
  m.source = "built in: one core of a 16-core Xeon, halo3d bench --backend host, 256^3 (d518e93)";
  m.device = "CPU (1 OpenMP threads)";
  m.grid = {256, 256, 256};
  m.copy_gbs = 19.37;
  m.pcg_ms = 382.76;
  m.vcycle_ms = 253.86;
  m.cg_ms = 110.72;
  add_cube_levels(m, {{256, 2.180e9, 227.189},
                      {127, 2.662e8, 23.926},
                      {63, 3.248e7, 2.7451},
                      {31, 3.867e6, 0.3460},
                      {15, 4.375e5, 0.0485},
                      {7, 4.434e4, 0.0082},
                      {3, 3472, 0.0037},
                      {1, 16, 0.0001}});
  return m;
}

namespace {

const nlohmann::json& field(const nlohmann::json& j, const char* key, const std::string& what) {
  if (!j.is_object() || !j.contains(key))
    throw BadInput(what + ": not a halo3d bench report (no \"" + key + "\")");
  return j.at(key);
}

Int3 int3_field(const nlohmann::json& j, const char* key, const std::string& what) {
  const nlohmann::json& v = field(j, key, what);
  if (!v.is_array() || v.size() != 3) throw BadInput(what + ": \"" + key + "\" is not 3 numbers");
  Int3 g{};
  for (int a = 0; a < 3; ++a) {
    if (!v[a].is_number_integer() || v[a].get<int>() < 1)
      throw BadInput(what + ": \"" + key + "\" is not 3 positive integers");
    g[a] = v[a].get<int>();
  }
  return g;
}

double number_field(const nlohmann::json& j, const char* key, const std::string& what) {
  const nlohmann::json& v = field(j, key, what);
  if (!v.is_number() || !(v.get<double>() >= 0))
    throw BadInput(what + ": \"" + key + "\" is not a number >= 0");
  return v.get<double>();
}

// The median milliseconds of the "results" row `name`.
double result_ms(const nlohmann::json& results, const std::string& name, const std::string& what) {
  for (const auto& r : results)
    if (r.is_object() && r.value("name", "") == name) return number_field(r, "median_ms", what);
  throw BadInput(what + ": no \"" + name + "\" row in \"results\"");
}

}  // namespace

Measurements measurements_from_bench(const nlohmann::json& j, const std::string& what) {
  if (field(j, "command", what) != "bench") throw BadInput(what + ": not a halo3d bench report");
  const double ranks = number_field(j, "ranks", what);
  if (ranks != 1)
    throw BadInput(what + ": the model needs a bench on one rank (this one ran on " +
                   std::to_string(int(ranks)) + ")");
  Measurements m;
  m.source = "bench report " + what;
  m.device = j.value("device", std::string("?"));
  m.grid = int3_field(j, "grid", what);
  m.copy_gbs = number_field(j, "copy_gbytes_per_s", what);
  const nlohmann::json& results = field(j, "results", what);
  m.pcg_ms = result_ms(results, "mg_pcg_iteration", what);
  m.vcycle_ms = result_ms(results, "mg_vcycle", what);
  m.cg_ms = result_ms(results, "cg_iteration", what);
  const nlohmann::json& levels = field(j, "mg_levels", what);
  if (!levels.is_array() || levels.empty()) throw BadInput(what + ": \"mg_levels\" is empty");
  for (const auto& l : levels)
    m.levels.push_back({int3_field(l, "grid", what), number_field(l, "bytes", what),
                        number_field(l, "median_ms", what)});
  return m;
}

std::vector<Link> default_links() {
  return {
      {"nvlink", 3e-6, 450, 3e-6, false,
       "NVLink 4 through NVSwitch (HGX H100/H200), per direction"},
      {"pcie", 18e-6, 16, 18e-6, false,
       "PCIe 4.0 x16 without peer access: device -> host -> device (dual RTX 4090)"},
      {"ib-hdr", 2e-6, 25, 2e-6, false, "InfiniBand HDR 200 Gb/s, one adapter per GPU"},
      {"ib-ndr", 2e-6, 50, 2e-6, false, "InfiniBand NDR 400 Gb/s, one adapter per GPU"},
      // Latency fitted so levels 1-3 of the 8-rank bench at 512^3 (--mg-gather 262144, the
      // code of 16f7e0b: one face per round, the IPC gather, no shell below 2M points) add up
      // to the measured 7.16 ms. Before those changes it was 23.7 us (levels 1-5 at
      // e57a10d), and 25 us before the one-way gather (c38cf9f).
      {"mps-shared-gpu", 14.4e-6, 350, 2e-6, true,
       "ranks sharing one H200 under MPS (latency per rank sharing it; fitted)"},
      {"shm", 2e-6, 10, 2e-6, false,
       "MPI through shared memory between the cores of one host (an estimate, not fitted)"},
  };
}

const Link& find_link(const std::vector<Link>& links, const std::string& name) {
  for (const Link& l : links)
    if (l.name == name) return l;
  throw BadInput("no link named " + name);
}

void apply_link_override(std::vector<Link>& links, const std::string& spec) {
  std::string names;
  for (const Link& l : links) names += (names.empty() ? "" : ", ") + l.name;
  const std::string head = "--model-link " + printable(spec) + ": ";
  const std::size_t eq = spec.find('=');
  if (eq == std::string::npos)
    throw BadInput(head + "expected NAME=LAT_US,GBPS[,COLLECTIVE_LAT_US] (NAME: " + names + ")");
  const std::string name = spec.substr(0, eq);
  Link* link = nullptr;
  for (Link& l : links)
    if (l.name == name) link = &l;
  if (!link)
    throw BadInput(head + "no link named '" + printable(name) + "' (links: " + names + ")");
  std::vector<double> v;
  std::size_t at = eq + 1;
  while (at <= spec.size()) {
    const std::size_t comma = std::min(spec.find(',', at), spec.size());
    const std::string s = spec.substr(at, comma - at);
    char* end = nullptr;
    const double x = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(x) || x < 0)
      throw BadInput(head + "'" + printable(s) + "' is not a number >= 0");
    v.push_back(x);
    at = comma + 1;
  }
  if (v.size() < 2 || v.size() > 3)
    throw BadInput(head + "expected 2 or 3 numbers: LAT_US,GBPS[,COLLECTIVE_LAT_US]");
  if (v[1] <= 0) throw BadInput(head + "the bandwidth must be > 0 GB/s");
  link->latency_s = v[0] * 1e-6;
  link->gbytes_per_s = v[1];
  link->collective_latency_s = v.size() == 3 ? v[2] * 1e-6 : link->latency_s;
}

// Hosts of 8 GPUs (an HGX board; a PCIe server): a flat NVLink or PCIe system of more GPUs
// spans hosts, and its multigrid gather then takes the host path. The halo transport of
// each (docs/SCALING_MODEL.md): ipc where GPUs have peer access over NVLink (faces to other
// hosts then go over ipc's MPI, still one split axis per round); plain mpi, staged through
// host memory, between GPUs without peer access (the PCIe box); a CUDA-aware MPI (UCX:
// GPUDirect RDMA between nodes) on the InfiniBand clusters.
std::vector<System> default_systems() {
  return {{"nvlink", "nvlink", "nvlink", 1 << 30,
           "one NVLink domain (8 GPUs on an HGX node; 72 on NVL72, 256 on an NVLink Switch "
           "System)",
           8, Transport::ipc},
          {"pcie", "pcie", "pcie", 1 << 30,
           "every pair through host memory over PCIe 4.0 (2 GPUs in the workstation)", 8,
           Transport::mpi},
          {"ib-hdr", "nvlink", "ib-hdr", 8, "8-GPU NVLink nodes, InfiniBand HDR between nodes", 8,
           Transport::mpi_cuda},
          {"ib-ndr", "nvlink", "ib-ndr", 8, "8-GPU NVLink nodes, InfiniBand NDR between nodes", 8,
           Transport::mpi_cuda}};
}

System shared_gpu_system() {
  return {"mps-shared-gpu",
          "mps-shared-gpu",
          "mps-shared-gpu",
          1 << 30,
          "every rank on one GPU under MPS (this machine; the measurements ran --halo ipc)",
          1 << 30,
          Transport::ipc};
}

System host_cores_system() {
  System s{"host-cores",
           "shm",
           "shm",
           1 << 30,
           "every rank a core of one 16-core Xeon socket (the host backend; measured here)",
           1 << 30,
           Transport::mpi};
  // A copy on all 16 cores at once, measured with the one-core bench above (`bench` on 16
  // ranks, the same call: 183.8 GB/s against 19.4 on one core).
  s.memory_gbs = 183.8;
  return s;
}

}  // namespace halo3d::model
