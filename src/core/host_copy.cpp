#include "host_copy.hpp"

namespace halo3d {

Buffer upload(Kernels& k, const std::vector<double>& host) {
  Buffer b(k, host.size());
  upload_to(k, host, b.data());
  return b;
}

std::vector<double> download(Kernels& k, const Buffer& b) {
  std::vector<double> host;
  download_to(k, b.data(), b.size(), host);
  return host;
}

}  // namespace halo3d
