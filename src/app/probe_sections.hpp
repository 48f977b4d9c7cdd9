// The optional sections of `halo3d probe` (probe_sections.cpp): --topology (each host's
// GPU topology) and --grid (the "communication wall" estimated from the measured pairs).
#pragma once
#include <mpi.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mpi_env.hpp"
#include "options.hpp"

namespace halo3d::probe {

// Every rank's string, on every rank (collective).
std::vector<std::string> allgather_strings(const std::string& mine, MPI_Comm comm);

// Every host's GPU topology, from the first rank of each host (collective).
nlohmann::json gather_topology(const HostMap& hosts, MPI_Comm world);
void print_topology(const nlohmann::json& topology);

// The busiest rank's faces per iteration of `grid` on `procs` at the speeds measured in
// `pairs` (the seconds on the rank that has the pairs, which passes `have_pairs`).
nlohmann::json communication_wall(const Int3& grid, const Int3& procs, const nlohmann::json& pairs,
                                  bool have_pairs);
void print_wall(const nlohmann::json& wall);

}  // namespace halo3d::probe
