// halo3d probe: for every pair of ranks, whether CUDA peer access is possible between their
// GPUs, and the latency and bandwidth of every halo transport available to that pair,
// measured by ping-pong (the other ranks wait): warm-up, repeated round trips, median;
// one-way latency = median round trip / 2; bandwidth = bytes / one-way time.
// --topology adds nvidia-smi topo -m and cudaDeviceGetP2PAttribute for each local pair;
// --grid estimates the halo time per iteration ("communication wall") from the numbers.
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
#include "hdf5_io.hpp"
#include "mpi_env.hpp"
#include "point_ops.hpp"
#include "runtime.hpp"
#include "transports/transports.hpp"

#ifdef HALO3D_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "cuda/cuda_check.hpp"
#include "transports/ipc_channel.hpp"
#endif
#ifdef HALO3D_HAVE_NCCL
#include <nccl.h>

#include "transports/nccl_check.hpp"
#endif

namespace halo3d {
namespace {

using nlohmann::json;

constexpr int kTagPing = 9100, kTagResult = 9200, kTagNcclId = 9300;

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

std::vector<std::string> allgather_strings(const std::string& mine, MPI_Comm comm) {
  const int size = comm_size(comm);
  int len = int(mine.size());
  std::vector<int> lens(size), offs(size);
  HALO3D_MPI_CHECK(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm));
  int total = 0;
  for (int r = 0; r < size; ++r) offs[r] = total, total += lens[r];
  std::vector<char> all(std::size_t(std::max(total, 1)));
  HALO3D_MPI_CHECK(MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), offs.data(),
                                  MPI_CHAR, comm));
  std::vector<std::string> out;
  for (int r = 0; r < size; ++r) out.emplace_back(&all[offs[r]], std::size_t(lens[r]));
  return out;
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

// How rank `me` sees peer access to rank `other`'s GPU.
std::string peer_relation(const std::vector<RankGpu>& g, int me, int other,
                          const PeerPolicy& policy, bool cuda) {
  if (me == other) return "self";
  if (g[me].host != g[other].host) return "other host";
  if (!cuda) return "no GPU";
  if (g[me].bus == g[other].bus) return "same GPU";
#ifdef HALO3D_HAVE_CUDA
  const int mine = ipc::device_by_bus_id(g[me].bus), theirs = ipc::device_by_bus_id(g[other].bus);
  if (mine < 0 || theirs < 0)
    return "unknown (GPU " + g[other].bus + " not visible to rank " + std::to_string(me) + ")";
  int can = 0;
  HALO3D_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, mine, theirs));
  if (!can) return "no";
  return policy.allowed ? "yes" : "yes (not used: " + policy.why_off + ")";
#else
  (void)policy;
  return "no GPU";
#endif
}

struct Bufs {
  Buffer pin_a, pin_b, dev_a, dev_b;  // pinned staging and device (cuda); host memory (host)
};

// One round trip of `bytes` between ping (role 0) and pong (role 1) over `how`.
class PingPong {
 public:
  PingPong(Kernels& k, Bufs& b, MPI_Comm comm, int peer, bool ping)
      : k_(k), b_(b), comm_(comm), peer_(peer), ping_(ping) {}
  virtual ~PingPong() = default;
  virtual void round_trip(std::size_t bytes) = 0;

 protected:
  void send(const void* p, std::size_t bytes) {
    HALO3D_MPI_CHECK(MPI_Send(p, int(bytes), MPI_BYTE, peer_, kTagPing, comm_));
  }
  void recv(void* p, std::size_t bytes) {
    HALO3D_MPI_CHECK(MPI_Recv(p, int(bytes), MPI_BYTE, peer_, kTagPing, comm_, MPI_STATUS_IGNORE));
  }
  Kernels& k_;
  Bufs& b_;
  MPI_Comm comm_;
  int peer_;
  bool ping_;
};

// mpi: host memory as is; device memory staged through pinned buffers, as the transport does.
class MpiPingPong final : public PingPong {
 public:
  using PingPong::PingPong;
  void round_trip(std::size_t bytes) override {
    const bool staged = k_.device_memory_is_remote();
    const std::size_t n = bytes / sizeof(double);
    auto to_host = [&](double* host, const double* dev) {
      if (staged) k_.copy(host, dev, n, Lane::boundary), k_.synchronize(Lane::boundary);
    };
    auto to_dev = [&](double* dev, const double* host) {
      if (staged) k_.copy(dev, host, n, Lane::boundary), k_.synchronize(Lane::boundary);
    };
    double* a = staged ? b_.pin_a.data() : b_.dev_a.data();
    double* r = staged ? b_.pin_b.data() : b_.dev_b.data();
    if (ping_) {
      to_host(a, b_.dev_a.data());
      send(a, bytes);
      recv(r, bytes);
      to_dev(b_.dev_b.data(), r);
    } else {
      recv(r, bytes);
      to_dev(b_.dev_b.data(), r);
      to_host(a, b_.dev_b.data());
      send(a, bytes);
    }
  }
};

