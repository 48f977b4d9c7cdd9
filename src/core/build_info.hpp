// How this binary was built, as recorded in reports: configure-time values.
#pragma once
#include <string>

namespace halo3d {

std::string version_string();      // the project version (CMake's PROJECT_VERSION)
std::string git_revision();        // `git describe --always --dirty` at configure, or "unknown"
std::string build_type();          // CMAKE_BUILD_TYPE, or "unknown" when empty
std::string cuda_architectures();  // e.g. "80-real,86-real,89-real,90", "none" without CUDA
std::string host_march();          // the host kernels' -march ("x86-64-v3"), "baseline" without
// Empty where this CPU runs the host kernels; else why not, in one line (they were compiled
// for an x86-64 level, HALO3D_HOST_ISA, that the CPU lacks: they would die of SIGILL).
std::string host_isa_error();
// host_isa_error's message for a binary built for `isa` on a CPU without it.
std::string host_isa_message(const std::string& isa);

}  // namespace halo3d
