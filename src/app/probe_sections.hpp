// The sections of `halo3d probe` around its measurements (probe_sections.cpp): peer access
// between the ranks' GPUs, --topology (each host's GPU topology) and --grid (the
// "communication wall" estimated from the measured pairs).
#pragma once
#include <mpi.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mpi_env.hpp"
#include "options.hpp"
#include "transports/transports.hpp"

namespace halo3d::probe {

// Every rank's string, on every rank (collective).
std::vector<std::string> allgather_strings(const std::string& mine, MPI_Comm comm);

// Peer access as each rank sees every other rank's GPU: row r is rank r's view ("self",
// "other host", "no GPU", "same GPU", "yes", "no", ...). Collective.
std::vector<nlohmann::json> peer_matrix(const std::vector<RankGpu>& gpus, const PeerPolicy& policy,
                                        bool cuda, MPI_Comm world);

// Every host's GPU topology, from the first rank of each host (collective).
nlohmann::json gather_topology(const HostMap& hosts, MPI_Comm world);
void print_topology(const nlohmann::json& topology);

// The busiest rank's faces per iteration of `grid` on `procs` at the speeds measured in
// `pairs` (the seconds on the rank that has the pairs, which passes `have_pairs`).
nlohmann::json communication_wall(const Int3& grid, const Int3& procs, const nlohmann::json& pairs,
                                  bool have_pairs);
void print_wall(const nlohmann::json& wall);

}  // namespace halo3d::probe
