// How this binary was built, as recorded in reports: configure-time values.
#pragma once
#include <string>

namespace halo3d {

std::string version_string();      // the project version (CMake's PROJECT_VERSION)
std::string git_revision();        // `git describe --always --dirty` at configure, or "unknown"
std::string build_type();          // CMAKE_BUILD_TYPE, or "unknown" when empty
std::string cuda_architectures();  // e.g. "80-real,86-real,89-real,90", "none" without CUDA

}  // namespace halo3d
