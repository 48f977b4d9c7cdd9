// What a report records about where a run came from: the command line, every option with
// its value and source, when and where it ran, and how halo3d was built.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mpi_env.hpp"

namespace halo3d {

// One option of a run as finally set: its long name without dashes, its value as text,
// and where the value came from: "default", "config file" or "command line".
struct OptionSource {
  std::string name, value, source;
};

// Adds command_line, options, timestamp_utc, host_names, git_revision and build to j.
// command_line: the words as given; sources: every option with its value and source.
void add_provenance(nlohmann::json& j, const std::vector<std::string>& command_line,
                    const std::vector<OptionSource>& sources, const HostMap& hosts);

}  // namespace halo3d