// mpi-cuda: device pointers to a CUDA-aware MPI.
class MpiCudaPingPong final : public PingPong {
 public:
  using PingPong::PingPong;
  void round_trip(std::size_t bytes) override {
    if (ping_) {
      send(b_.dev_a.data(), bytes);
      recv(b_.dev_b.data(), bytes);
    } else {
      recv(b_.dev_b.data(), bytes);
      send(b_.dev_b.data(), bytes);
    }
  }
};

#ifdef HALO3D_HAVE_CUDA
// ipc: the transport's channel and protocol; the pong echoes its inbox back.
class IpcPingPong final : public PingPong {
 public:
  IpcPingPong(Kernels& k, Bufs& b, MPI_Comm comm, int peer, bool ping, std::size_t capacity_doubles,
              const PeerPolicy& policy)
      : PingPong(k, b, comm, peer, ping), ch_(k, peer, 0, 0, capacity_doubles) {
    ipc::connect({&ch_}, comm, policy);
    stream_ = static_cast<cudaStream_t>(k.native_stream(Lane::boundary));
  }
  ~IpcPingPong() override {
    try {
      ipc::disconnect({&ch_}, k_);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "halo3d: probe: ipc teardown: %s\n", e.what());
    }
  }
  bool ok() const { return ch_.ok(); }
  const std::string& how() const { return ch_.how(); }
  void round_trip(std::size_t bytes) override {
    ch_.post();
    if (ping_) {
      ch_.credit_request().wait();
      ch_.put(b_.dev_a.data(), bytes, stream_);
      ch_.notice_request().wait();
      ch_.arrived(stream_);
      ch_.consumed(stream_);
      HALO3D_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the data is here
    } else {
      ch_.notice_request().wait();
      ch_.arrived(stream_);
      ch_.credit_request().wait();
      ch_.put(ch_.inbox(), bytes, stream_);
      ch_.consumed(stream_);
    }
    ch_.complete();
  }

 private:
  ipc::Channel ch_;
  cudaStream_t stream_ = nullptr;
};
#endif

#ifdef HALO3D_HAVE_NCCL
// nccl: a two-rank communicator for the pair.
class NcclPingPong final : public PingPong {
 public:
  NcclPingPong(Kernels& k, Bufs& b, MPI_Comm comm, int peer, bool ping)
      : PingPong(k, b, comm, peer, ping) {
    ncclUniqueId id{};
    if (ping_) {
      HALO3D_NCCL_CHECK(ncclGetUniqueId(&id));
      HALO3D_MPI_CHECK(MPI_Send(&id, int(sizeof id), MPI_BYTE, peer_, kTagNcclId, comm_));
    } else {
      HALO3D_MPI_CHECK(
          MPI_Recv(&id, int(sizeof id), MPI_BYTE, peer_, kTagNcclId, comm_, MPI_STATUS_IGNORE));
    }
    HALO3D_NCCL_CHECK(ncclCommInitRank(&nc_, 2, id, ping_ ? 0 : 1));
    stream_ = static_cast<cudaStream_t>(k.native_stream(Lane::boundary));
  }
  ~NcclPingPong() override {
    HALO3D_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(stream_));
    if (nc_) ncclCommDestroy(nc_);
  }
  void round_trip(std::size_t bytes) override {
    const int other = ping_ ? 1 : 0;
    if (ping_) {
      HALO3D_NCCL_CHECK(ncclSend(b_.dev_a.data(), bytes, ncclChar, other, nc_, stream_));
      HALO3D_NCCL_CHECK(ncclRecv(b_.dev_b.data(), bytes, ncclChar, other, nc_, stream_));
    } else {
      HALO3D_NCCL_CHECK(ncclRecv(b_.dev_b.data(), bytes, ncclChar, other, nc_, stream_));
      HALO3D_NCCL_CHECK(ncclSend(b_.dev_b.data(), bytes, ncclChar, other, nc_, stream_));
    }
    HALO3D_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

 private:
  ncclComm_t nc_ = nullptr;
  cudaStream_t stream_ = nullptr;
};
#endif

