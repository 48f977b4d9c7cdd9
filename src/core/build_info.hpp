// How this binary was built, as recorded in reports: configure-time values.
#pragma once
#include <string>

namespace halo3d {

std::string version_string();      // the project version (CMake's PROJECT_VERSION)
std::string git_revision();        // `git describe --always --dirty` at configure, or "unknown"
std::string build_type();          // CMAKE_BUILD_TYPE, or "unknown" when empty
std::string cuda_architectures();  // e.g. "80-real,86-real,89-real,90", "none" without CUDA
std::string host_march();          // the host kernels' -march ("x86-64-v3"), "baseline" without
// Whether this CPU has the x86-64 level the host kernels were compiled for (HALO3D_HOST_ISA,
// where host_march() is one; without it they would die of SIGILL); true for other builds.
bool host_isa_supported();

}  // namespace halo3d
