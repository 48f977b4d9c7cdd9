// Host kernel micro-benchmark: the fastest of R calls of each host kernel on one n^3 box
// (coarse box nc^3 for the transfers), in ns per fine point, and a checksum of the outputs
// that two builds of the kernels must print identically. The minimum, not the median: on a
// shared machine it is the run least disturbed by the other processes. Not built by CMake:
//   g++ -O3 -DNDEBUG -ffp-contract=off -fopenmp -std=c++17 -Ikernels -Isrc/base \
//       bench/host/kernels_micro.cpp kernels/host/host_kernels.cpp -o kernels_micro
//   OMP_NUM_THREADS=1 ./kernels_micro 48 32 40     # n nc R
// (add -march=native to compare HALO3D_HOST_NATIVE; compile another revision's
// host_kernels.cpp the same way to compare the two.)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>

#include "kernels.hpp"
#include "point_ops.hpp"
using namespace halo3d;
static double tmin(int reps, const std::function<void()>& f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(
        best,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}
int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 64, nc = argc > 2 ? atoi(argv[2]) : n * 2 / 3;
  int reps = argc > 3 ? atoi(argv[3]) : 30;
  auto k = make_host_kernels();
  Layout l{n, n, n}, lc{nc, nc, nc};
  std::size_t N = l.padded_size(), Nc = lc.padded_size();
  std::vector<double> a(N), b(N), c(N), d(N), e(N), ca(Nc);
  for (std::size_t i = 0; i < N; ++i) {
    a[i] = ops::random_point(1, i);
    b[i] = ops::random_point(2, i);
    d[i] = ops::random_point(3, i);
  }
  for (std::size_t i = 0; i < Nc; ++i) ca[i] = ops::random_point(4, i);
  Stencil s = Stencil::laplacian(1.0 / (n + 1), 1.0 / (n + 1), 1.0 / (n + 1));
  Region r = Region::whole(l);
  Transfer t;
  t.fine = l;
  t.coarse = lc;
  for (int x = 0; x < 3; ++x) {
    t.nf[x] = n;
    t.nc[x] = nc;
  }
  t.scale = 0.3;
  std::vector<double> ptab[3], rtab[3];
  ops::transfer_tables(t, ptab, rtab);
  for (int x = 0; x < 3; ++x) {
    t.ptab[x] = ptab[x].data();
    t.rtab[x] = rtab[x].data();
  }
  double pts = double(n) * n * n;
  auto row = [&](const char* name, double ms) {
    printf("%-14s %8.3f ms %6.2f ns/pt\n", name, ms, ms * 1e6 / pts);
  };
  row("copy", tmin(reps, [&] { k->copy(c.data(), a.data(), N, Lane::interior); }));
  row("apply",
      tmin(reps, [&] { k->apply(l, s, r, a.data(), c.data(), kNoReduction, Lane::interior); }));
  row("apply_dot", tmin(reps, [&] { k->apply(l, s, r, a.data(), c.data(), 0, Lane::interior); }));
  row("residual", tmin(reps, [&] {
        k->residual(l, s, r, b.data(), a.data(), c.data(), kNoReduction, Lane::interior);
      }));
  row("smooth00", tmin(reps, [&] {
        k->smooth(l, s, r, 0.0, 0.1, b.data(), a.data(), nullptr, nullptr, c.data(), kNoReduction,
                  Lane::interior);
      }));
  row("smooth11", tmin(reps, [&] {
        k->smooth(l, s, r, 0.5, 0.1, b.data(), a.data(), d.data(), e.data(), c.data(), kNoReduction,
                  Lane::interior);
      }));
  row("smooth10dot", tmin(reps, [&] {
        k->smooth(l, s, r, 0.5, 0.1, b.data(), a.data(), d.data(), nullptr, c.data(), 1,
                  Lane::interior);
      }));
  row("cg_update", tmin(reps, [&] {
        k->cg_update(l, 1e-3, a.data(), b.data(), c.data(), e.data(), 2, nullptr);
      }));
  row("dot", tmin(reps, [&] { k->dot(l, a.data(), b.data(), 3); }));
  row("axpby", tmin(reps, [&] { k->axpby(l, 0.5, a.data(), 0.25, c.data()); }));
  row("restrict", tmin(reps, [&] { k->restrict_to(t, a.data(), ca.data()); }));
  row("prolong", tmin(reps, [&] { k->prolong_add(t, ca.data(), c.data()); }));
  DD out[4];
  k->read_slots(4, out);
  double chk = 0;
  for (std::size_t i = 0; i < N; i += 7) chk += c[i] + e[i];
  for (std::size_t i = 0; i < Nc; i += 3) chk += ca[i];
  printf("check %.17g %.17g %.17g\n", chk, out[0].hi, out[2].hi);
}