// Ping-pong over every size; on the ping rank, the rows of the table.
json measure(PingPong& pp, bool ping, const std::vector<std::size_t>& sizes, int warmup, int reps) {
  json rows = json::array();
  for (std::size_t bytes : sizes) {
    for (int i = 0; i < warmup; ++i) pp.round_trip(bytes);
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
      const double t0 = MPI_Wtime();
      pp.round_trip(bytes);
      t.push_back(MPI_Wtime() - t0);
    }
    if (!ping) continue;
    std::sort(t.begin(), t.end());
    const double rt = t[t.size() / 2], one_way = rt / 2;
    rows.push_back({{"bytes", bytes},
                    {"round_trip_s", rt},
                    {"latency_s", one_way},
                    {"bandwidth_gbytes_per_s", one_way > 0 ? double(bytes) / one_way / 1e9 : 0.0}});
  }
  return rows;
}

// This host's GPU topology (run by the first rank of each host).
json local_topology(const HostMap& hosts) {
  json t;
  t["host"] = hosts.hosts.at(hosts.host_index);
  std::string out;
  bool present = false;
  if (FILE* p = popen("command -v nvidia-smi 2>/dev/null", "r")) {
    char b[512];
    present = std::fgets(b, sizeof b, p) != nullptr;
    pclose(p);
  }
  if (present) {
    if (FILE* p = popen("nvidia-smi topo -m 2>&1", "r")) {
      char b[512];
      while (std::fgets(b, sizeof b, p)) out += b;
      const int rc = pclose(p);
      if (rc != 0) out += "(nvidia-smi exited with status " + std::to_string(rc) + ")\n";
    }
    t["nvidia_smi_topo"] = out;
  } else {
    t["nvidia_smi_topo"] = nullptr;
    t["nvidia_smi_note"] = "nvidia-smi is absent on this host";
  }
  json p2p = json::array();
#ifdef HALO3D_HAVE_CUDA
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) (void)cudaGetLastError(), n = 0;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      int access = 0, rank = 0, atomics = 0;
      HALO3D_CUDA_CHECK(cudaDeviceGetP2PAttribute(&access, cudaDevP2PAttrAccessSupported, a, b));
      HALO3D_CUDA_CHECK(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, a, b));
      HALO3D_CUDA_CHECK(
          cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, a, b));
      p2p.push_back({{"from", a},
                     {"to", b},
                     {"from_bus", ipc::bus_id_of(a)},
                     {"to_bus", ipc::bus_id_of(b)},
                     {"access_supported", access != 0},
                     {"performance_rank", rank},
                     {"native_atomics", atomics != 0}});
    }
  t["visible_gpus"] = n;
#else
  t["visible_gpus"] = 0;
#endif
  t["p2p"] = p2p;
  return t;
}

// One-way time for `bytes`, interpolated in the measured (size, time) table.
double one_way_at(const json& rows, double bytes) {
  std::vector<std::pair<double, double>> v;
  for (const auto& r : rows) v.emplace_back(r["bytes"].get<double>(), r["latency_s"].get<double>());
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  if (bytes <= v.front().first) return v.front().second;
  if (bytes >= v.back().first) return v.back().second * bytes / v.back().first;
  for (std::size_t i = 1; i < v.size(); ++i)
    if (bytes <= v[i].first) {
      const double f = (bytes - v[i - 1].first) / (v[i].first - v[i - 1].first);
      return v[i - 1].second + f * (v[i].second - v[i - 1].second);
    }
  return v.back().second;
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
  std::size_t cap = 0;  // doubles in each buffer: the largest size, rounded up
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
  const std::size_t max_bytes = *std::max_element(s.sizes.begin(), s.sizes.end());
  s.cap = (max_bytes + sizeof(double) - 1) / sizeof(double);
  MPI_Comm dup = MPI_COMM_NULL;
  HALO3D_MPI_CHECK(MPI_Comm_dup(world, &dup));
  s.comm = Comm(dup);
  return s;
}

// Peer access as each rank sees every other rank's GPU: row r is rank r's view (collective).
std::vector<json> peer_matrix(const Setup& s, MPI_Comm world) {
  std::vector<std::string> row;
  for (int j = 0; j < s.size; ++j)
    row.push_back(peer_relation(s.gpus, s.rank, j, s.policy, s.cuda));
  json my_row = row;
  std::vector<json> matrix;
  for (const std::string& r : allgather_strings(my_row.dump(), world))
    matrix.push_back(json::parse(r));
  return matrix;
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
      "sizes %s to %s, %d round trips per size after %d warm-up, median; latency = round trip / "
      "2\n",
      human_bytes(s.sizes.front()).c_str(), human_bytes(s.sizes.back()).c_str(), o.reps, o.warmup);
  if (s.size == 1) std::printf("one rank: no pairs to measure\n");
}

