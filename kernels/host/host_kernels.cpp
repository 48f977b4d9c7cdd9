// Host backend: OpenMP loops around the shared point updates.
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <string>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include <unistd.h>

#include "host_loops.hpp"
#include "host_setup.hpp"
#include "kernels.hpp"
#include "point_ops.hpp"
#include "timing.hpp"

namespace halo3d {
namespace {

using namespace host;  // the loops (host_loops.hpp)

class HostKernels final : public HostSetupKernels<TypedKernels<HostKernels>>, public DeviceTimer {
 public:
  std::string name() const override { return "host"; }
  std::string device_name() const override {
    return "CPU (" + std::to_string(thread_count()) + " OpenMP threads)";
  }
  bool device_memory_is_remote() const override { return false; }
  std::size_t available_memory() const override { return host_available_memory(); }

  void* raw_allocate(std::size_t n, Memory) override {
    // 64-byte aligned, zeroed; first touch in parallel places pages near the threads.
    const std::size_t bytes = ((n + 63) / 64) * 64;
    auto* p = static_cast<char*>(std::aligned_alloc(64, bytes ? bytes : 64));
    if (!p) throw std::bad_alloc();
    const std::size_t chunk = 1 << 19;
#pragma omp parallel for schedule(static)
    for (std::size_t b = 0; b < bytes; b += chunk)
      std::memset(p + b, 0, std::min(chunk, bytes - b));
    return p;
  }
  void raw_deallocate(void* p, Memory) noexcept override { std::free(p); }
  void copy_bytes(void* dst, const void* src, std::size_t n, Lane) override {
    // In parallel, as the kernels run: one thread's memcpy is no ceiling for them.
    const std::size_t chunk = 1 << 19;
    auto* d = static_cast<char*>(dst);
    const auto* s = static_cast<const char*>(src);
#pragma omp parallel for schedule(static)
    for (std::size_t b = 0; b < n; b += chunk) std::memcpy(d + b, s + b, std::min(chunk, n - b));
  }

  // The point lambdas capture by value: the stencil is then a local copy that stores to
  // the fields cannot alias, so its coefficients stay in registers across the loop. Each
  // stencil sweep is compiled for constant and for variable coefficients (compiled_for, made
  // inside the point's lambda, where the compiler sees the cleared weights).
  void apply(const Layout& l, const Stencil& s, const Region& r, const double* u, double* out,
             int slot, Lane) override {
    // Vectorised for constant coefficients only: the variable apply ran slower vectorised
    // (128^3, 2-core VM: 5.4 -> 7.3 ms; the smoothing step gained) and keeps the scalar loop.
    if (s.variable())
      apply_t<false>(l, s, r, u, out, slot);
    else
      apply_t<true>(l, s, r, u, out, slot);
  }

  void jacobi(const Layout& l, const Stencil& s, const Region& r, const double* f, const double* u,
              double* unew, int slot, Lane) override {
    with_coefficients(s, [&](auto kind) {
      constexpr Coefficients C = decltype(kind)::value;
      const auto sy = l.sy(), sz = l.sz();
      const double inv_diag = 1.0 / s.diag;
      add(slot, for_rows(l, r, [=](std::ptrdiff_t c0, int n, DD acc) {
            return dd_sum_run(c0, n, acc, [=](std::ptrdiff_t c) {
              const double res =
                  ops::jacobi_point(f, u, unew, c, sy, sz, compiled_for<C>(s), inv_diag);
              return ops::mul(res, res);
            });
          }));
    });
  }

  void heat(const Layout& l, const Stencil& s, const Region& r, double alpha_dt, const double* u,
            double* unew, Lane) override {
    with_coefficients(s, [&](auto kind) {
      constexpr Coefficients C = decltype(kind)::value;
      const auto sy = l.sy(), sz = l.sz();
      for_rows(l, r, [=](std::ptrdiff_t c0, int n, DD acc) {
        each_point(c0, n, [=](std::ptrdiff_t c) {
          unew[c] = ops::heat_point(u, c, sy, sz, compiled_for<C>(s), alpha_dt);
        });
        return acc;
      });
    });
  }

  void convert(const Layout& l, const double* in, float* out) override { convert_t(l, in, out); }
  void convert(const Layout& l, const float* in, double* out, const double* with,
               int slot) override {
    if (slot == kNoReduction) return convert_t(l, in, out);
    add(slot, for_rows(l, Region::whole(l), [=](std::ptrdiff_t c0, int n, DD acc) {
          return dd_sum_run(c0, n, acc, [=](std::ptrdiff_t c) {
            out[c] = double(in[c]);
            return ops::mul(with[c], out[c]);
          });
        }));
  }

