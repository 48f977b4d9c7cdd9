// Error handling for the CUDA backend: every runtime call goes through HALO3D_CUDA_CHECK,
// so a failure surfaces as one typed exception naming the call and where it was made,
// instead of a later, unrelated failure.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

#include "error.hpp"

namespace halo3d {

// A failed CUDA call: exit code 1, seen by this rank only (the job is aborted).
class CudaError : public Error {
 public:
  CudaError(cudaError_t code, const char* expr, const char* file, int line)
      : Error(kExitFailure, message(code, expr, file, line), false), cuda_code_(code) {}
  // For conditions the backend detects itself (e.g. a reduction scratch overflow).
  explicit CudaError(const std::string& what, cudaError_t code = cudaErrorUnknown)
      : Error(kExitFailure, "CUDA backend: " + what, false), cuda_code_(code) {}

  cudaError_t cuda_code() const noexcept { return cuda_code_; }

  static std::string message(cudaError_t code, const char* expr, const char* file, int line) {
    return std::string("CUDA error: ") + expr + " failed: " + cudaGetErrorString(code) + " (" +
           cudaGetErrorName(code) + ") at " + file + ":" + std::to_string(line);
  }

 private:
  cudaError_t cuda_code_;
};

namespace detail {
// Destructors and other noexcept paths cannot throw; a failed release there is logged so
// that it is not silently lost.
inline void log_cuda_failure(cudaError_t code, const char* expr, const char* file,
                             int line) noexcept {
  // At process exit the runtime may already be gone; releasing then is moot, not an error.
  if (code == cudaErrorCudartUnloading) return;
  std::fprintf(stderr, "halo3d: %s\n", CudaError::message(code, expr, file, line).c_str());
}
}  // namespace detail

}  // namespace halo3d

#define HALO3D_CUDA_CHECK(expr)                                               \
  do {                                                                        \
    const cudaError_t halo3d_cuda_err_ = (expr);                              \
    if (halo3d_cuda_err_ != cudaSuccess)                                      \
      throw ::halo3d::CudaError(halo3d_cuda_err_, #expr, __FILE__, __LINE__); \
  } while (false)

// After every <<<>>>: a bad launch configuration is reported by the next runtime call
// otherwise, far from its cause.
#define HALO3D_CUDA_CHECK_LAUNCH()                                                      \
  do {                                                                                  \
    const cudaError_t halo3d_cuda_err_ = cudaGetLastError();                            \
    if (halo3d_cuda_err_ != cudaSuccess)                                                \
      throw ::halo3d::CudaError(halo3d_cuda_err_, "kernel launch", __FILE__, __LINE__); \
  } while (false)

// The non-throwing form, for destructors and noexcept functions only.
#define HALO3D_CUDA_CHECK_NOTHROW(expr)                                                \
  do {                                                                                 \
    const cudaError_t halo3d_cuda_err_ = (expr);                                       \
    if (halo3d_cuda_err_ != cudaSuccess)                                               \
      ::halo3d::detail::log_cuda_failure(halo3d_cuda_err_, #expr, __FILE__, __LINE__); \
  } while (false)