// The ping-pong buffers, the sent one filled with data that is not all zeros.
Bufs make_buffers(const Setup& s) {
  Kernels& k = *s.kernels;
  Bufs b;
  b.dev_a = Buffer(k, s.cap, Memory::device);
  b.dev_b = Buffer(k, s.cap, Memory::device);
  if (s.cuda) {
    b.pin_a = Buffer(k, s.cap, Memory::host_pinned);
    b.pin_b = Buffer(k, s.cap, Memory::host_pinned);
  }
  std::vector<double> fill(s.cap);
  for (std::size_t i = 0; i < s.cap; ++i) fill[i] = double(i % 1000) + 0.5;
  k.copy(b.dev_a.data(), fill.data(), s.cap, Lane::interior);
  k.synchronize();
  return b;
}

// Why nccl is not measured between a pair where it is not (a build without NCCL, no GPU, or
// both ranks on one GPU).
const char* why_no_nccl(bool cuda) {
  return !nccl_compiled() ? "not compiled"
         : !cuda          ? "no GPU"
                          : "same GPU (NCCL needs one GPU per rank)";
}

// Ranks i < j (this rank is one of them) measure every transport that can run between them;
// the result (rows on the ping rank i only) and why each other transport was skipped.
json measure_pair(const ProbeOptions& o, const Setup& s, Bufs& b, int i, int j,
                  const std::vector<json>& matrix) {
  Kernels& k = *s.kernels;
  const bool cuda = s.cuda;
  const bool ping = s.rank == i;
  const int peer = ping ? j : i;
  const bool same_host = s.gpus[i].host == s.gpus[j].host;
  const bool same_gpu = cuda && same_host && s.gpus[i].bus == s.gpus[j].bus;
  json pr = {{"a", i},
             {"b", j},
             {"same_host", same_host},
             {"same_gpu", same_gpu},
             {"peer_access", matrix[i][j]},
             {"transports", json::object()},
             {"skipped", json::object()}};
  auto run = [&](Transport t, PingPong& pp) {
    pr["transports"][to_string(t)] = measure(pp, ping, s.sizes, std::max(o.warmup, 1), o.reps);
  };
  {
    MpiPingPong pp(k, b, s.comm.get(), peer, ping);
    run(Transport::mpi, pp);
  }
  if (s.cuda_aware) {
    MpiCudaPingPong pp(k, b, s.comm.get(), peer, ping);
    run(Transport::mpi_cuda, pp);
  } else {
    pr["skipped"][to_string(Transport::mpi_cuda)] = cuda ? "the MPI is not CUDA-aware" : "no GPU";
  }
#ifdef HALO3D_HAVE_CUDA
  if (cuda && same_host) {
    IpcPingPong pp(k, b, s.comm.get(), peer, ping, s.cap, s.policy);
    pr["ipc_how"] = pp.how();
    if (pp.ok())
      run(Transport::ipc, pp);
    else
      pr["skipped"][to_string(Transport::ipc)] = pp.how();
  } else
#endif
  {
    pr["skipped"][to_string(Transport::ipc)] = !cuda ? "no GPU" : "other host";
  }
#ifdef HALO3D_HAVE_NCCL
  if (cuda && !same_gpu) {
    NcclPingPong pp(k, b, s.comm.get(), peer, ping);
    run(Transport::nccl, pp);
  } else
#endif
  {
    pr["skipped"][to_string(Transport::nccl)] = why_no_nccl(cuda);
  }
  k.synchronize();
  return pr;
}

