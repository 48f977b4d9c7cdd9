// The sections of `halo3d probe` around its measurements: peer access between the ranks' GPUs,
// --topology and --grid's communication wall.
#include "probe_sections.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "choices.hpp"
#include "decomposition.hpp"
#include "pair_probe.hpp"
#include "point_ops.hpp"

namespace halo3d::probe {

using nlohmann::json;

namespace {

// How rank `me` sees peer access to rank `other`'s GPU.
std::string peer_relation(const std::vector<RankGpu>& g, int me, int other,
                          const PeerPolicy& policy, bool cuda) {
  if (me == other) return "self";
  if (g[me].host != g[other].host) return "other host";
  if (!cuda) return "no GPU";
  if (g[me].bus == g[other].bus) return "same GPU";
  const int can = gpu_can_access_peer(g[me].bus, g[other].bus);
  if (can < 0)
    return "unknown (GPU " + g[other].bus + " not visible to rank " + std::to_string(me) + ")";
  if (can == 0) return "no";
  return policy.allowed ? "yes" : "yes (not used: " + policy.why_off + ")";
}

// nvidia-smi topo -m, or null (and a note) where nvidia-smi is absent.
void nvidia_smi_topology(json& t) {
  bool present = false;
  if (FILE* p = popen("command -v nvidia-smi 2>/dev/null", "r")) {
    char b[512];
    present = std::fgets(b, sizeof b, p) != nullptr;
    pclose(p);
  }
  if (!present) {
    t["nvidia_smi_topo"] = nullptr;
    t["nvidia_smi_note"] = "nvidia-smi is absent on this host";
    return;
  }
  std::string out;
  if (FILE* p = popen("nvidia-smi topo -m 2>&1", "r")) {
    char b[512];
    while (std::fgets(b, sizeof b, p)) out += b;
    const int rc = pclose(p);
    if (rc != 0) out += "(nvidia-smi exited with status " + std::to_string(rc) + ")\n";
  }
  t["nvidia_smi_topo"] = out;
}

// This host's GPU topology (run by the first rank of each host).
json local_topology(const HostMap& hosts) {
  json t;
  t["host"] = hosts.hosts.at(hosts.host_index);
  nvidia_smi_topology(t);
  int visible = 0;
  json p2p = json::array();
  for (const P2PLink& l : local_p2p_links(visible))
    p2p.push_back({{"from", l.from},
                   {"to", l.to},
                   {"from_bus", l.from_bus},
                   {"to_bus", l.to_bus},
                   {"access_supported", l.access_supported},
                   {"performance_rank", l.performance_rank},
                   {"native_atomics", l.native_atomics}});
  t["visible_gpus"] = visible;
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
        for (int a = 0; a < 3; ++a)
          n[a] = split_axis(grid[a], procs[a], c[a], odd_splits(grid[a], false)).count;
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

Int3 int3_of(const json& j) { return {j[0].get<int>(), j[1].get<int>(), j[2].get<int>()}; }

}  // namespace

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

std::vector<json> peer_matrix(const std::vector<RankGpu>& gpus, const PeerPolicy& policy, bool cuda,
                              MPI_Comm world) {
  const int rank = comm_rank(world);
  std::vector<std::string> row;
  for (int j = 0; j < comm_size(world); ++j)
    row.push_back(peer_relation(gpus, rank, j, policy, cuda));
  json my_row = row;
  std::vector<json> matrix;
  for (const std::string& r : allgather_strings(my_row.dump(), world))
    matrix.push_back(json::parse(r));
  return matrix;
}

json gather_topology(const HostMap& hosts, MPI_Comm world) {
  json topology = json::array();
  const std::string mine = hosts.local_rank == 0 ? local_topology(hosts).dump() : std::string();
  for (const std::string& t : allgather_strings(mine, world))
    if (!t.empty()) topology.push_back(json::parse(t));
  return topology;
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

json communication_wall(const Int3& grid, const Int3& procs, const json& pairs, bool have_pairs) {
  double worst_bytes = -1;
  const std::vector<double> worst_faces = busiest_faces(grid, procs, worst_bytes);
  json wall = {{"grid", {grid[0], grid[1], grid[2]}},
               {"procs", {procs[0], procs[1], procs[2]}},
               {"busiest_rank_face_bytes", worst_faces},
               {"bytes_per_exchange", worst_bytes},
               {"seconds_per_iteration", json::object()}};
  if (have_pairs)
    for (Transport t : concrete_transports()) {
      const std::string name = to_string(t);
      double worst = -1;  // the slowest pair that measured this transport
      for (const auto& p : pairs) {
        if (!p["transports"].contains(name)) continue;
        double s = 0;
        for (double f : worst_faces) s += one_way_at(p["transports"][name], f);
        worst = std::max(worst, s);
      }
      if (worst >= 0) wall["seconds_per_iteration"][name] = worst;
    }
  return wall;
}

void print_wall(const json& wall) {
  std::printf(
      "\ncommunication wall, --grid %s as %s: the busiest rank sends %zu face(s), %.3g MB per "
      "exchange "
      "(one per CG iteration); halo alone, faces one after another, slowest pair:",
      to_string(int3_of(wall["grid"])).c_str(), to_string(int3_of(wall["procs"])).c_str(),
      wall["busiest_rank_face_bytes"].size(), wall["bytes_per_exchange"].get<double>() / 1e6);
  for (const auto& [n, t] : wall["seconds_per_iteration"].items())
    std::printf(" %s %.3g ms", n.c_str(), t.get<double>() * 1e3);
  std::printf("\n");
}

}  // namespace halo3d::probe
