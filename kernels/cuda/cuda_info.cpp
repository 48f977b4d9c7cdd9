// What CUDA this build and machine offer; never throws, so it is safe to call for
// reports and --help on machines without a driver or GPU.
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "kernels.hpp"

namespace halo3d {
namespace {
// 13000 -> "13.0"
std::string version_string(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}
}  // namespace

bool cuda_compiled() { return true; }

std::vector<GpuInfo> cuda_devices() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return {};
  }
  std::vector<GpuInfo> gpus;
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
      (void)cudaGetLastError();
      continue;
    }
    GpuInfo g;
    g.ordinal = d;
    g.name = prop.name;
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, d) == cudaSuccess)
      g.pci_bus_id = bus;
    else
      (void)cudaGetLastError();
    g.cc_major = prop.major;
    g.cc_minor = prop.minor;
    g.memory_bytes = prop.totalGlobalMem;
    gpus.push_back(g);
  }
  return gpus;
}

std::string cuda_runtime_version() {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess || v <= 0) return "";
  return version_string(v);
}

std::string cuda_driver_version() {
  int v = 0;  // stays 0 when no driver is installed
  if (cudaDriverGetVersion(&v) != cudaSuccess || v <= 0) return "";
  return version_string(v);
}

}  // namespace halo3d
