// Linked instead of the CUDA backend when the build has no CUDA, so callers get a clear
// error at run time rather than a link failure.
#include "kernels.hpp"

namespace halo3d {

std::unique_ptr<Kernels> make_cuda_kernels(int, const CudaVariants&) {
  throw BackendUnavailable(
      "--backend cuda: this halo3d was built without CUDA (reconfigure with nvcc on PATH or "
      "-DHALO3D_ENABLE_CUDA=ON)");
}
bool cuda_compiled() { return false; }
std::vector<GpuInfo> cuda_devices() { return {}; }
std::string cuda_runtime_version() { return ""; }
std::string cuda_driver_version() { return ""; }

}  // namespace halo3d