// Every pair in turn while the other ranks wait (collective); on rank 0, every pair's results.
json measure_pairs(const ProbeOptions& o, const Setup& s, Bufs& b, const std::vector<json>& matrix,
                   MPI_Comm world) {
  json pairs = json::array();
  for (int i = 0; i < s.size; ++i)
    for (int j = i + 1; j < s.size; ++j) {
      if (s.rank == i || s.rank == j) {
        const json pr = measure_pair(o, s, b, i, j, matrix);
        if (s.rank == i) {  // the ping rank has the rows
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

// Every host's GPU topology, from the first rank of each host (collective).
json gather_topology(const Setup& s, MPI_Comm world) {
  json topology = json::array();
  const std::string mine = s.hosts.local_rank == 0 ? local_topology(s.hosts).dump() : std::string();
  for (const std::string& t : allgather_strings(mine, world))
    if (!t.empty()) topology.push_back(json::parse(t));
  return topology;
}

// The bytes of each face the busiest rank of `procs` (the one sending the most) sends in
// one exchange of `grid`; `worst_bytes` is their sum.
std::vector<double> busiest_faces(const Int3& grid, const Int3& procs, double& worst_bytes) {
  std::vector<double> worst_faces;
  worst_bytes = -1;
  for (int c0 = 0; c0 < procs[0]; ++c0)
    for (int c1 = 0; c1 < procs[1]; ++c1)
      for (int c2 = 0; c2 < procs[2]; ++c2) {
        const int c[3] = {c0, c1, c2};
        int n[3];
        for (int a = 0; a < 3; ++a) n[a] = split_axis(grid[a], procs[a], c[a]).count;
        const Layout box{n[0], n[1], n[2]};
        std::vector<double> faces;
        for (int a = 0; a < 3; ++a)
          for (int side = 0; side < 2; ++side)
            if ((side == 0 && c[a] > 0) || (side == 1 && c[a] < procs[a] - 1)) {
              int na, nb;
              ops::face_dims(box, Face{a, side}, na, nb);  // as the exchange sends it
              faces.push_back(8.0 * na * nb);
            }
        double total = 0;
        for (double f : faces) total += f;
        if (total > worst_bytes) worst_bytes = total, worst_faces = faces;
      }
  return worst_faces;
}

// The communication wall: the busiest rank's faces per iteration at the measured speeds
// (null without --grid or with one rank; the seconds on rank 0 only, which has the pairs).
json communication_wall(const ProbeOptions& o, const Setup& s, const json& pairs) {
  json wall;
  if (!(o.grid[0] > 0 && s.size > 1)) return wall;
  const Int3 procs = s.wall_procs;
  double worst_bytes = -1;
  const std::vector<double> worst_faces = busiest_faces(o.grid, procs, worst_bytes);
  wall = {{"grid", {o.grid[0], o.grid[1], o.grid[2]}},
          {"procs", {procs[0], procs[1], procs[2]}},
          {"busiest_rank_face_bytes", worst_faces},
          {"bytes_per_exchange", worst_bytes},
          {"seconds_per_iteration", json::object()}};
  if (s.root)
    for (Transport t : concrete_transports()) {
      const std::string name = to_string(t);
      double worst = -1;  // the slowest pair that measured this transport
      for (const auto& p : pairs) {
        if (!p["transports"].contains(name)) continue;
        double t = 0;
        for (double f : worst_faces) t += one_way_at(p["transports"][name], f);
        worst = std::max(worst, t);
      }
      if (worst >= 0) wall["seconds_per_iteration"][name] = worst;
    }
  return wall;
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

void print_topology(const json& topology) {
  for (const auto& t : topology) {
    std::printf("\ntopology of host %s:\n", t["host"].get<std::string>().c_str());
    if (t["nvidia_smi_topo"].is_null())
      std::printf("  nvidia-smi topo -m: nvidia-smi is absent\n");
    else
      std::printf("%s", t["nvidia_smi_topo"].get<std::string>().c_str());
    if (t["p2p"].empty()) std::printf("  CUDA P2P attributes: fewer than two GPUs visible\n");
    for (const auto& q : t["p2p"])
      std::printf("  GPU %d -> GPU %d: P2P access %s, performance rank %d, native atomics %s\n",
                  q["from"].get<int>(), q["to"].get<int>(),
                  q["access_supported"].get<bool>() ? "yes" : "no",
                  q["performance_rank"].get<int>(), q["native_atomics"].get<bool>() ? "yes" : "no");
  }
}

void print_wall(const ProbeOptions& o, const Setup& s, const json& wall) {
  std::printf(
      "\ncommunication wall, --grid %s as %s: the busiest rank sends %zu face(s), %.3g MB per "
      "exchange "
      "(one per CG iteration); halo alone, faces one after another, slowest pair:",
      to_string(o.grid).c_str(), to_string(s.wall_procs).c_str(),
      wall["busiest_rank_face_bytes"].size(), wall["bytes_per_exchange"].get<double>() / 1e6);
  for (const auto& [n, t] : wall["seconds_per_iteration"].items())
    std::printf(" %s %.3g ms", n.c_str(), t.get<double>() * 1e3);
  std::printf("\n");
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
  const std::vector<json> matrix = peer_matrix(s, world);
  if (s.root) print_header(o, s);
  Bufs b = make_buffers(s);
  const json pairs = measure_pairs(o, s, b, matrix, world);
  const json topology = o.topology ? gather_topology(s, world) : json::array();
  const json wall = communication_wall(o, s, pairs);

  if (!s.root) return kExitOk;
  for (const auto& p : pairs) print_pair(p, s.sizes, s.cuda);
  if (o.topology) print_topology(topology);
  if (!wall.is_null()) print_wall(o, s, wall);
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
