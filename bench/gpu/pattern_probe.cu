// Which access pattern costs the 7-point sweep its last 15%? A standalone probe (nvcc only):
// on halo3d's padded 512^3 layout it times, in one run, a cudaMemcpy of the field, a flat
// copy kernel, copies with the sweeps' launch shapes (centre only), and the 7-point sweep in
// the same shapes, with 1, 2 or 4 x-points per thread (8- or 16-byte loads). Each shape is
// a TX x TY thread tile, PX x-points per thread, T planes per thread, grid z slowest (as
// tile3d). Every 7-point result is checked against the first one.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o pattern_probe bench/gpu/pattern_probe.cu
//   ./pattern_probe [reps]
#include "probe_common.cuh"

constexpr int N = 512;
constexpr long SY = 520;  // halo3d's Layout: row offset 4, stride a multiple of 4
constexpr long SZ = SY * (N + 2);
constexpr long PAD = SZ * (N + 2);
__host__ __device__ inline long at(int i, int j, int k) {
  return (i + 4) + SY * (j + 1) + SZ * (k + 1);
}

struct Coef {
  double cx, cy, cz, diag;
};

__device__ inline double point(const Coef& s, double c, double w, double e, double sv, double n,
                               double b, double t) {
  return __dmul_rn(s.diag, c) - __dmul_rn(s.cx, w + e) - __dmul_rn(s.cy, sv + n) -
         __dmul_rn(s.cz, b + t);
}

template <int PX>
struct V {
  double v[PX];
};
template <int PX>
__device__ inline V<PX> load(const double* p) {
  V<PX> r;
  if constexpr (PX == 1) {
    r.v[0] = __ldg(p);
  } else {
#pragma unroll
    for (int q = 0; q < PX / 2; ++q) {
      const double2 t = __ldg(reinterpret_cast<const double2*>(p) + q);
      r.v[2 * q] = t.x;
      r.v[2 * q + 1] = t.y;
    }
  }
  return r;
}
template <int PX>
__device__ inline void store(double* p, const V<PX>& x) {
  if constexpr (PX == 1) {
    *p = x.v[0];
  } else {
#pragma unroll
    for (int q = 0; q < PX / 2; ++q)
      reinterpret_cast<double2*>(p)[q] = make_double2(x.v[2 * q], x.v[2 * q + 1]);
  }
}

// kStencil false: out = u (centre only, the shape's own ceiling). kRuntime: the strides are
// the kernel's arguments (as halo3d's Layout has them), else the compile-time SY, SZ.
template <int TX, int TY, int T, int PX, bool kStencil, bool kRuntime = false>
__global__ void __launch_bounds__(TX* TY)
    shaped(const double* __restrict__ u, double* __restrict__ out, Coef s, long sy, long sz) {
  if constexpr (!kRuntime) sy = SY, sz = SZ;
  const int i = (blockIdx.x * TX + threadIdx.x) * PX;
  const int j = blockIdx.y * TY + threadIdx.y;
  const int k0 = blockIdx.z * T;
  const long base = (i + 4) + sy * (j + 1) + sz * (k0 + 1);
  const double* p = u + base;
  if constexpr (!kStencil) {
    V<PX> c[T];
#pragma unroll
    for (int g = 0; g < T; ++g) c[g] = load<PX>(p + g * sz);
#pragma unroll
    for (int g = 0; g < T; ++g) store<PX>(out + base + g * sz, c[g]);
  } else {
    V<PX> col[T + 2], ym[T], yp[T];
    double xm[T], xp[T];
#pragma unroll
    for (int g = 0; g < T + 2; ++g) col[g] = load<PX>(p + (g - 1) * sz);
#pragma unroll
    for (int g = 0; g < T; ++g) {
      const double* q = p + g * sz;
      xm[g] = __ldg(q - 1);
      xp[g] = __ldg(q + PX);
      ym[g] = load<PX>(q - sy);
      yp[g] = load<PX>(q + sy);
    }
#pragma unroll
    for (int g = 0; g < T; ++g) {
      V<PX> o;
#pragma unroll
      for (int x = 0; x < PX; ++x) {
        const double w = x == 0 ? xm[g] : col[g + 1].v[x > 0 ? x - 1 : 0];
        const double e = x == PX - 1 ? xp[g] : col[g + 1].v[x < PX - 1 ? x + 1 : 0];
        o.v[x] =
            point(s, col[g + 1].v[x], w, e, ym[g].v[x], yp[g].v[x], col[g].v[x], col[g + 2].v[x]);
      }
      store<PX>(out + base + g * sz, o);
    }
  }
}

__global__ void copy_flat(const double2* __restrict__ u, double2* __restrict__ out, long n2) {
  constexpr int U = 4;
  const long b = long(blockIdx.x) * blockDim.x * U + threadIdx.x;
  double2 v[U];
#pragma unroll
  for (int q = 0; q < U; ++q) {
    const long k = b + q * blockDim.x;
    if (k < n2) v[q] = u[k];
  }
#pragma unroll
  for (int q = 0; q < U; ++q) {
    const long k = b + q * blockDim.x;
    if (k < n2) out[k] = v[q];
  }
}

// The probe's buffers and its timer.
struct Probe {
  const double* u;
  double* out;
  Timer timer;
};

