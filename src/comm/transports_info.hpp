// What the halo transports can use on this build and machine, for `halo3d info`.
#pragma once
#include <string>

namespace halo3d {

std::string nccl_version_string();    // "2.28.3", or "not compiled"
std::string cuda_aware_mpi_string();  // "yes", "no", or "unknown (...)"
// Whether this rank's MPI, as loaded now, takes device pointers (false where it cannot say).
bool cuda_aware_mpi_now();

}  // namespace halo3d