 private:
  friend class TypedKernels<HostKernels>;
  // One implementation per operation for both scalar types (see TypedKernels); the host
  // has one queue, so lanes are not used.
  template <bool kConstant>
  void apply_t(const Layout& l, const Stencil& s, const Region& r, const double* u, double* out,
               int slot) {
    const auto sy = l.sy(), sz = l.sz();
    const auto point = [=](std::ptrdiff_t c) {
      if constexpr (kConstant)
        return ops::apply_point(u, c, sy, sz, compiled_for<Coefficients::constant>(s));
      else
        return ops::apply_point(u, c, sy, sz, s);
    };
    if (slot == kNoReduction) {
      for_rows(l, r, [=](std::ptrdiff_t c0, int n, DD acc) {
        each_point(c0, n, [=](std::ptrdiff_t c) { out[c] = point(c); });
        return acc;
      });
      return;
    }
    add(slot, for_rows(l, r, [=](std::ptrdiff_t c0, int n, DD acc) {
          return dd_sum_run(c0, n, acc, [=](std::ptrdiff_t c) {
            out[c] = point(c);
            return ops::mul(u[c], out[c]);
          });
        }));
  }
  template <class T>
  void residual_t(const Layout& l, const Stencil& s, const Region& r, const T* f, const T* u,
                  T* res, int slot, Lane) {
    with_coefficients(s, [&](auto kind) {
      constexpr Coefficients C = decltype(kind)::value;
      const auto sy = l.sy(), sz = l.sz();
      sweep_blocks(l, r, slot, point_block([=](std::ptrdiff_t c) {
                     return ops::residual_point(f, u, res, c, sy, sz, compiled_for<C>(s));
                   }));
    });
  }

  template <class T, class U>
  void smooth_t(const Layout& l, const Stencil& s, const Region& r, double cd, double cr,
                const T* f, U u, U d_in, T* d_out, T* unew, int slot, Lane) {
    // The four cases of the optional directions as separate loops.
    const bool in = ops::given(d_in);
    if (in && d_out) return smooth_d<true, true>(l, s, r, cd, cr, f, u, d_in, d_out, unew, slot);
    if (in) return smooth_d<true, false>(l, s, r, cd, cr, f, u, d_in, d_out, unew, slot);
    if (d_out) return smooth_d<false, true>(l, s, r, cd, cr, f, u, d_in, d_out, unew, slot);
    smooth_d<false, false>(l, s, r, cd, cr, f, u, d_in, d_out, unew, slot);
  }
  template <bool kIn, bool kOut, class T, class U>
  void smooth_d(const Layout& l, const Stencil& s, const Region& r, double cd, double cr,
                const T* f, U u, U d_in, T* d_out, T* unew, int slot) {
    with_coefficients(s, [&](auto kind) {
      sweep_blocks(l, r, slot,
                   SmoothBlock<T, kIn, kOut, U, decltype(kind)::value>{f, u, d_in, d_out, unew,
                                                                       l.sy(), l.sz(), s, cd, cr});
    });
  }

  // Runs block over region r; the points' terms are summed into slot, or not at all (the
  // unread scratch buffer's stores and the terms are then dead code).
  template <class Block>
  void sweep_blocks(const Layout& l, const Region& r, int slot, const Block& block) {
    if (slot == kNoReduction) {
      for_rows(l, r, [=](std::ptrdiff_t c0, int n, DD acc) {
        each_block(c0, n, block);
        return acc;
      });
      return;
    }
    add(slot, for_rows(l, r, [=](std::ptrdiff_t c0, int n, DD acc) {
          return dd_sum_blocks(c0, n, acc, block);
        }));
  }