template <int TX, int TY, int T, int PX, bool kStencil, bool kRuntime = false>
void run_shaped(Probe& pr, const double* ref, unsigned long long* bad) {
  static_assert(N % (TX * PX) == 0 && N % TY == 0 && N % T == 0, "shape must tile 512^3");
  const dim3 grid(N / (TX * PX), N / TY, N / T), block(TX, TY);
  const Coef s{1.1, 1.3, 0.7, 6.2};
  auto k = shaped<TX, TY, T, PX, kStencil, kRuntime>;
  cudaFuncAttributes fa{};
  CK(cudaFuncGetAttributes(&fa, k));
  CK(cudaMemset(pr.out, 0, PAD * sizeof(double)));
  const double ms = pr.timer.median_ms([&] { k<<<grid, block>>>(pr.u, pr.out, s, SY, SZ); });
  char name[64];
  std::snprintf(name, sizeof name, "%s %dx%d T%d PX%d%s", kStencil ? "st7 " : "copy", TX, TY, T, PX,
                kRuntime ? " runtime strides" : "");
  if (kStencil && ref) report_mismatch(pr.out, ref, PAD, bad, "the reference");
  pr.timer.report(name, ms, 16.0 * N * N * N, fa.numRegs);
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %d SMs, L2 %d MB; 512^3 fp64, padded %ld doubles; median of %d\n", prop.name,
              prop.multiProcessorCount, prop.l2CacheSize >> 20, PAD, reps);
  double *u, *out, *ref;
  unsigned long long* bad;
  CK(cudaMalloc(&u, PAD * sizeof(double)));
  CK(cudaMalloc(&out, PAD * sizeof(double)));
  CK(cudaMalloc(&ref, PAD * sizeof(double)));
  CK(cudaMalloc(&bad, sizeof *bad));
  fill<<<1024, 256>>>(u, PAD);
  Probe pr{u, out, {}};
  pr.timer.reps = reps;
  const double pad_bytes = 16.0 * PAD;

  auto memcpy_row = [&] {
    const double ms = pr.timer.median_ms(
        [&] { CK(cudaMemcpyAsync(out, u, PAD * sizeof(double), cudaMemcpyDeviceToDevice)); });
    pr.timer.report("cudaMemcpy (padded field)", ms, pad_bytes, 0);
    return pad_bytes / ms * 1e-6;
  };
  pr.timer.copy_gbs = memcpy_row();
  {
    const long n2 = PAD / 2;
    const int blocks = int((n2 + 256 * 4 - 1) / (256 * 4));
    const double ms = pr.timer.median_ms([&] {
      copy_flat<<<blocks, 256>>>(reinterpret_cast<const double2*>(u),
                                 reinterpret_cast<double2*>(out), n2);
    });
    cudaFuncAttributes fa{};
    CK(cudaFuncGetAttributes(&fa, copy_flat));
    pr.timer.report("copy kernel flat double2 x4", ms, pad_bytes, fa.numRegs);
  }
  // Reference: tile3d's shape and loads.
  {
    const dim3 grid(N / 64, N / 4, N / 4), block(64, 4);
    shaped<64, 4, 4, 1, true><<<grid, block>>>(u, ref, Coef{1.1, 1.3, 0.7, 6.2}, SY, SZ);
    CK(cudaDeviceSynchronize());
  }
  run_shaped<64, 4, 4, 1, false>(pr, nullptr, bad);
  run_shaped<32, 4, 4, 2, false>(pr, nullptr, bad);
  run_shaped<128, 1, 4, 4, false>(pr, nullptr, bad);
  run_shaped<64, 4, 1, 2, false>(pr, nullptr, bad);
  run_shaped<64, 4, 4, 1, true>(pr, ref, bad);
  run_shaped<32, 8, 4, 1, true>(pr, ref, bad);
  run_shaped<32, 4, 4, 2, true>(pr, ref, bad);
  run_shaped<64, 4, 4, 2, true>(pr, ref, bad);
  run_shaped<32, 8, 4, 2, true>(pr, ref, bad);
  run_shaped<64, 2, 4, 2, true>(pr, ref, bad);
  run_shaped<32, 4, 2, 2, true>(pr, ref, bad);
  run_shaped<64, 4, 2, 2, true>(pr, ref, bad);
  run_shaped<32, 4, 8, 2, true>(pr, ref, bad);
  run_shaped<64, 4, 8, 1, true>(pr, ref, bad);
  run_shaped<32, 8, 8, 1, true>(pr, ref, bad);
  run_shaped<32, 4, 8, 1, true>(pr, ref, bad);
  run_shaped<64, 4, 8, 2, true>(pr, ref, bad);
  run_shaped<64, 2, 8, 2, true>(pr, ref, bad);
  run_shaped<128, 1, 4, 4, true>(pr, ref, bad);
  run_shaped<64, 2, 4, 4, true>(pr, ref, bad);
  run_shaped<128, 2, 2, 4, true>(pr, ref, bad);
  run_shaped<64, 4, 2, 4, true>(pr, ref, bad);
  run_shaped<128, 1, 1, 4, true>(pr, ref, bad);
  run_shaped<128, 2, 1, 2, true>(pr, ref, bad);
  run_shaped<256, 1, 1, 2, true>(pr, ref, bad);
  run_shaped<64, 4, 1, 1, true>(pr, ref, bad);
  run_shaped<64, 4, 4, 1, true, true>(pr, ref, bad);
  run_shaped<64, 4, 8, 2, true, true>(pr, ref, bad);
  run_shaped<64, 4, 4, 2, true, true>(pr, ref, bad);
  run_shaped<32, 4, 8, 2, true, true>(pr, ref, bad);
  memcpy_row();
  CK(cudaFree(u));
  CK(cudaFree(out));
  CK(cudaFree(ref));
  CK(cudaFree(bad));
  return 0;
}
