// What the two standalone GPU probes (pattern_probe.cu, sweep_probe.cu) share: the error
// check, random fill, bitwise comparison, and the timing (warm-up, CUDA events, median)
// with its report line as a fraction of a copy measured in the same run.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                          \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

// Uniform values in [-0.5, 0.5) from a hash of the index (never zeros).
__global__ void fill(double* u, long n) {
  for (long k = blockIdx.x * long(blockDim.x) + threadIdx.x; k < n;
       k += long(gridDim.x) * blockDim.x) {
    unsigned long long h = (k + 1) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    u[k] = double(h >> 11) * 0x1p-53 - 0.5;
  }
}

__global__ void count_diff(const double* a, const double* b, long n, unsigned long long* bad) {
  for (long k = blockIdx.x * long(blockDim.x) + threadIdx.x; k < n;
       k += long(gridDim.x) * blockDim.x)
    if (a[k] != b[k]) atomicAdd(bad, 1ull);
}

// Prints a MISMATCH line if a and b (n doubles on the device) differ anywhere; `bad` is one
// device counter of scratch.
inline void report_mismatch(const double* a, const double* b, long n, unsigned long long* bad,
                            const char* against) {
  CK(cudaMemset(bad, 0, sizeof *bad));
  count_diff<<<1024, 256>>>(a, b, n, bad);
  unsigned long long nbad = 0;
  CK(cudaMemcpy(&nbad, bad, sizeof nbad, cudaMemcpyDeviceToHost));
  if (nbad) std::printf("  MISMATCH: %llu points differ from %s\n", nbad, against);
}

struct Timer {
  int reps = 20;
  double copy_gbs = 0;  // the ceiling the report compares with (0: none yet)
  cudaEvent_t t0{}, t1{};

  Timer() {
    CK(cudaEventCreate(&t0));
    CK(cudaEventCreate(&t1));
  }
  ~Timer() {
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
  }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // 3 warm-up calls, then the median of `reps`, each timed with CUDA events.
  template <class F>
  double median_ms(F f) {
    for (int w = 0; w < 3; ++w) f();
    std::vector<float> ms(reps);
    for (int k = 0; k < reps; ++k) {
      CK(cudaEventRecord(t0));
      f();
      CK(cudaEventRecord(t1));
      CK(cudaEventSynchronize(t1));
      CK(cudaEventElapsedTime(&ms[k], t0, t1));
    }
    CK(cudaGetLastError());
    std::sort(ms.begin(), ms.end());
    return ms[reps / 2];
  }
  // One line: name, registers, median, GB/s of `bytes`, and the fraction of copy_gbs.
  void report(const char* name, double ms, double bytes, int regs) const {
    const double gbs = bytes / ms * 1e-6;
    std::printf("%-40s %4d regs %9.4f ms %8.1f GB/s %6.1f%%\n", name, regs, ms, gbs,
                copy_gbs > 0 ? 100.0 * gbs / copy_gbs : 100.0);
    std::fflush(stdout);
  }
};
