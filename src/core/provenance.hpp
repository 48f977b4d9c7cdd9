// What a report records about where a run came from: the command line, every option with
// its value and source, when and where it ran, and how halo3d was built.
#pragma once
#include <nlohmann/json.hpp>

#include "mpi_env.hpp"
#include "options.hpp"

namespace halo3d {

// Adds command_line, options, timestamp_utc, host_names, git_revision and build to j.
void add_provenance(nlohmann::json& j, const SolveOptions& o, const HostMap& hosts);

}  // namespace halo3d