  template <class T>
  void restrict_t(const Transfer& t, const T* fine, T* coarse) {
    if (t.od && t.span == 4)
      restrict_od_s<4>(t, fine, coarse);
    else if (t.od)
      restrict_od_s<3>(t, fine, coarse);
    else if (t.span == 4)
      restrict_s<4>(t, fine, coarse);
    else
      restrict_s<3>(t, fine, coarse);
  }
  // Operator-dependent weights (Transfer::od), ops::restrict_od's sums: each thread takes
  // coarse rows (j, k) and, for each fine row of their y-z spans, makes every fine point's
  // two terms (toward the coarse point above it and the one at or below it) in one pass along
  // the row, then each coarse point's row sum from them. Summing each coarse point's S^3 terms
  // on its own, indices and all, cost a third of a V-cycle with these weights (128^3, one
  // core).
  template <int S, class T>
  void restrict_od_s(const Transfer& t, const T* fine, T* coarse) {
    const Layout& l = t.coarse;
    if (l.nx == 0 || l.ny == 0 || l.nz == 0) return;  // a rank that holds no coarse point
    const std::ptrdiff_t n = std::ptrdiff_t(t.fine.padded_size());
    const ops::OdSpan s0 = ops::od_span<S>(t, 0, 0), s1 = ops::od_span<S>(t, 0, l.nx - 1);
    const int x0 = s0.first, nx = s1.first + s1.count - x0;  // the fine x the rows read
    // Coarse point i's row sum adds terms[pick[S i + a]], a < S: terms holds the row's points'
    // terms, toward the point above at 2x and toward the one at or below at 2x + 1, and a 0
    // last for the slots past a span's count (adding 0 leaves the sum's bits as they were).
    std::vector<int> pick(S * std::size_t(l.nx));
    for (int i = 0; i < l.nx; ++i) {
      const ops::OdSpan sx = ops::od_span<S>(t, 0, i);
      for (int a = 0; a < S; ++a)
        pick[std::size_t(S * i + a)] =
            a < sx.count ? 2 * (sx.first + a - x0) + (a < sx.below ? 0 : 1) : 2 * nx;
    }
#pragma omp parallel
    {
      std::vector<T> terms(2 * std::size_t(nx) + 1, T(0)), plane(std::size_t(l.nx)),
          total(std::size_t(l.nx));
#pragma omp for collapse(2) schedule(static)
      for (int k = 0; k < l.nz; ++k)
        for (int j = 0; j < l.ny; ++j) {
          const ops::OdSpan sy = ops::od_span<S>(t, 1, j), sz = ops::od_span<S>(t, 2, k);
          std::fill(total.begin(), total.end(), T(0));
          for (int c = 0; c < sz.count; ++c) {
            std::fill(plane.begin(), plane.end(), T(0));
            for (int b = 0; b < sy.count; ++b) {
              const std::ptrdiff_t row = t.fine.at(x0, sy.first + b, sz.first + c);
              const float *tx = t.od + row, *ty = tx + n, *tz = ty + n;
              const T* f = fine + row;
              // od_wzy's weights, without its branches (the sides are the row's).
              const ops::OdSideLine<T> wy = ops::od_side_line<T>(sy, b),
                                       wz = ops::od_side_line<T>(sz, c);
              T* tm = terms.data();
#pragma omp simd
              for (int x = 0; x < nx; ++x) {
                const T wzy = ops::mul(wz.lo + ops::mul(wz.slope, T(tz[x])),
                                       wy.lo + ops::mul(wy.slope, T(ty[x])));
                tm[2 * x] = ops::mul(ops::mul(wzy, T(tx[x])), f[x]);
                tm[2 * x + 1] = ops::mul(ops::mul(wzy, T(1) - T(tx[x])), f[x]);
              }
              for (int i = 0; i < l.nx; ++i) {
                const int* p = pick.data() + std::size_t(S) * std::size_t(i);
                T line = 0;
                for (int a = 0; a < S; ++a) line += tm[p[a]];
                plane[std::size_t(i)] += line;
              }
            }
            for (int i = 0; i < l.nx; ++i) total[std::size_t(i)] += plane[std::size_t(i)];
          }
          T* out = coarse + l.at(0, j, k);
          const T scale = weights_of(t, T()).scale;
          for (int i = 0; i < l.nx; ++i) out[i] = ops::mul(scale, total[std::size_t(i)]);
        }
    }
  }
  // Each thread marches its coarse rows (j) up the coarse planes, keeping the x-y parts of
  // the last four fine planes (ops::restrict_plane) in a ring, as CUDA's restrict_march: a
  // fine plane's part is computed once for the two coarse planes that read it. Computing
  // every coarse point's S^3 terms itself ran at 11% of one core's copy (256^3, the GPU
  // machine's Xeon, PERFORMANCE.md).
  template <int S, class T>
  void restrict_s(const Transfer& t, const T* fine, T* coarse) {
    const Layout& l = t.coarse;
#pragma omp parallel
    {
      std::vector<T> ring(4 * std::size_t(l.nx));
#pragma omp for schedule(static)
      for (int j = 0; j < l.ny; ++j) {
        int done = INT_MIN;  // the highest fine plane whose part is in the ring
        for (int k = 0; k < l.nz; ++k) {
          const int first = ops::restrict_plane_at(t, k, 0);
          const int last = ops::restrict_plane_at(t, k, S - 1);
          for (int z = std::max(first, done + 1); z <= last; ++z) {
            T* part = ring.data() + (z & 3) * std::size_t(l.nx);
            for (int i = 0; i < l.nx; ++i) part[i] = ops::restrict_plane<S>(t, fine, i, j, z);
          }
          done = std::max(done, last);
          const T* parts[S];
          for (int c = 0; c < S; ++c)
            parts[c] = ring.data() + (ops::restrict_plane_at(t, k, c) & 3) * std::size_t(l.nx);
          T* out = coarse + l.at(0, j, k);
          for (int i = 0; i < l.nx; ++i) {
            T p[S];
            for (int c = 0; c < S; ++c) p[c] = parts[c][i];
            out[i] = ops::restrict_z<S>(t, p, k);
          }
        }
      }
    }
  }
  template <class T>
  void prolong_t(const Transfer& t, const T* coarse, T* fine) {
    if (t.od)
      prolong_rows(t, fine, [&](int j, int k) { return ops::prolong_od_row(t, coarse, j, k); });
    else
      prolong_rows(t, fine, [&](int j, int k) { return ops::prolong_row(t, coarse, j, k); });
  }
  // Each fine row's y-z part once (row_of(j, k): trilinear or Transfer::od's), then its points.
  template <class T, class RowOf>
  void prolong_rows(const Transfer& t, T* fine, const RowOf& row_of) {
    const Layout& l = t.fine;
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 0; k < l.nz; ++k)
      for (int j = 0; j < l.ny; ++j) {
        const auto r = row_of(j, k);
        T* row = fine + l.at(0, j, k);
#pragma omp simd
        for (int i = 0; i < l.nx; ++i) ops::prolong_point(t, r, row, i);
      }
  }

