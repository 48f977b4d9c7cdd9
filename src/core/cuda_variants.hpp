// The CUDA kernel variants forced from the environment, for the tests and measurements
// (tests/gpu/device_checks.sh, bench/gpu/kernel_variants.sh): read once, here, before the
// backend is made, so the backend itself reads no environment.
#pragma once
#include "kernels.hpp"

namespace halo3d {

// HALO3D_CUDA_APPLY=auto|naive|tile3d|smem, HALO3D_CUDA_ROWS=vec2|flat and
// HALO3D_CUDA_GRAPHS=off|on; unset or empty: the defaults (auto =
// CudaVariants::Sweep::fastest, vec2, off). Any other value: BadInput.
CudaVariants cuda_variants_from_env();

}  // namespace halo3d
