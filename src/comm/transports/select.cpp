// Choosing a halo transport: by name, or (auto) the fastest one possible here, timed at
// start-up on the real faces; and the facts all ranks must agree on first.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "errors.hpp"
#include "transports/transports.hpp"
#include "transports_info.hpp"

namespace halo3d {

PeerPolicy peer_policy(PeerAccess option) {
  PeerPolicy p;
  p.allowed = option == PeerAccess::auto_;
  if (!p.allowed) p.why_off = "--peer-access off";
  return p;
}

bool all_cuda_aware_mpi(MPI_Comm comm) {
  int mine = cuda_aware_mpi_now() ? 1 : 0, all = 0;
  HALO3D_MPI_CHECK(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm));
  return all == 1;
}

std::vector<RankGpu> gather_rank_gpus(Kernels& k, const HostMap& hosts, MPI_Comm comm) {
  char mine[32] = {};
  if (k.device() >= 0)
    for (const GpuInfo& g : cuda_devices())
      if (g.ordinal == k.device()) std::snprintf(mine, sizeof mine, "%s", g.pci_bus_id.c_str());
  const int size = comm_size(comm);
  std::vector<char> all(32 * std::size_t(size));
  HALO3D_MPI_CHECK(MPI_Allgather(mine, 32, MPI_CHAR, all.data(), 32, MPI_CHAR, comm));
  std::vector<RankGpu> out(size);
  for (int r = 0; r < size; ++r) {
    out[r].host = hosts.rank_host_index.at(r);
    out[r].bus.assign(&all[32 * std::size_t(r)], strnlen(&all[32 * std::size_t(r)], 32));
    for (char& ch : out[r].bus) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  }
  return out;
}

std::string shared_gpu(const std::vector<RankGpu>& g, const HostMap& hosts) {
  for (std::size_t i = 0; i < g.size(); ++i)
    for (std::size_t j = i + 1; j < g.size(); ++j)
      if (!g[i].bus.empty() && g[i].host == g[j].host && g[i].bus == g[j].bus)
        return "ranks " + std::to_string(i) + " and " + std::to_string(j) + " share GPU " +
               g[i].bus + " on host " + hosts.hosts.at(g[i].host);
  return "";
}

double time_exchange(HaloTransport& t, Kernels& k, double* u, int warmup, int reps, MPI_Comm comm) {
  for (int i = 0; i < warmup; ++i) {  // NCCL connects, and IPC maps, on first use
    t.start(u);
    t.finish(u);
    k.synchronize();
  }
  std::vector<double> s;
  for (int i = 0; i < reps; ++i) {
    HALO3D_MPI_CHECK(MPI_Barrier(comm));
    const double t0 = MPI_Wtime();
    t.start(u);
    t.finish(u);
    k.synchronize();
    s.push_back(MPI_Wtime() - t0);
  }
  std::sort(s.begin(), s.end());
  double median = s.empty() ? 0.0 : s[s.size() / 2];
  HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &median, 1, MPI_DOUBLE, MPI_MAX, comm));
  return median;
}

std::unique_ptr<HaloTransport> make_named_transport(Transport name, const TransportContext& c) {
  switch (name) {
    case Transport::mpi:
      return make_mpi_transport(c.k, c.plan, c.comm);
    case Transport::mpi_cuda:
      return make_mpi_cuda_transport(c);
    case Transport::ipc:
      return make_ipc_transport(c);
    case Transport::nccl:
      return make_nccl_transport(c);
    case Transport::auto_:
      break;
  }
  throw Error(kExitFailure, "make_named_transport: auto is not one transport");
}

namespace {

std::vector<std::string> gather_strings(const std::string& mine, MPI_Comm comm) {
  const int size = comm_size(comm), rank = comm_rank(comm);
  int len = int(mine.size());
  std::vector<int> lens(rank == 0 ? size : 0), offs(rank == 0 ? size : 0);
  HALO3D_MPI_CHECK(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm));
  std::vector<char> all;
  if (rank == 0) {
    int total = 0;
    for (int r = 0; r < size; ++r) offs[r] = total, total += lens[r];
    all.resize(std::size_t(std::max(total, 1)));
  }
  HALO3D_MPI_CHECK(MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), offs.data(),
                               MPI_CHAR, 0, comm));
  std::vector<std::string> out;
  for (int r = 0; r < (rank == 0 ? size : 0); ++r)
    out.emplace_back(&all[offs[r]], std::size_t(lens[r]));
  return out;
}