  template <class T>
  void smooth_start_t(const Layout& l, const Stencil& s, double cr, const T* b, T* x) {
    for_rows(l, Region::whole(l), [=](std::ptrdiff_t c0, int n, DD acc) {
      each_point(c0, n, [=](std::ptrdiff_t c) { ops::smooth_start_point(b, x, c, s, cr); });
      return acc;
    });
  }

  // X: x's scalar type, T or (mixed) a float x widened into a double y.
  template <class X, class T>
  void axpby_t(const Layout& l, double a, const X* x, double b, T* y) {
    const T ta = T(a), tb = T(b);
    for_rows(l, Region::whole(l), [=](std::ptrdiff_t c0, int n, DD acc) {
      each_point(c0, n, [=](std::ptrdiff_t c) { y[c] = ops::axpby_point(ta, T(x[c]), tb, y[c]); });
      return acc;
    });
  }

  template <class T>
  void dense_solve_t(const Layout& l, const T* m, const T* b, T* x) {
    const int n = int(l.interior_size());  // a coarsest level: too few rows for threads
    for (int i = 0; i < n; ++i) x[ops::interior_point(l, i)] = ops::dense_row(l, m, b, i);
  }

  // The product in the wider of X and Y: float for two floats, double for double and float.
  template <class X, class Y>
  void dot_t(const Layout& l, const X* x, const Y* y, int slot) {
    using P = decltype(X() * Y());
    add(slot, for_rows(l, Region::whole(l), [=](std::ptrdiff_t c0, int n, DD acc) {
          return dd_sum_run(c0, n, acc,
                            [=](std::ptrdiff_t c) { return double(ops::mul(P(x[c]), P(y[c]))); });
        }));
  }

  // kNarrow: the branch out of the point loop, which stays vectorisable.
  template <bool kNarrow>
  void cg_update_t(const Layout& l, double alpha, const double* p, const double* ap, double* x,
                   double* r, int slot, float* r_float) {
    add(slot, for_rows(l, Region::whole(l), [=](std::ptrdiff_t c0, int n, DD acc) {
          return dd_sum_run(c0, n, acc, [=](std::ptrdiff_t c) {
            x[c] += ops::mul(alpha, p[c]);
            r[c] -= ops::mul(alpha, ap[c]);
            if constexpr (kNarrow) r_float[c] = float(r[c]);
            return ops::mul(r[c], r[c]);
          });
        }));
  }

  template <class In, class Out>
  void convert_t(const Layout& l, const In* in, Out* out) {
    for_rows(l, Region::whole(l), [=](std::ptrdiff_t c0, int n, DD acc) {
      each_point(c0, n, [=](std::ptrdiff_t c) { out[c] = Out(in[c]); });
      return acc;
    });
  }

