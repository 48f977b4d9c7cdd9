#include "build_info.hpp"

#ifndef HALO3D_GIT_REVISION
#define HALO3D_GIT_REVISION "unknown"
#endif
#ifndef HALO3D_BUILD_TYPE
#define HALO3D_BUILD_TYPE ""
#endif
#ifndef HALO3D_CUDA_ARCHS
#define HALO3D_CUDA_ARCHS "none"
#endif
#ifndef HALO3D_HOST_MARCH
#define HALO3D_HOST_MARCH ""
#endif

namespace halo3d {

std::string version_string() { return HALO3D_VERSION; }
std::string git_revision() { return HALO3D_GIT_REVISION; }
std::string build_type() {
  const std::string t = HALO3D_BUILD_TYPE;
  return t.empty() ? "unknown" : t;
}
std::string cuda_architectures() { return HALO3D_CUDA_ARCHS; }
std::string host_march() {
  const std::string m = HALO3D_HOST_MARCH;
  return m.empty() ? "baseline" : m;
}
bool host_isa_supported() {
#ifdef HALO3D_HOST_ISA
  // Here, compiled without -march, before any host kernel runs.
  __builtin_cpu_init();
  return __builtin_cpu_supports(HALO3D_HOST_ISA);
#else
  return true;
#endif
}

}  // namespace halo3d
