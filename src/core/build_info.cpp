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

namespace halo3d {

std::string version_string() { return HALO3D_VERSION; }
std::string git_revision() { return HALO3D_GIT_REVISION; }
std::string build_type() {
  const std::string t = HALO3D_BUILD_TYPE;
  return t.empty() ? "unknown" : t;
}
std::string cuda_architectures() { return HALO3D_CUDA_ARCHS; }

}  // namespace halo3d