  template <class T>
  void pack_t(const Layout& l, Face f, const T* u, T* buf, Lane) {
    int na, nb;
    ops::face_dims(l, f, na, nb);
#pragma omp parallel for schedule(static)
    for (int b = 0; b < nb; ++b)
      for (int a = 0; a < na; ++a)
        buf[a + std::ptrdiff_t(na) * b] = u[ops::face_point(l, f, a, b, false)];
  }
  template <class T>
  void unpack_t(const Layout& l, Face f, const T* buf, T* u, Lane) {
    int na, nb;
    ops::face_dims(l, f, na, nb);
#pragma omp parallel for schedule(static)
    for (int b = 0; b < nb; ++b)
      for (int a = 0; a < na; ++a)
        u[ops::face_point(l, f, a, b, true)] = buf[a + std::ptrdiff_t(na) * b];
  }
  // The boxes in BoxList order, each x fastest: the values ops::boxes_point numbers. Edges
  // and corners are a few points: threads only for boxes large enough to pay for them.
  template <class Move>
  static void each_box_point(const Layout& l, const BoxList& b, const Move& move) {
    for (int n = 0; n < b.count; ++n) {
      const Region& r = b.box[n];
      const int ni = r.i1 - r.i0, nj = r.j1 - r.j0, nk = r.k1 - r.k0;
#pragma omp parallel for collapse(2) schedule(static) if (r.size() > 4096)
      for (int k = 0; k < nk; ++k)
        for (int j = 0; j < nj; ++j) {
          const long long p0 = b.start[n] + (long long)ni * (j + (long long)nj * k);
          for (int i = 0; i < ni; ++i) move(ops::box_point(l, r, i, j, k), p0 + i);
        }
    }
  }
  template <class T>
  void pack_boxes_t(const Layout& l, const BoxList& b, const T* u, T* buf, Lane) {
    each_box_point(l, b, [=](std::ptrdiff_t c, long long p) { buf[p] = u[c]; });
  }
  template <class T>
  void unpack_boxes_t(const Layout& l, const BoxList& b, const T* buf, T* u, Lane) {
    each_box_point(l, b, [=](std::ptrdiff_t c, long long p) { u[c] = buf[p]; });
  }

 public:
  void fill(const Layout& l, const FieldGen& g, double* out) override {
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 0; k < l.nz; ++k)
      for (int j = 0; j < l.ny; ++j)
        for (int i = 0; i < l.nx; ++i) out[l.at(i, j, k)] = ops::field_point(g, l, i, j, k);
  }
  double max_abs(const Layout& l, const double* x) override {
    std::uint64_t m = 0;
#pragma omp parallel for collapse(2) schedule(static) reduction(max : m)
    for (int k = 0; k < l.nz; ++k)
      for (int j = 0; j < l.ny; ++j)
        for (int i = 0; i < l.nx; ++i) m = std::max(m, ops::magnitude_bits(x[l.at(i, j, k)]));
    return ops::from_magnitude_bits(m);
  }

  void cg_update(const Layout& l, double alpha, const double* p, const double* ap, double* x,
                 double* r, int slot, float* r_float) override {
    if (r_float)
      cg_update_t<true>(l, alpha, p, ap, x, r, slot, r_float);
    else
      cg_update_t<false>(l, alpha, p, ap, x, r, slot, r_float);
  }

  // Host work is synchronous: nothing to order or wait for.
  void fence(Lane, Lane) override {}
  void synchronize(Lane) override {}
  void synchronize() override {}
  void read_slots(int n, DD* out) override {
    for (int i = 0; i < n; ++i) {
      out[i] = slots_[i];
      slots_[i] = DD{};
    }
  }

  double elapsed_ms(const std::function<void()>& enqueue) override {
    const auto t0 = std::chrono::steady_clock::now();
    enqueue();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }

 private:
  void add(int slot, DD v) {
    if (slot != kNoReduction) slots_[slot] = ops::dd_add(slots_[slot], v);
  }
  DD slots_[kReductionSlots];
};

}  // namespace

std::size_t host_available_memory() {
  // MemAvailable counts reclaimable caches too, as the kernel's own estimate does.
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  while (in >> key >> kib) {
    if (key == "MemAvailable:") return kib * 1024;
    in.ignore(256, '\n');
  }
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? std::size_t(pages) * std::size_t(page) : 0;
}

std::unique_ptr<Kernels> make_host_kernels() { return std::make_unique<HostKernels>(); }

}  // namespace halo3d