// Why auto does not time transport t here ("" when it does); same_host: faces to
// neighbours on this host, summed over the ranks. Collective.
std::string why_not_candidate(Transport t, const TransportContext& c, long long same_host) {
  switch (t) {
    case Transport::mpi_cuda:
      return all_cuda_aware_mpi(c.comm) ? "" : "the MPI is not CUDA-aware";
    case Transport::ipc:
      return same_host > 0 ? "" : "no neighbours on the same host";
    case Transport::nccl:
      return !nccl_compiled() ? "not compiled"
                              : shared_gpu(gather_rank_gpus(c.k, c.hosts, c.comm), c.hosts);
    default:
      return "";
  }
}

std::unique_ptr<HaloTransport> select_auto(const TransportContext& c, HaloSelection& sel) {
  if (c.k.device() < 0) {  // no GPU behind these kernels
    sel.reason = "host backend: mpi is the only transport";
    return make_mpi_transport(c.k, c.plan, c.comm);
  }
  long long faces = (long long)c.plan.faces.size(), same_host = 0;
  for (const HaloFace& f : c.plan.faces)
    same_host += c.hosts.rank_host_index.at(f.neighbor) == c.hosts.host_index;
  long long v[2] = {faces, same_host};
  HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_LONG_LONG, MPI_SUM, c.comm));
  if (v[0] == 0) {
    sel.reason = "no halo to exchange (one rank)";
    return make_mpi_transport(c.k, c.plan, c.comm);
  }
  // Candidates, in order of preference on a tie (the table's order); why each other is not.
  std::vector<Transport> names;
  for (Transport t : concrete_transports()) {
    const std::string why = why_not_candidate(t, c, v[1]);
    if (why.empty())
      names.push_back(t);
    else
      sel.skipped.emplace_back(t, why);
  }
  Buffer u(c.k, c.plan.layout.padded_size());
  std::unique_ptr<HaloTransport> best;
  double best_s = 0;
  for (Transport n : names) {
    std::unique_ptr<HaloTransport> t;
    try {
      t = make_named_transport(n, c);
    } catch (const Error& e) {  // collective: every rank skips it alike
      if (e.code() != kExitUnavailable) throw;
      sel.skipped.emplace_back(n, e.what());
      continue;
    }
    const double s = time_exchange(*t, c.k, u.data(), 10, 30, c.comm);
    sel.candidates.emplace_back(n, s);
    if (!best || s < best_s) best = std::move(t), best_s = s;  // identical on all ranks
  }
  sel.reason =
      "fastest median exchange of the slowest rank (30 timed after 10 warm-up, real faces)";
  return best;
}

}  // namespace

std::unique_ptr<HaloTransport> select_transport(Transport requested, const TransportContext& c,
                                                HaloSelection& sel) {
  sel = HaloSelection{};
  sel.requested = requested;
  auto t = requested == Transport::auto_ ? select_auto(c, sel) : make_named_transport(requested, c);
  sel.chosen = t->kind();
  sel.details = gather_strings(t->describe(), c.comm);
  return t;
}

void print_halo_selection(const HaloSelection& s) {
  if (s.requested == Transport::auto_) {
    std::string line = "halo auto: chose " + to_string(s.chosen) + " (" + s.reason + ")";
    if (!s.candidates.empty()) {
      line += "; seconds per exchange:";
      for (const auto& [n, t] : s.candidates) {
        char b[64];
        std::snprintf(b, sizeof b, " %s %.3e", to_string(n).c_str(), t);
        line += b;
      }
    }
    std::printf("%s\n", line.c_str());
    for (const auto& [n, why] : s.skipped)
      std::printf("halo auto: not tried: %s (%s)\n", to_string(n).c_str(), why.c_str());
  }
  // What each rank detected and uses, where there is more than one way (ipc, mixed).
  if (s.chosen == Transport::ipc && s.details.size() <= 16)
    for (std::size_t r = 0; r < s.details.size(); ++r)
      std::printf("halo rank %zu: %s\n", r, s.details[r].c_str());
  std::fflush(stdout);
}

}  // namespace halo3d
