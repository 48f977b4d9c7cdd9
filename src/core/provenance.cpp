#include "provenance.hpp"

#include <ctime>

#include "build_info.hpp"

namespace halo3d {

void add_provenance(nlohmann::json& j, const std::vector<std::string>& command_line,
                    const std::vector<OptionSource>& sources, const HostMap& hosts) {
  j["command_line"] = command_line;
  nlohmann::json opts = nlohmann::json::array();
  for (const OptionSource& s : sources)
    opts.push_back({{"name", s.name}, {"value", s.value}, {"source", s.source}});
  j["options"] = opts;
  char stamp[32] = "unknown";
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  if (gmtime_r(&now, &utc)) std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
  j["timestamp_utc"] = stamp;
  j["host_names"] = hosts.hosts;
  j["git_revision"] = git_revision();
  j["build"] = {{"type", build_type()},
                {"cuda_architectures", cuda_architectures()},
                {"host_march", host_march()}};
}

}  // namespace halo3d
