// halo3d probe: for every pair of ranks, whether CUDA peer access is possible between their
// GPUs, and the latency and bandwidth of every halo transport available to that pair,
// measured through the transports a solve uses: for each size, make_named_transport on a
// communicator of the pair alone and a plan of one face of that size (one_face_plan),
// timed as --halo auto times its candidates (time_exchange: warm-up, then exchanges, the
// slower rank's median). In an exchange both ranks send the face and receive the other's
// at once, as in a solve, so its time is the one-way time: latency = that time,
// round trip = twice it, bandwidth = bytes / latency. The other ranks wait.
// --topology adds nvidia-smi topo -m and the CUDA P2P attributes of each local pair;
// --grid estimates the halo time per iteration ("communication wall") from the numbers
// (both in probe_sections.cpp).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "app.hpp"
#include "decomposition.hpp"
#include "errors.hpp"
#include "files.hpp"
#include "mpi_env.hpp"
#include "pair_probe.hpp"
#include "probe_sections.hpp"
#include "runtime.hpp"
#include "transports/transports.hpp"

namespace halo3d {
namespace {

using nlohmann::json;
using probe::allgather_strings;

constexpr int kTagResult = 9200, kTagPair = 9300;

std::vector<std::size_t> default_sizes() {
  std::vector<std::size_t> s;
  for (std::size_t b = 8; b < (64u << 20); b *= 4) s.push_back(b);
  s.push_back(64u << 20);
  return s;
}

std::string human_bytes(std::size_t b) {
  char buf[32];
  if (b >= (1u << 20) && b % (1u << 20) == 0)
    std::snprintf(buf, sizeof buf, "%zu MiB", b >> 20);
  else if (b >= 1024 && b % 1024 == 0)
    std::snprintf(buf, sizeof buf, "%zu KiB", b >> 10);
  else
    std::snprintf(buf, sizeof buf, "%zu B", b);
  return buf;
}

void send_string(const std::string& s, int to, MPI_Comm comm) {
  int len = int(s.size());
  HALO3D_MPI_CHECK(MPI_Send(&len, 1, MPI_INT, to, kTagResult, comm));
  HALO3D_MPI_CHECK(MPI_Send(s.data(), len, MPI_CHAR, to, kTagResult, comm));
}
// Ranks not in the measured pair wait here without spinning, so that they take no CPU
// time from the pair (which matters on oversubscribed or small machines).
void polite_wait(Request& r) {
  while (!r.test()) std::this_thread::sleep_for(std::chrono::microseconds(200));
}
void polite_barrier(MPI_Comm comm) {
  Request r;
  HALO3D_MPI_CHECK(MPI_Ibarrier(comm, r.for_collective()));
  polite_wait(r);
}

std::string recv_string(int from, MPI_Comm comm) {
  int len = 0;
  Request r;
  HALO3D_MPI_CHECK(MPI_Irecv(&len, 1, MPI_INT, from, kTagResult, comm, r.for_recv()));
  polite_wait(r);
  std::string s(std::size_t(len), '\0');
  HALO3D_MPI_CHECK(MPI_Recv(s.data(), len, MPI_CHAR, from, kTagResult, comm, MPI_STATUS_IGNORE));
  return s;
}

// What every section of the probe shares: the ranks, their hosts and GPUs, what may run
// between them, the sizes, and a communicator of its own for the measurements.
struct Setup {
  int rank = 0, size = 1;
  bool root = false;
  HostMap hosts;
  std::unique_ptr<Kernels> kernels;
  bool cuda = false, cuda_aware = false;
  PeerPolicy policy;
  std::vector<RankGpu> gpus;
  std::vector<std::string> devices;
  Int3 wall_procs{};  // the process grid of --grid's estimate (size > 1 only)
  std::vector<std::size_t> sizes;
  Comm comm;
};

// Collective: everything the options ask for is checked here, before anything is measured.
Setup set_up(const ProbeOptions& o, MPI_Comm world) {
  Setup s;
  s.rank = comm_rank(world);
  s.size = comm_size(world);
  s.root = s.rank == 0;
  s.hosts = HostMap::build(world);
  int gpu = -1;
  std::string warnings;
  s.kernels = make_kernels(o.backend, s.hosts, world, gpu, warnings);
  Kernels& k = *s.kernels;
  if (s.root && !warnings.empty()) std::fputs(warnings.c_str(), stderr);
  s.cuda = k.device() >= 0;
  s.policy = peer_policy(o.peer_access);
  s.cuda_aware = s.cuda && all_cuda_aware_mpi(world);
  s.gpus = gather_rank_gpus(k, s.hosts, world);
  s.devices = allgather_strings(k.device_name(), world);
  if (!o.report.empty())  // before measuring, not after
    check_planned_files({{"--report", o.report}}, world);
  // Validated now (collectively), used after the measurements.
  if (o.grid[0] > 0 && s.size > 1) s.wall_procs = choose_procs(o.grid, s.size, o.procs);
  s.sizes = o.sizes.empty() ? default_sizes() : o.sizes;
  MPI_Comm dup = MPI_COMM_NULL;
  HALO3D_MPI_CHECK(MPI_Comm_dup(world, &dup));
  s.comm = Comm(dup);
  return s;
}

// The first lines: ranks, hosts, devices, what the GPU side allows, and the sizes.
void print_header(const ProbeOptions& o, const Setup& s) {
  const Kernels& k = *s.kernels;
  std::printf(
      "halo3d probe %s: %d rank(s) on %zu host(s), backend %s; %s\n", version_string().c_str(),
      s.size, s.hosts.hosts.size(), k.name().c_str(),
      s.cuda ? ("peer access " +
                (s.policy.allowed ? std::string("allowed") : "off (" + s.policy.why_off + ")") +
                ", CUDA-aware MPI " + (s.cuda_aware ? "yes" : "no") + ", NCCL " +
                (nccl_compiled() ? "compiled" : "not compiled"))
                   .c_str()
             : "no GPU: measuring mpi only");
  for (int r = 0; r < s.size; ++r)
    std::printf("  rank %d: host %s, %s\n", r, s.hosts.rank_host[r].c_str(), s.devices[r].c_str());
  std::printf(
      "sizes %s to %s: the solver's transports exchanging one face of each size, %d exchanges "
      "after %d warm-up, median of the slower rank; latency = one exchange (both ways at once), "
      "round trip = 2 x latency\n",
      human_bytes(s.sizes.front()).c_str(), human_bytes(s.sizes.back()).c_str(), o.reps,
      std::max(o.warmup, 1));
  if (s.size == 1) std::printf("one rank: no pairs to measure\n");
}

// The field the exchanges pack from and unpack into, large enough for the plan of every
// size, filled with data that is not all zeros.
Buffer make_field(const Setup& s) {
  std::size_t n = 0;
  for (std::size_t bytes : s.sizes)
    n = std::max(n, one_face_plan(bytes / sizeof(double), 0, true).layout.padded_size());
  Kernels& k = *s.kernels;
  Buffer u(k, n, Memory::device);
  std::vector<double> fill(n);
  for (std::size_t i = 0; i < n; ++i) fill[i] = double(i % 1000) + 0.5;
  k.copy(u.data(), fill.data(), n, Lane::interior);
  k.synchronize();
  return u;
}

// Ranks i < j by themselves: a communicator of the two, made by those two only (i is its
// rank 0 and the plans' low end), and its host map; the transports are built on them.
struct Pair {
  Comm comm;
  HostMap hosts;
  int peer = 0;  // in comm
  bool low = false;
};
Pair make_pair(MPI_Comm comm, int i, int j) {
  MPI_Group all = MPI_GROUP_NULL, two = MPI_GROUP_NULL;
  HALO3D_MPI_CHECK(MPI_Comm_group(comm, &all));
  const int ranks[2] = {i, j};
  HALO3D_MPI_CHECK(MPI_Group_incl(all, 2, ranks, &two));
  MPI_Comm c = MPI_COMM_NULL;
  HALO3D_MPI_CHECK(MPI_Comm_create_group(comm, two, kTagPair, &c));
  MPI_Group_free(&two);
  MPI_Group_free(&all);
  Pair p;
  p.comm = Comm(c);
  p.hosts = HostMap::build(p.comm.get());
  p.low = comm_rank(comm) == i;
  p.peer = p.low ? 1 : 0;
  return p;
}

// Transport t between the pair, a row per size; `how` gets its describe(). Throws
// Error(kExitUnavailable) on both ranks alike where t cannot run between them.
json measure(Transport t, const ProbeOptions& o, const Setup& s, const Pair& p, double* u,
             std::string& how) {
  json rows = json::array();
  for (std::size_t bytes : s.sizes) {
    const HaloPlan plan = one_face_plan(bytes / sizeof(double), p.peer, p.low);
    const TransportContext ctx{*s.kernels, plan, p.comm.get(), p.hosts, s.policy};
    const std::unique_ptr<HaloTransport> tr = make_named_transport(t, ctx);
    how = tr->describe();
    const double one_way =
        time_exchange(*tr, *s.kernels, u, std::max(o.warmup, 1), o.reps, p.comm.get());
    rows.push_back({{"bytes", bytes},
                    {"round_trip_s", 2 * one_way},
                    {"latency_s", one_way},
                    {"bandwidth_gbytes_per_s", one_way > 0 ? double(bytes) / one_way / 1e9 : 0.0}});
  }
  return rows;
}

// Why transport t is not measured between a pair ("" where it is), decided from what all
// ranks know (so both ranks skip it alike): ipc to another host would be mpi under another
// name, and NCCL hangs or refuses with two ranks on one GPU.
std::string why_skip(Transport t, const Setup& s, bool same_host, bool same_gpu) {
  switch (t) {
    case Transport::mpi_cuda:
      return s.cuda_aware ? "" : s.cuda ? "the MPI is not CUDA-aware" : "no GPU";
    case Transport::ipc:
      return !s.cuda ? "no GPU" : !same_host ? "other host" : "";
    case Transport::nccl:
      return !nccl_compiled() ? "not compiled"
             : !s.cuda        ? "no GPU"
             : same_gpu       ? "same GPU (NCCL needs one GPU per rank)"
                              : "";
    default:
      return "";
  }
}
// What the ipc transport detected for the pair: its describe() without "ipc: z+ rank 1: "
// (the face and rank of the probe's plan, which mean nothing to the reader).
std::string ipc_how(const std::string& d) {
  const std::size_t p = d.find(": ", d.find("rank "));
  return p == std::string::npos ? d : d.substr(p + 2);
}

// Ranks i < j (this rank is one of them) measure every transport that can run between them
// (collective over the two); the result, and why each other transport was skipped.
json measure_pair(const ProbeOptions& o, const Setup& s, double* u, int i, int j,
                  const std::vector<json>& matrix) {
  const bool same_host = s.gpus[i].host == s.gpus[j].host;
  const bool same_gpu = s.cuda && same_host && s.gpus[i].bus == s.gpus[j].bus;
  json pr = {{"a", i},
             {"b", j},
             {"same_host", same_host},
             {"same_gpu", same_gpu},
             {"peer_access", matrix[i][j]},
             {"transports", json::object()},
             {"skipped", json::object()}};
  const Pair p = make_pair(s.comm.get(), i, j);
  for (Transport t : concrete_transports()) {
    const std::string name = to_string(t), why = why_skip(t, s, same_host, same_gpu);
    if (!why.empty()) {
      pr["skipped"][name] = why;
      continue;
    }
    std::string how;
    try {
      pr["transports"][name] = measure(t, o, s, p, u, how);
    } catch (const Error& e) {  // on both ranks of the pair alike
      if (e.code() != kExitUnavailable) throw;
      pr["skipped"][name] = e.what();
      continue;
    }
    if (t == Transport::ipc) pr["ipc_how"] = ipc_how(how);
  }
  s.kernels->synchronize();
  return pr;
}

// Every pair in turn while the other ranks wait (collective); on rank 0, every pair's results.
json measure_pairs(const ProbeOptions& o, const Setup& s, double* u,
                   const std::vector<json>& matrix, MPI_Comm world) {
  json pairs = json::array();
  for (int i = 0; i < s.size; ++i)
    for (int j = i + 1; j < s.size; ++j) {
      if (s.rank == i || s.rank == j) {
        const json pr = measure_pair(o, s, u, i, j, matrix);
        if (s.rank == i) {  // the low rank's result is the pair's
          if (s.root)
            pairs.push_back(pr);
          else
            send_string(pr.dump(), 0, s.comm.get());
        }
      }
      if (s.root && i != 0) pairs.push_back(json::parse(recv_string(i, s.comm.get())));
      polite_barrier(world);  // the other ranks wait while a pair measures
    }
  return pairs;
}

// One pair's table: latency and bandwidth of each transport measured, by size.
void print_pair(const json& p, const std::vector<std::size_t>& sizes, bool cuda) {
  std::printf("\nranks %d-%d: %s; peer access: %s\n", p["a"].get<int>(), p["b"].get<int>(),
              !p["same_host"].get<bool>() ? "other host"
              : p["same_gpu"].get<bool>() ? "same host, same GPU"
                                          : "same host",
              p["peer_access"].get<std::string>().c_str());
  if (p.contains("ipc_how")) std::printf("  ipc: %s\n", p["ipc_how"].get<std::string>().c_str());
  for (const auto& [n, why] : p["skipped"].items())
    if (cuda) std::printf("  %s: not measured (%s)\n", n.c_str(), why.get<std::string>().c_str());
  std::vector<std::string> names;
  for (const auto& [n, rows] : p["transports"].items()) names.push_back(n);
  std::printf("  %10s", "bytes");
  for (const auto& n : names) std::printf(" | %8s lat us %8s GB/s", n.c_str(), "");
  std::printf("\n");
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    std::printf("  %10s", human_bytes(sizes[s]).c_str());
    for (const auto& n : names) {
      const auto& r = p["transports"][n][s];
      std::printf(" | %15.2f %13.3f", r["latency_s"].get<double>() * 1e6,
                  r["bandwidth_gbytes_per_s"].get<double>());
    }
    std::printf("\n");
  }
}

// The --report document (rank 0).
json probe_report(const ProbeOptions& o, const Setup& s, const std::vector<json>& matrix,
                  const json& pairs, const json& topology, const json& wall) {
  json j;
  j["halo3d_version"] = version_string();
  j["command"] = "probe";
  j["backend"] = s.kernels->name();
  j["ranks"] = s.size;
  j["hosts"] = s.hosts.hosts;
  json ranks = json::array();
  for (int r = 0; r < s.size; ++r)
    ranks.push_back({{"rank", r},
                     {"host", s.hosts.rank_host[r]},
                     {"device", s.devices[r]},
                     {"pci_bus_id", s.gpus[r].bus}});
  j["rank_devices"] = ranks;
  j["peer_access_policy"] = {{"allowed", s.policy.allowed}, {"why_off", s.policy.why_off}};
  j["cuda_aware_mpi"] = s.cuda_aware;
  j["nccl_compiled"] = nccl_compiled();
  j["sizes"] = s.sizes;
  j["reps"] = o.reps;
  j["warmup"] = o.warmup;
  j["peer_access"] = matrix;
  j["pairs"] = pairs;
  if (o.topology) j["topology"] = topology;
  j["communication_wall"] = wall;
  return j;
}

}  // namespace

int run_probe(const ProbeOptions& o, MPI_Comm world) {
  if (o.model) return run_probe_model(o, world);
  const Setup s = set_up(o, world);
  const std::vector<json> matrix = probe::peer_matrix(s.gpus, s.policy, s.cuda, world);
  if (s.root) print_header(o, s);
  Buffer u = s.size > 1 ? make_field(s) : Buffer();  // one rank: no pairs, nothing sent
  const json pairs = measure_pairs(o, s, u.data(), matrix, world);
  const json topology = o.topology ? probe::gather_topology(s.hosts, world) : json::array();
  const bool wall_asked = o.grid[0] > 0 && s.size > 1;
  const json wall =
      wall_asked ? probe::communication_wall(o.grid, s.wall_procs, pairs, s.root) : json();

  if (!s.root) return kExitOk;
  for (const auto& p : pairs) print_pair(p, s.sizes, s.cuda);
  if (o.topology) probe::print_topology(topology);
  if (wall_asked) probe::print_wall(wall);
  std::fflush(stdout);
  if (!o.report.empty())
    write_file_atomically(o.report,
                          probe_report(o, s, matrix, pairs, topology, wall)
                                  .dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
                              "\n",
                          world);
  return kExitOk;
}

}  // namespace halo3d
